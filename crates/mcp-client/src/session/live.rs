//! `LiveSession`: one connected, initialized MCP session, and `connect`, which makes one —
//! choosing the transport, the lifecycle (`lifecycle.rs`: a remembered protocol version skips
//! the `server/discover` probe; otherwise rmcp's `Auto` mode probes and falls back to
//! `initialize`; a probe answered with only versions of the `initialize` generation is followed
//! by `initialize` with one of them) and explaining failures precisely (a stdio child's exit
//! status and stderr tail).

use crate::UpstreamError;
use crate::capabilities::{ServerDescription, describe_server};
use crate::config::McpClientConfig;
use crate::error::from_process::{spawn_error, with_detail};
use crate::error::from_rmcp::ErrorContext;
use crate::handler::{ElicitationResponder, SessionHandler};
use crate::latency::LatencyWindow;
use crate::notifications::NotificationRouter;
use crate::server::{UpstreamEndpoint, UpstreamServer};
use crate::session::lifecycle::{Lifecycle, initialize_fallback, lifecycle_mode};
use crate::session::listen::{self, ListChangeListener};
use crate::transport::call_notifications::RoutingCallNotifications;
use crate::transport::http_measured::{ForgottenSession, MeasuredHttpClient, OversizedAnswers};
use crate::transport::legacy_sse::LegacySseTransport;
use crate::transport::stdio::StdioTransport;
use crate::transport::stdio_process::{ProcessGroup, ProcessReport};
use crate::transport::streamable_http;
use crate::transport::websocket::WebSocketTransport;
use crate::url_policy::UrlPolicy;
use rmcp::model::ProtocolVersion;
use rmcp::service::{
    ClientCacheConfig, ClientInitializeError, ClientLifecycleMode, ClientServiceExt, Peer,
    RoleClient, RunningService,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::TransportKind;
use tokio_util::sync::{CancellationToken, DropGuard};

pub(crate) struct ConnectParams<'a> {
    pub server: &'a UpstreamServer,
    pub config: &'a McpClientConfig,
    pub http_client: &'a reqwest::Client,
    pub policy: &'a UrlPolicy,
    pub lifecycle: Lifecycle,
    pub router: Arc<NotificationRouter>,
    pub elicitation: Option<Arc<dyn ElicitationResponder>>,
    /// Declare sampling (see `McpClientBuilder::forward_sampling`).
    pub sampling: bool,
    /// The server's latency window, kept by the session for its requests.
    pub latency: Arc<LatencyWindow>,
}

pub(crate) struct LiveSession {
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, SessionHandler>>>,
    pub peer: Peer<RoleClient>,
    pub router: Arc<NotificationRouter>,
    pub description: ServerDescription,
    pub process: Option<Arc<ProcessGroup>>,
    /// Our transports' own end-of-connection signal (rmcp's loop notices a moment later).
    transport_closed: Option<CancellationToken>,
    /// Streamable HTTP: requests whose answer was cut for size.
    pub oversized: Option<OversizedAnswers>,
    /// Streamable HTTP: ends every answer stream still open when the session goes (see
    /// `http_measured`: rmcp's worker would otherwise wait on a silent one forever).
    _http_streams: Option<DropGuard>,
    pub fingerprint: u64,
    /// Where the session goes, for error messages (see [`ErrorContext`]).
    pub errors: ErrorContext,
    /// Where this session's request latencies go (its server's window).
    pub latency: Arc<LatencyWindow>,
    /// The `subscriptions/listen` stream of a 2026-07-28 session (stopped on close or drop).
    listener: Mutex<Option<ListChangeListener>>,
    last_used: Mutex<Instant>,
    in_flight: AtomicUsize,
}

impl std::fmt::Debug for LiveSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSession")
            .field("protocol_version", &self.description.protocol_version)
            .field("in_flight", &self.in_flight.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Counts a call as in flight while alive (idle reaping skips busy sessions).
pub(crate) struct InFlightGuard {
    session: Arc<LiveSession>,
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.session.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.session.touch();
    }
}

impl LiveSession {
    pub fn is_alive(&self) -> bool {
        !self.peer.is_transport_closed()
            && !self
                .transport_closed
                .as_ref()
                .is_some_and(CancellationToken::is_cancelled)
    }

    /// Our transport's own end-of-connection signal (stdio, legacy SSE, WebSocket).
    pub fn transport_closed_signal(&self) -> Option<CancellationToken> {
        self.transport_closed.clone()
    }

    pub fn touch(&self) {
        if let Ok(mut last_used) = self.last_used.lock() {
            *last_used = Instant::now();
        }
    }

    pub fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .map(|last_used| last_used.elapsed())
            .unwrap_or_default()
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    pub fn begin_call(self: &Arc<Self>) -> InFlightGuard {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.touch();
        InFlightGuard {
            session: self.clone(),
        }
    }

