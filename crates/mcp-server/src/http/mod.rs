//! Serving an rmcp `ServerHandler` over Streamable HTTP inside axum, behind our guard: the same
//! stack serves the knowledge-graph endpoint and the conformance fixture server.
//!
//! Both protocol generations are served by rmcp's transport: `initialize`-based revisions
//! (2024-11-05 … 2025-11-25) get sessions (`Mcp-Session-Id`, GET stream, DELETE), and
//! 2026-07-28 requests (`server/discover`, per-request `_meta`) are answered statelessly with
//! JSON. Host/Origin checks are done by the guard (parsed once), so the transport's own are off.
//!
//! `/mcp/rpc` is the plain JSON-RPC front for simple clients ([`plain_rpc`]): the same handler
//! and guard, the transport in stateless mode, no `Accept` pair or session needed.

pub mod guard;
pub mod plain_rpc;
pub mod rejection;
pub mod session_binding;
pub mod session_limits;

use crate::auth::Authenticator;
use crate::origin_policy::OriginPolicy;
use axum::Router;
use guard::Guard;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use session_binding::{BindingSessionManager, SessionBindings};
use session_limits::SessionLimits;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Strict Streamable HTTP.
pub const MCP_PATH: &str = "/mcp";
/// Plain JSON-RPC 2.0 for simple clients ([`plain_rpc`]).
pub const PLAIN_RPC_PATH: &str = "/mcp/rpc";

/// Transport and guard settings of one mounted MCP endpoint.
#[derive(Debug)]
pub struct McpHttpSettings {
    pub origins: OriginPolicy,
    pub authenticator: Authenticator,
    pub session_idle_timeout: Duration,
    pub sse_keep_alive: Duration,
    /// Suggested client reconnect delay on SSE streams.
    pub sse_retry: Duration,
    pub max_request_body_bytes: usize,
    /// Sessions per caller, `initialize` under the rate limit, unused sessions closed early.
    pub sessions: SessionLimits,
    /// Cancelled at shutdown: ends every session and open stream.
    pub shutdown: CancellationToken,
    /// A scope every request must hold (403 without it); `None`: the handler checks.
    pub required_scope: Option<switchboard_core::Scope>,
}

/// A router serving `handler_factory`'s handlers at [`MCP_PATH`] and [`PLAIN_RPC_PATH`]. The
/// router has no state of its own, so it merges into any application router.
pub fn mcp_router<H, S>(
    handler_factory: impl Fn() -> H + Send + Sync + 'static,
    settings: McpHttpSettings,
) -> Router<S>
where
    H: ServerHandler + Send + 'static,
    S: Clone + Send + Sync + 'static,
{
    mcp_router_and_guard(handler_factory, settings).0
}

/// `handler_factory`'s handlers over Streamable HTTP at each of `paths` (axum path templates:
/// the handler finds the request's path in its context), behind the guard, without the plain
/// JSON-RPC front. The gateway's endpoints are mounted this way.
pub fn streamable_router_at<H, S>(
    paths: &[&str],
    handler_factory: impl Fn() -> H + Send + Sync + 'static,
    settings: McpHttpSettings,
) -> Router<S>
where
    H: ServerHandler + Send + 'static,
    S: Clone + Send + Sync + 'static,
{
    let (guarded, _) = guarded_services(handler_factory, settings);
    paths.iter().fold(Router::new(), |router, path| {
        router.route_service(path, guarded.0.clone())
    })
}

/// [`mcp_router`], and its guard, for routes beside it that must admit callers the same way
/// (the REST reads of [`crate::rest`]).
pub fn mcp_router_and_guard<H, S>(
    handler_factory: impl Fn() -> H + Send + Sync + 'static,
    settings: McpHttpSettings,
) -> (Router<S>, Arc<Guard>)
where
    H: ServerHandler + Send + 'static,
    S: Clone + Send + Sync + 'static,
{
    let ((guarded, plain), guard) = guarded_services(handler_factory, settings);
    let router = Router::new()
        .route_service(MCP_PATH, guarded)
        .route_service(PLAIN_RPC_PATH, plain);
    (router, guard)
}

/// The guarded session-mode transport and the guarded plain JSON-RPC front, and their guard.
#[allow(clippy::type_complexity)]
fn guarded_services<H>(
    handler_factory: impl Fn() -> H + Send + Sync + 'static,
    settings: McpHttpSettings,
) -> (
    (
        guard::Guarded<StreamableHttpService<H, BindingSessionManager>>,
        plain_rpc::PlainRpc<guard::Guarded<StreamableHttpService<H, NeverSessionManager>>>,
    ),
    Arc<Guard>,
)
where
    H: ServerHandler + Send + 'static,
{
    let bindings = Arc::new(SessionBindings::default());
    let transport_config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_legacy_session_mode(true)
        .with_json_response(true)
        .with_sse_keep_alive(Some(settings.sse_keep_alive))
        .with_sse_retry(Some(settings.sse_retry))
        .with_max_request_body_bytes(settings.max_request_body_bytes)
        .with_cancellation_token(settings.shutdown.child_token());
    let session_manager = Arc::new(BindingSessionManager::new(
        bindings.clone(),
        settings.session_idle_timeout,
        Some(settings.sse_retry),
    ));
    session_limits::spawn_unused_session_sweeper(
        session_manager.clone(),
        bindings.clone(),
        settings.sessions.unused_session_timeout,
        settings.shutdown.child_token(),
    );
    let handler_factory = Arc::new(handler_factory);
    let plain_factory = handler_factory.clone();
    let plain_config = transport_config.clone().with_legacy_session_mode(false);
    let service = StreamableHttpService::new(
        move || Ok(handler_factory()),
        session_manager.clone(),
        transport_config,
    );
    let stateless = StreamableHttpService::new(
        move || Ok(plain_factory()),
        Arc::new(NeverSessionManager::default()),
        plain_config,
    );
    let guard = Arc::new(Guard {
        origins: settings.origins,
        authenticator: settings.authenticator,
        bindings,
        sessions: session_manager,
        limits: settings.sessions,
        max_request_body_bytes: settings.max_request_body_bytes,
        required_scope: settings.required_scope,
    });
    let max_response_bytes = settings.max_request_body_bytes.max(16 * 1024 * 1024);
    let plain = plain_rpc::PlainRpc {
        inner: guard::Guarded {
            inner: stateless,
            guard: guard.clone(),
        },
        max_response_bytes,
    };
    let guarded = guard::Guarded {
        inner: service,
        guard: guard.clone(),
    };
    ((guarded, plain), guard)
}
