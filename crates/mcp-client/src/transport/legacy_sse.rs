//! Legacy HTTP+SSE (protocol 2024-11-05), written as an rmcp `Transport` because rmcp 3.x has
//! no client for it: GET an event stream, wait for its `endpoint` event, then POST every
//! message to that endpoint; answers arrive as `message` events on the stream.
//!
//! The endpoint is checked like any outbound URL and must stay on the SSE URL's scheme, host
//! and port, so a server cannot redirect our POSTs (and their credentials) elsewhere.

use super::framing::{response_too_large_message, top_level_id};
use super::http_client::compressed_answer;
use super::sse_events::{SseEventReader, SseItem};
use crate::UpstreamError;
use crate::error::causes::{Cause, status_cause};
use crate::error::from_rmcp::ErrorContext;
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
    errors: ErrorContext,
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
        errors: &ErrorContext,
    ) -> Result<Self, UpstreamError> {
        let max_message_bytes = errors.limit;
        policy.check_url(&endpoint.url, &["http", "https"])?;
        let headers: http::HeaderMap = super::streamable_http::header_map(&endpoint.headers)?
            .into_iter()
            .collect();
        let response = open_event_stream(endpoint, http_client, &headers, errors).await?;
        let body = StreamReader::new(response.bytes_stream().map_err(std::io::Error::other));
        let mut events = SseEventReader::new(tokio::io::BufReader::new(body), max_message_bytes);
        let endpoint_url = await_endpoint_event(&mut events, endpoint, policy, errors).await?;

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
                errors: errors.clone(),
            }),
            stream_closed,
        })
    }
}

/// The GET that opens the event stream; refused unless it answers 2xx with
/// `text/event-stream`.
async fn open_event_stream(
    endpoint: &RemoteEndpoint,
    http_client: &reqwest::Client,
    headers: &http::HeaderMap,
    errors: &ErrorContext,
) -> Result<reqwest::Response, UpstreamError> {
    let mut request = http_client
        .get(endpoint.url.clone())
        .header(http::header::ACCEPT, "text/event-stream")
        .headers(headers.clone());
    if let Some(api_key) = &endpoint.api_key {
        request = request.bearer_auth(api_key);
    }
    let response = request
        .send()
        .await
        .map_err(|error| errors.connect_failure(&error))?;
    check_status(response.status(), errors, Phase::Connecting)?;
    if let Some(reason) = compressed_answer(response.headers()) {
        return Err(UpstreamError::Connect {
            target: errors.target.clone(),
            reason,
        });
    }
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    if !content_type.starts_with("text/event-stream") {
        return Err(UpstreamError::Connect {
            target: errors.target.clone(),
            reason: format!(
                "it answered with content type '{content_type}', not text/event-stream"
            ),
        });
    }
    Ok(response)
}

/// Reads the stream up to its `endpoint` event (other events before it are skipped) and
/// returns the URL to POST messages to, checked against the URL policy.
async fn await_endpoint_event<R: tokio::io::AsyncBufRead + Unpin>(
    events: &mut SseEventReader<R>,
    endpoint: &RemoteEndpoint,
    policy: &UrlPolicy,
    errors: &ErrorContext,
) -> Result<Url, UpstreamError> {
    loop {
        match events.next_event().await {
            Ok(Some(SseItem::Event { event, data })) if event == "endpoint" => {
                return resolve_endpoint(&endpoint.url, data.trim(), policy);
            }
            Ok(Some(_)) => continue,
            Ok(None) => {
                return Err(UpstreamError::Connect {
                    target: errors.target.clone(),
                    reason: "its event stream ended before the endpoint event".into(),
                });
            }
            Err(error) => {
                return Err(UpstreamError::Connect {
                    target: errors.target.clone(),
                    reason: format!("reading its event stream failed: {error}"),
                });
            }
        }
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
                // As for a stdio line: the rest of a 1 GiB or endless event is never drained;
                // the session ends here, marked dead before its caller hears why, so the next
                // call starts a new one instead of meeting the closing stream.
                stream_closed.cancel();
                tracing::warn!(max_message_bytes, "an SSE event exceeded the size cap");
                let refusal = top_level_id(&prefix)
                    .map(|id| response_too_large_message(id, max_message_bytes))
                    .and_then(|refusal| serde_json::from_value(refusal).ok());
                if let Some(message) = refusal {
                    let _ = sender.send(message).await;
                }
                break;
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
            let response = request.send().await.map_err(|error| {
                // A connection that could not be opened carried nothing: `Connect` (not sent).
                match target.errors.connect_failure(&error) {
                    UpstreamError::Connect { target, reason } if !error.is_connect() => {
                        UpstreamError::ConnectionLost(format!("{target}: {reason}"))
                    }
                    other => other,
                }
            })?;
            if response.status() == http::StatusCode::NOT_FOUND {
                // The server forgot this session: end the stream so the session restarts.
                stream_closed.cancel();
            }
            check_status(response.status(), &target.errors, Phase::InSession)
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

/// When an HTTP status was answered.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The GET of the event stream.
    Connecting,
    /// A POST of a message.
    InSession,
}

fn check_status(
    status: http::StatusCode,
    errors: &ErrorContext,
    phase: Phase,
) -> Result<(), UpstreamError> {
    if status.is_success() {
        return Ok(());
    }
    let target = errors.target.clone();
    if phase == Phase::InSession && status == http::StatusCode::NOT_FOUND {
        return Err(UpstreamError::ConnectionLost(format!(
            "{target}: it no longer knows the session (HTTP 404)"
        )));
    }
    Err(match status_cause(status.as_u16(), "") {
        Cause::Auth(reason, challenge) => UpstreamError::AuthRequired {
            target,
            reason,
            challenge,
        },
        Cause::Reason(reason) if phase == Phase::Connecting => {
            UpstreamError::Connect { target, reason }
        }
        Cause::Reason(reason) => UpstreamError::ConnectionLost(format!("{target}: {reason}")),
        Cause::Upstream(error) => error,
        Cause::TooLarge => UpstreamError::ResponseTooLarge {
            limit: errors.limit,
        },
    })
}