    /// Why the connection is gone, as precisely as known.
    pub fn failure_detail(&self) -> Option<ProcessReport> {
        self.process.as_ref().and_then(|process| process.describe())
    }

    /// [`Self::failure_detail`], once a dying child has been reaped.
    pub async fn settled_failure_detail(&self) -> Option<ProcessReport> {
        match &self.process {
            Some(process) => process.describe_settled().await,
            None => None,
        }
    }

    /// Ends the session: cancels rmcp's service loop, which closes the transport (for stdio:
    /// stdin, SIGTERM, SIGKILL of the process group).
    pub async fn close(&self, limit: Duration) {
        if let Ok(mut listener) = self.listener.lock() {
            listener.take();
        }
        // The upstream forgets our subscriptions with the session.
        self.router.watches.end_all();
        let service = self.service.lock().await.take();
        if let Some(mut service) = service {
            match service.close_with_timeout(limit).await {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => {
                    if let Some(process) = &self.process {
                        process.kill_now();
                    }
                }
            }
        }
    }
}

/// Connects and completes the handshake (the caller bounds the time).
///
/// Two answers to `server/discover` lead at once to a second connection with a plain
/// `initialize` (see `PROTOCOL.md`): under `Auto`, something other than a discover result
/// (some servers answer unknown methods with `{}`: they are legacy, `initialize` offers our
/// default); and, under any lifecycle that probes, a discover result or
/// `UNSUPPORTED_PROTOCOL_VERSION` error listing no version we asked for but one of the
/// `initialize` generation we know (`initialize` offers the newest such).
pub(crate) async fn connect(params: ConnectParams<'_>) -> Result<LiveSession, UpstreamError> {
    let fallback = match connect_once(&params, &params.lifecycle).await {
        Ok(live) => return Ok(live),
        Err(Attempt::Failed(error)) => return Err(error),
        Err(Attempt::ProbeNotUnderstood) => Lifecycle::LegacyInitialize,
        Err(Attempt::InitializeListed(version)) => Lifecycle::Listed(version),
    };
    match connect_once(&params, &fallback).await {
        Ok(live) => Ok(live),
        Err(Attempt::Failed(error)) => Err(error),
        // A plain `initialize` probes nothing; neither answer can come back from it.
        Err(Attempt::ProbeNotUnderstood | Attempt::InitializeListed(_)) => {
            Err(UpstreamError::Initialize {
                target: params.server.display_target(),
                reason: "it answered neither server/discover nor initialize".into(),
            })
        }
    }
}

enum Attempt {
    Failed(UpstreamError),
    /// Under `Auto`, `server/discover` was answered with something else than a discover result.
    ProbeNotUnderstood,
    /// `server/discover` listed none of the versions we asked for, but this one of the
    /// `initialize` generation.
    InitializeListed(ProtocolVersion),
}

impl From<UpstreamError> for Attempt {
    fn from(error: UpstreamError) -> Self {
        Attempt::Failed(error)
    }
}

async fn connect_once(
    params: &ConnectParams<'_>,
    lifecycle: &Lifecycle,
) -> Result<LiveSession, Attempt> {
    let errors = ErrorContext::new(
        params.server.display_target(),
        params.config.max_tool_response_bytes,
    );
    let (mode, handler_version) = lifecycle_mode(lifecycle);
    let handler = SessionHandler::new(
        handler_version,
        params.router.clone(),
        params.elicitation.clone(),
        params.sampling,
    );
    let (served, extras) = serve_endpoint(params, handler, mode, &errors).await?;
    let service = match served {
        Ok(service) => service,
        Err(error) => {
            return Err(handshake_failure(
                params,
                lifecycle,
                &errors,
                extras.process.as_deref(),
                error,
            )
            .await);
        }
    };
    Ok(open_session(params, service, extras, errors).await)
}

/// The outcome of the handshake on a freshly opened transport.
type Served = Result<RunningService<RoleClient, SessionHandler>, ClientInitializeError>;

/// What a transport leaves beside the running service, kept by the session.
#[derive(Default)]
struct TransportExtras {
    /// A stdio upstream's child process group.
    process: Option<Arc<ProcessGroup>>,
    /// Our own transports' end-of-connection signal.
    transport_closed: Option<CancellationToken>,
    /// Streamable HTTP: the log of answers cut for size.
    oversized: Option<OversizedAnswers>,
    /// Streamable HTTP: cancels the attempt's answer streams when dropped — with the attempt
    /// (a session start that timed out) or with the session.
    http_streams: Option<DropGuard>,
}

