//! Serving an rmcp `ServerHandler` over Streamable HTTP inside axum, behind our guard: the same
//! stack serves the knowledge-graph endpoint and the conformance fixture server.
//!
//! Both protocol generations are served by rmcp's transport: `initialize`-based revisions
//! (2024-11-05 … 2025-11-25) get sessions (`Mcp-Session-Id`, GET stream, DELETE), and
//! 2026-07-28 requests (`server/discover`, per-request `_meta`) are answered statelessly with
//! JSON. Host/Origin checks are done by the guard (parsed once), so the transport's own are off.

pub mod guard;
pub mod rejection;
pub mod session_binding;
pub mod session_limits;

use crate::auth::Authenticator;
use crate::origin_policy::OriginPolicy;
use axum::Router;
use guard::Guard;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use session_binding::{BindingSessionManager, SessionBindings};
use session_limits::SessionLimits;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The paths the endpoint answers on (`/mcp/rpc` is an alias for older clients).
pub const MCP_PATHS: [&str; 2] = ["/mcp", "/mcp/rpc"];

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
}

/// A router serving `handler_factory`'s handlers at [`MCP_PATHS`]. The router has no state of
/// its own, so it merges into any application router.
pub fn mcp_router<H, S>(
    handler_factory: impl Fn() -> H + Send + Sync + 'static,
    settings: McpHttpSettings,
) -> Router<S>
where
    H: ServerHandler + Send + 'static,
    S: Clone + Send + Sync + 'static,
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
    let service = StreamableHttpService::new(
        move || Ok(handler_factory()),
        session_manager.clone(),
        transport_config,
    );
    let guard = Arc::new(Guard {
        origins: settings.origins,
        authenticator: settings.authenticator,
        bindings,
        sessions: session_manager,
        limits: settings.sessions,
        max_request_body_bytes: settings.max_request_body_bytes,
    });
    let guarded = guard::Guarded {
        inner: service,
        guard,
    };
    let mut router = Router::new();
    for path in MCP_PATHS {
        router = router.route_service(path, guarded.clone());
    }
    router
}
