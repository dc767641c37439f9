//! WebSocket transport: one JSON-RPC message per text frame, written as an rmcp `Transport`
//! over tokio-tungstenite (rmcp 3.x has none).
//!
//! The connection is made to an address the URL policy resolved and checked (never to a name
//! the WebSocket library would resolve on its own), with `TCP_NODELAY`, the message size cap,
//! and TLS (rustls with the platform verifier) for `wss`.
//!
//! The upgrade asks for the `mcp` subprotocol, which the Python SDK's server insists on; a
//! server that answers with none gets a second upgrade without it. Any other mismatch is
//! reported with what to change.

use super::framing::{response_too_large_message, top_level_id};
use crate::UpstreamError;
use crate::error::causes::{Cause, io_reason, status_cause};
use crate::error::from_rmcp::ErrorContext;
use crate::server::RemoteEndpoint;
use crate::url_policy::UrlPolicy;
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex as StdMutex};
use tokio::net::TcpStream;
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::error::{ProtocolError, SubProtocolError};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;
use url::Host;

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Requests sent and not yet answered: an oversized answer that kills the connection can still
/// be reported precisely when exactly one request was waiting.
type InFlight = Arc<StdMutex<HashSet<RequestId>>>;

pub struct WebSocketTransport {
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    writer: Arc<Mutex<SplitSink<Socket, Message>>>,
    in_flight: InFlight,
    reader_task: JoinHandle<()>,
    /// Cancelled as soon as the connection ends (before rmcp's loop notices).
    closed: CancellationToken,
}

impl std::fmt::Debug for WebSocketTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketTransport").finish_non_exhaustive()
    }
}

impl WebSocketTransport {
    pub(crate) async fn connect(
        endpoint: &RemoteEndpoint,
        policy: &UrlPolicy,
        errors: &ErrorContext,
    ) -> Result<Self, UpstreamError> {
        let max_message_bytes = errors.limit;
        let url = &endpoint.url;
        policy.check_url(url, &["ws", "wss"])?;
        let failed = |reason: String| UpstreamError::Connect {
            target: errors.target.clone(),
            reason,
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| failed("the URL has no port".into()))?;
        let addresses: Vec<SocketAddr> = match url.host() {
            Some(Host::Ipv4(address)) => vec![SocketAddr::new(address.into(), port)],
            Some(Host::Ipv6(address)) => vec![SocketAddr::new(address.into(), port)],
            Some(Host::Domain(name)) => match policy.resolve_checked(name, port).await {
                Ok(addresses) => addresses,
                Err(unresolved @ crate::url_policy::UrlPolicyError::Unresolved { .. }) => {
                    return Err(failed(unresolved.to_string()));
                }
                Err(refused) => return Err(refused.into()),
            },
            None => return Err(failed("the URL has no host".into())),
        };
        let request = upgrade_request(endpoint, &errors.target)?;
        let config = WebSocketConfig::default()
            .max_message_size(Some(max_message_bytes))
            .max_frame_size(Some(max_message_bytes));
        let handshake = |subprotocol: Option<&'static str>| {
            let mut request = request.clone();
            if let Some(subprotocol) = subprotocol {
                request.headers_mut().insert(
                    http::header::SEC_WEBSOCKET_PROTOCOL,
                    http::HeaderValue::from_static(subprotocol),
                );
            }
            open(url.scheme() == "wss", &addresses, request, config)
        };
        // Servers of the Python SDK answer with the `mcp` subprotocol and fail a client that
        // did not ask for it; others answer with none, which a client that asked must refuse
        // (RFC 6455): ask, and ask again without it when the server names none.
        let socket = match handshake(Some(SUBPROTOCOL)).await {
            Err(Opening::Handshake(WsError::Protocol(
                ProtocolError::SecWebSocketSubProtocolError(SubProtocolError::NoSubProtocol),
            ))) => handshake(None).await,
            other => other,
        }
        .map_err(|failure| failure.into_error(errors))?;

