//! Legacy HTTP+SSE (protocol 2024-11-05), written as an rmcp `Transport` because rmcp 3.x has
//! no client for it: GET an event stream, wait for its `endpoint` event, then POST every
//! message to that endpoint; answers arrive as `message` events on the stream.
//!
//! The endpoint is checked like any outbound URL and must stay on the SSE URL's scheme, host
//! and port, so a server cannot redirect our POSTs (and their credentials) elsewhere.

use super::framing::{response_too_large_message, top_level_id};
use super::sse_events::{SseEventReader, SseItem};
use crate::UpstreamError;
use crate::server::RemoteEndpoint;
use crate::url_policy::UrlPolicy;
use futures::TryStreamExt;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::io::StreamReader;
use tokio_util::sync::CancellationToken;
use url::Url;

/// Where and how messages are POSTed.
#[derive(Debug)]
struct PostTarget {
    http_client: reqwest::Client,
    endpoint: Url,
    headers: http::HeaderMap,
    api_key: Option<String>,
}

pub struct LegacySseTransport {
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    target: Arc<PostTarget>,
    stream_closed: CancellationToken,
}

impl std::fmt::Debug for LegacySseTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacySseTransport")
            .field("endpoint", &self.target.endpoint.as_str())
            .finish()
    }
}

impl LegacySseTransport {
    /// Opens the event stream and waits for the `endpoint` event (the caller bounds the wait).
    pub(crate) async fn connect(
        endpoint: &RemoteEndpoint,
        http_client: &reqwest::Client,
        policy: &UrlPolicy,
        max_message_bytes: usize,
    ) -> Result<Self, UpstreamError> {
        policy.check_url(&endpoint.url, &["http", "https"])?;
        let headers: http::HeaderMap = super::streamable_http::header_map(&endpoint.headers)?
            .into_iter()
            .collect();
        let mut request = http_client
            .get(endpoint.url.clone())
            .header(http::header::ACCEPT, "text/event-stream")
            .headers(headers.clone());
        if let Some(api_key) = &endpoint.api_key {
            request = request.bearer_auth(api_key);
        }
        let response = request.send().await.map_err(|error| http_error(&error))?;
        check_status(response.status(), "GET of the event stream")?;
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("");
        if !content_type.starts_with("text/event-stream") {
            return Err(UpstreamError::Connect(format!(
                "the SSE URL answered with content type '{content_type}', not text/event-stream"
            )));
        }
        let body = StreamReader::new(response.bytes_stream().map_err(std::io::Error::other));
        let mut events = SseEventReader::new(tokio::io::BufReader::new(body), max_message_bytes);

        let endpoint_url = loop {
            match events.next_event().await {
                Ok(Some(SseItem::Event { event, data })) if event == "endpoint" => {
                    break resolve_endpoint(&endpoint.url, data.trim(), policy)?;
                }
                Ok(Some(_)) => continue,
                Ok(None) => {
                    return Err(UpstreamError::Connect(
                        "the event stream ended before its endpoint event".into(),
                    ));
                }
                Err(error) => {
                    return Err(UpstreamError::Connect(format!(
                        "reading the event stream failed: {error}"
                    )));
                }
            }
        };

        let (sender, incoming) = mpsc::channel(64);
        let stream_closed = CancellationToken::new();
        tokio::spawn(read_events(
            events,
            sender,
            stream_closed.clone(),
            max_message_bytes,
        ));
        Ok(Self {
            incoming,
            target: Arc::new(PostTarget {
                http_client: http_client.clone(),
                endpoint: endpoint_url,
                headers,
                api_key: endpoint.api_key.clone(),
            }),
            stream_closed,
        })
    }
}