/// Opens the transport the server's endpoint names and runs the handshake over it. Errors here
/// are the transport's own (spawn, URL policy, connect); a handshake failure is in `Served`.
async fn serve_endpoint(
    params: &ConnectParams<'_>,
    handler: SessionHandler,
    mode: ClientLifecycleMode,
    errors: &ErrorContext,
) -> Result<(Served, TransportExtras), Attempt> {
    let limit = params.config.max_tool_response_bytes;
    let mut extras = TransportExtras::default();
    let remote = match &params.server.endpoint {
        UpstreamEndpoint::Stdio(command) => {
            let (transport, group) =
                StdioTransport::spawn(&params.server.name, command, &params.config.stdio, limit)
                    .map_err(|error| spawn_error(&command.command, &error))?;
            extras.process = Some(group);
            extras.transport_closed = Some(transport.closed_signal());
            let transport = RoutingCallNotifications::new(transport, params.router.clone());
            return Ok((handler.serve_with_lifecycle(transport, mode).await, extras));
        }
        UpstreamEndpoint::Remote(remote) => remote,
    };
    let served = match remote.transport {
        TransportKind::StreamableHttp => {
            let router = params.router.clone();
            let measured = MeasuredHttpClient {
                inner: params.http_client.clone(),
                oversized: OversizedAnswers::default(),
                ended: CancellationToken::new(),
                forgotten: ForgottenSession::new(move || router.watches.end_all()),
            };
            extras.oversized = Some(measured.oversized.clone());
            extras.http_streams = Some(measured.ended.clone().drop_guard());
            let transport = streamable_http::connect(
                remote,
                &measured,
                params.policy,
                limit,
                params.config.max_concurrent_calls_per_server + 4,
            )?;
            let transport = RoutingCallNotifications::new(transport, params.router.clone());
            handler.serve_with_lifecycle(transport, mode).await
        }
        TransportKind::Sse => {
            let transport =
                LegacySseTransport::connect(remote, params.http_client, params.policy, errors)
                    .await?;
            extras.transport_closed = Some(transport.closed_signal());
            let transport = RoutingCallNotifications::new(transport, params.router.clone());
            handler.serve_with_lifecycle(transport, mode).await
        }
        TransportKind::Websocket => {
            let transport = WebSocketTransport::connect(remote, params.policy, errors).await?;
            extras.transport_closed = Some(transport.closed_signal());
            let transport = RoutingCallNotifications::new(transport, params.router.clone());
            handler.serve_with_lifecycle(transport, mode).await
        }
        TransportKind::Stdio => {
            return Err(UpstreamError::Config(crate::server::ServerConfigError::new(
                "transport",
                "stdio needs a command",
            ))
            .into());
        }
    };
    Ok((served, extras))
}

/// Explains a failed handshake: a `server/discover` probe the server did not understand, or
/// whose answer lists only versions of the `initialize` generation, is retried with
/// `initialize`; anything else fails, with a stdio child's exit and stderr tail — unless the
/// server answered the handshake: its answer is the reason, and the child's end is then our
/// own doing (the failed handshake closed the transport).
async fn handshake_failure(
    params: &ConnectParams<'_>,
    lifecycle: &Lifecycle,
    errors: &ErrorContext,
    process: Option<&ProcessGroup>,
    error: ClientInitializeError,
) -> Attempt {
    if matches!(error, ClientInitializeError::ExpectedInitResult(_))
        && *lifecycle == Lifecycle::Auto
    {
        tracing::info!(server = %params.server.name, "server/discover was not understood; using initialize");
        return Attempt::ProbeNotUnderstood;
    }
    if let ClientInitializeError::NoCompatibleProtocolVersion {
        server_supported, ..
    } = &error
        && let Some(version) = initialize_fallback(server_supported)
    {
        tracing::info!(server = %params.server.name, %version, "server/discover listed only versions with initialize; using initialize");
        return Attempt::InitializeListed(version);
    }
    let answered = matches!(
        error,
        ClientInitializeError::NoCompatibleProtocolVersion { .. }
            | ClientInitializeError::JsonRpcError(_)
    );
    let error = errors.handshake_failure(error);
    let detail = match process {
        Some(process) if !answered => process.describe_settled().await,
        _ => None,
    };
    Attempt::Failed(match detail {
        Some(report) => with_detail(error, &report),
        None => error,
    })
}

/// Turns an initialized service into a session: rmcp's response cache off, the
/// server's description, and the `subscriptions/listen` stream where the server has one.
async fn open_session(
    params: &ConnectParams<'_>,
    service: RunningService<RoleClient, SessionHandler>,
    extras: TransportExtras,
    errors: ErrorContext,
) -> LiveSession {
    let peer = service.peer().clone();
    peer.set_response_cache_config(ClientCacheConfig::disabled())
        .await;
    let description = describe_server(&peer);
    let listener = listen::start(&peer, &params.router);
    LiveSession {
        service: tokio::sync::Mutex::new(Some(service)),
        peer,
        router: params.router.clone(),
        description,
        process: extras.process,
        transport_closed: extras.transport_closed,
        oversized: extras.oversized,
        _http_streams: extras.http_streams,
        fingerprint: params.server.connection_fingerprint(),
        errors,
        latency: params.latency.clone(),
        listener: Mutex::new(listener),
        last_used: Mutex::new(Instant::now()),
        in_flight: AtomicUsize::new(0),
    }
}