        let (writer, reader) = socket.split();
        let (sender, incoming) = mpsc::channel(64);
        let in_flight = InFlight::default();
        let closed = CancellationToken::new();
        let reader_task = tokio::spawn(read_frames(
            reader,
            sender,
            in_flight.clone(),
            max_message_bytes,
            closed.clone(),
        ));
        Ok(Self {
            incoming,
            writer: Arc::new(Mutex::new(writer)),
            in_flight,
            reader_task,
            closed,
        })
    }
}

/// The WebSocket subprotocol MCP servers answer with (the Python SDK's `websocket_server`).
const SUBPROTOCOL: &str = "mcp";

/// The upgrade request with the configured headers and API key (no subprotocol yet).
fn upgrade_request(
    endpoint: &RemoteEndpoint,
    target: &str,
) -> Result<http::Request<()>, UpstreamError> {
    let mut request = endpoint
        .url
        .as_str()
        .into_client_request()
        .map_err(|error| UpstreamError::Connect {
            target: target.to_owned(),
            reason: format!("invalid WebSocket request: {error}"),
        })?;
    for (name, value) in super::streamable_http::header_map(&endpoint.headers)? {
        request.headers_mut().insert(name, value);
    }
    if let Some(api_key) = &endpoint.api_key {
        let value = http::HeaderValue::try_from(format!("Bearer {api_key}")).map_err(|_| {
            UpstreamError::Config(crate::server::ServerConfigError::new(
                "api_key",
                "is not a valid bearer token",
            ))
        })?;
        request
            .headers_mut()
            .insert(http::header::AUTHORIZATION, value);
    }
    Ok(request)
}

/// Why opening a WebSocket failed: before the upgrade (in words) or in it.
enum Opening {
    Connect(String),
    Handshake(WsError),
}

impl Opening {
    fn into_error(self, errors: &ErrorContext) -> UpstreamError {
        let failed = |reason: String| UpstreamError::Connect {
            target: errors.target.clone(),
            reason,
        };
        let error = match self {
            Opening::Connect(reason) => return failed(reason),
            Opening::Handshake(error) => error,
        };
        match error {
            WsError::Http(response) => match status_cause(response.status().as_u16(), "") {
                Cause::Auth(reason, challenge) => UpstreamError::AuthRequired {
                    challenge,
                    target: errors.target.clone(),
                    reason,
                },
                Cause::Reason(reason) => failed(format!("the WebSocket upgrade: {reason}")),
                Cause::Upstream(error) => error,
                Cause::TooLarge => UpstreamError::ResponseTooLarge {
                    limit: errors.limit,
                },
            },
            WsError::Io(error) => failed(
                io_reason(&error)
                    .map(str::to_owned)
                    .unwrap_or_else(|| error.to_string()),
            ),
            WsError::Tls(error) => failed(format!("the TLS handshake failed: {error}")),
            WsError::Protocol(ProtocolError::SecWebSocketSubProtocolError(mismatch)) => {
                failed(format!(
                    "the WebSocket upgrade: the server's subprotocol does not match ({mismatch}); \
                     Switchboard asks for '{SUBPROTOCOL}' and also accepts none: make the server \
                     answer with one of those"
                ))
            }
            other => failed(format!("the WebSocket handshake failed: {other}")),
        }
    }
}

/// Connects to the first address that accepts and upgrades the connection.
async fn open(
    tls: bool,
    addresses: &[SocketAddr],
    request: http::Request<()>,
    config: WebSocketConfig,
) -> Result<Socket, Opening> {
    let tcp = connect_first(addresses).await.map_err(Opening::Connect)?;
    tcp.set_nodelay(true)
        .map_err(|error| Opening::Connect(format!("setting TCP_NODELAY failed: {error}")))?;
    let connector = if tls {
        Connector::Rustls(tls_config().map_err(Opening::Connect)?)
    } else {
        Connector::Plain
    };
    let (socket, _response) = tokio_tungstenite::client_async_tls_with_config(
        request,
        tcp,
        Some(config),
        Some(connector),
    )
    .await
    .map_err(Opening::Handshake)?;
    Ok(socket)
}