/// Resolves the `endpoint` event against the SSE URL and holds it to the same origin.
pub(crate) fn resolve_endpoint(
    sse_url: &Url,
    data: &str,
    policy: &UrlPolicy,
) -> Result<Url, UpstreamError> {
    let endpoint = sse_url.join(data).map_err(|error| {
        UpstreamError::Protocol(format!("the endpoint event '{data}' is not a URL: {error}"))
    })?;
    let same_origin = endpoint.scheme() == sse_url.scheme()
        && endpoint.host_str() == sse_url.host_str()
        && endpoint.port_or_known_default() == sse_url.port_or_known_default();
    if !same_origin {
        return Err(UpstreamError::Protocol(format!(
            "the endpoint event points to '{}', outside the SSE URL's scheme, host and port",
            endpoint.origin().ascii_serialization()
        )));
    }
    policy.check_url(&endpoint, &["http", "https"])?;
    Ok(endpoint)
}

async fn read_events<R: tokio::io::AsyncBufRead + Unpin>(
    mut events: SseEventReader<R>,
    sender: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    stream_closed: CancellationToken,
    max_message_bytes: usize,
) {
    loop {
        let item = tokio::select! {
            item = events.next_event() => item,
            () = stream_closed.cancelled() => break,
        };
        let message = match item {
            Ok(Some(SseItem::Event { event, data })) if event == "message" => {
                match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&data) {
                    Ok(message) => message,
                    Err(error) => {
                        tracing::warn!(%error, "ignoring an SSE message that is not JSON-RPC");
                        continue;
                    }
                }
            }
            Ok(Some(SseItem::Event { .. })) => continue,
            Ok(Some(SseItem::Oversized { prefix })) => {
                let Some(id) = top_level_id(&prefix) else {
                    tracing::warn!(
                        max_message_bytes,
                        "dropping an oversized SSE event without a request id"
                    );
                    continue;
                };
                match serde_json::from_value(response_too_large_message(id, max_message_bytes)) {
                    Ok(message) => message,
                    Err(_) => continue,
                }
            }
            Ok(None) => break,
            Err(error) => {
                tracing::info!(%error, "the legacy SSE stream failed");
                break;
            }
        };
        if sender.send(message).await.is_err() {
            break;
        }
    }
    stream_closed.cancel();
}

impl LegacySseTransport {
    pub(crate) fn closed_signal(&self) -> CancellationToken {
        self.stream_closed.clone()
    }
}

impl Transport<RoleClient> for LegacySseTransport {
    type Error = UpstreamError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let target = self.target.clone();
        let stream_closed = self.stream_closed.clone();
        async move {
            let mut request = target
                .http_client
                .post(target.endpoint.clone())
                .headers(target.headers.clone())
                .json(&item);
            if let Some(api_key) = &target.api_key {
                request = request.bearer_auth(api_key);
            }
            let response = request.send().await.map_err(|error| http_error(&error))?;
            if response.status() == http::StatusCode::NOT_FOUND {
                // The server forgot this session: end the stream so the session restarts.
                stream_closed.cancel();
            }
            check_status(response.status(), "POST to the message endpoint")
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.stream_closed.cancel();
        Ok(())
    }
}

impl Drop for LegacySseTransport {
    fn drop(&mut self) {
        self.stream_closed.cancel();
    }
}

fn check_status(status: http::StatusCode, what: &str) -> Result<(), UpstreamError> {
    if status.is_success() {
        Ok(())
    } else if status == http::StatusCode::UNAUTHORIZED || status == http::StatusCode::FORBIDDEN {
        Err(UpstreamError::AuthRequired(format!(
            "{what} answered HTTP {status}"
        )))
    } else if status == http::StatusCode::NOT_FOUND {
        Err(UpstreamError::ConnectionLost(format!(
            "{what} answered HTTP 404 (session not found)"
        )))
    } else {
        Err(UpstreamError::Connect(format!(
            "{what} answered HTTP {status}"
        )))
    }
}

fn http_error(error: &reqwest::Error) -> UpstreamError {
    crate::error::classify_chain(error, 0)
        .unwrap_or_else(|| UpstreamError::Connect(crate::error::chain_message(error)))
}