/// The first address that accepts; else why the last one did not, in words.
async fn connect_first(addresses: &[SocketAddr]) -> Result<TcpStream, String> {
    let mut last_error = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(error) => {
                let reason = io_reason(&error)
                    .map(str::to_owned)
                    .unwrap_or_else(|| error.to_string());
                last_error = Some(if addresses.len() > 1 {
                    format!("{address}: {reason}")
                } else {
                    reason
                });
            }
        }
    }
    Err(last_error.unwrap_or_else(|| "no address to connect to".into()))
}

fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_platform_verifier())
        .map_err(|error| format!("TLS set-up failed: {error}"))?
        .with_no_client_auth();
    Ok(Arc::new(config))
}

async fn read_frames(
    mut reader: SplitStream<Socket>,
    sender: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    in_flight: InFlight,
    max_message_bytes: usize,
    closed: CancellationToken,
) {
    let _closed_on_exit = closed.clone().drop_guard();
    while let Some(frame) = reader.next().await {
        let text = match frame {
            Ok(Message::Text(text)) => text.as_str().to_owned(),
            Ok(Message::Binary(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            Ok(Message::Close(_)) => break,
            Ok(_) => continue,
            Err(WsError::Capacity(error)) => {
                tracing::warn!(%error, max_message_bytes, "the WebSocket server sent an oversized message; closing");
                // Mark the connection dead before the caller hears why.
                closed.cancel();
                let waiting: Vec<RequestId> = in_flight
                    .lock()
                    .map(|set| set.iter().cloned().collect())
                    .unwrap_or_default();
                if let [only] = waiting.as_slice()
                    && let Ok(id) = serde_json::to_value(only)
                    && let Ok(message) =
                        serde_json::from_value(response_too_large_message(id, max_message_bytes))
                {
                    let _ = sender.send(message).await;
                }
                break;
            }
            Err(error) => {
                tracing::info!(%error, "the WebSocket connection failed");
                break;
            }
        };
        let message: RxJsonRpcMessage<RoleClient> = match serde_json::from_str(&text) {
            Ok(message) => message,
            Err(error) => {
                let id = top_level_id(text.as_bytes());
                tracing::warn!(%error, ?id, "ignoring a WebSocket frame that is not a JSON-RPC message");
                continue;
            }
        };
        if let JsonRpcMessage::Response(response) = &message
            && let Ok(mut set) = in_flight.lock()
        {
            set.remove(&response.id);
        }
        if let JsonRpcMessage::Error(error) = &message
            && let (Some(id), Ok(mut set)) = (&error.id, in_flight.lock())
        {
            set.remove(id);
        }
        if sender.send(message).await.is_err() {
            break;
        }
    }
}

impl WebSocketTransport {
    pub(crate) fn closed_signal(&self) -> CancellationToken {
        self.closed.clone()
    }
}

impl Transport<RoleClient> for WebSocketTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        let in_flight = self.in_flight.clone();
        async move {
            if let JsonRpcMessage::Request(request) = &item
                && let Ok(mut set) = in_flight.lock()
            {
                set.insert(request.id.clone());
            }
            let text = serde_json::to_string(&item).map_err(std::io::Error::other)?;
            writer
                .lock()
                .await
                .send(Message::text(text))
                .await
                .map_err(|error| std::io::Error::new(std::io::ErrorKind::BrokenPipe, error))
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let _ = self.writer.lock().await.close().await;
        self.reader_task.abort();
        Ok(())
    }
}

impl Drop for WebSocketTransport {
    fn drop(&mut self) {
        self.reader_task.abort();
    }
}
