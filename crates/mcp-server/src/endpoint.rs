//! [`KgEndpoint`]: the knowledge-graph MCP endpoint assembled from its configuration, a token
//! verifier and the workspace graphs, ready to be mounted into the application router.

use crate::auth::{AnonymousAccess, Authenticator, TokenVerifier};
use crate::config::KgConfig;
use crate::graphs::KnowledgeGraphs;
use crate::handler::{KgServer, KgServerState};
use crate::http::session_limits::SessionLimits;
use crate::http::{McpHttpSettings, mcp_router_and_guard};
use crate::origin_policy::OriginPolicy;
use crate::rate_limit::RateLimiter;
use axum::Router;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{InvalidSetting, WorkspaceId};
use tokio_util::sync::CancellationToken;

/// Largest request body accepted at `/mcp` (the transport's own default).
pub const DEFAULT_MAX_REQUEST_BODY_BYTES: usize = 4 * 1024 * 1024;
const SSE_RETRY: Duration = Duration::from_secs(3);

#[derive(Debug)]
pub struct KgEndpoint {
    state: Arc<KgServerState>,
    settings: McpHttpSettings,
}

/// The transport and guard settings of the gateway's endpoints (`crate::gateway`): the same
/// hosts, origins, token verification and session limits as `/mcp`, its own rate limit
/// (`gateway_rate_limit_*`, which the gateway's handler shares), no anonymous access, and
/// `gateway:use` required of every request.
pub fn gateway_http_settings(
    config: &KgConfig,
    verifier: Arc<dyn TokenVerifier>,
    shutdown: CancellationToken,
) -> Result<McpHttpSettings, InvalidSetting> {
    config.validate()?;
    let origins = OriginPolicy::new(&config.allowed_hosts, &config.allowed_origins)
        .map_err(|error| InvalidSetting::new(error.setting_key(), error.to_string()))?;
    let authenticator = Authenticator::new(
        verifier,
        AnonymousAccess::Refused,
        Duration::from_secs(config.token_cache_secs),
    );
    let limiter = RateLimiter::new(
        config.gateway_rate_limit_per_minute,
        config.gateway_rate_limit_burst,
    );
    Ok(McpHttpSettings {
        origins,
        authenticator,
        session_idle_timeout: Duration::from_secs(config.session_idle_timeout_secs),
        sse_keep_alive: Duration::from_secs(config.sse_keep_alive_secs),
        sse_retry: SSE_RETRY,
        max_request_body_bytes: DEFAULT_MAX_REQUEST_BODY_BYTES,
        sessions: SessionLimits {
            max_sessions_per_caller: config.max_sessions_per_caller,
            unused_session_timeout: Duration::from_secs(config.unused_session_timeout_secs),
            limiter: Some(limiter),
        },
        shutdown,
        required_scope: Some(switchboard_core::Scope::GatewayUse),
    })
}

impl KgEndpoint {
    /// `anonymous_workspace` is the workspace served to requests without a token when
    /// `config.anonymous_scopes` grants any scope (the default workspace in the product);
    /// anonymous scopes without one are a configuration error.
    pub fn new(
        config: &KgConfig,
        verifier: Arc<dyn TokenVerifier>,
        graphs: KnowledgeGraphs,
        anonymous_workspace: Option<WorkspaceId>,
        shutdown: CancellationToken,
    ) -> Result<Self, InvalidSetting> {
        config.validate()?;
        let scopes = config.anonymous_scope_set()?;
        let anonymous = match anonymous_workspace {
            Some(workspace) => AnonymousAccess::from_scopes(scopes, workspace),
            None if scopes.is_empty() => AnonymousAccess::Refused,
            None => {
                return Err(InvalidSetting::new(
                    "anonymous_scopes",
                    "anonymous access needs a default workspace to serve, and none is known",
                ));
            }
        };
        let origins = OriginPolicy::new(&config.allowed_hosts, &config.allowed_origins)
            .map_err(|error| InvalidSetting::new(error.setting_key(), error.to_string()))?;
        let authenticator = Authenticator::new(
            verifier,
            anonymous,
            Duration::from_secs(config.token_cache_secs),
        );
        let limiter = RateLimiter::new(config.rate_limit_per_minute, config.rate_limit_burst);
        let sessions = SessionLimits {
            max_sessions_per_caller: config.max_sessions_per_caller,
            unused_session_timeout: Duration::from_secs(config.unused_session_timeout_secs),
            limiter: Some(limiter.clone()),
        };
        let state = Arc::new(KgServerState::new(graphs, limiter));
        let settings = McpHttpSettings {
            origins,
            authenticator,
            session_idle_timeout: Duration::from_secs(config.session_idle_timeout_secs),
            sse_keep_alive: Duration::from_secs(config.sse_keep_alive_secs),
            sse_retry: SSE_RETRY,
            max_request_body_bytes: DEFAULT_MAX_REQUEST_BODY_BYTES,
            sessions,
            shutdown,
            required_scope: None,
        };
        Ok(Self { state, settings })
    }

    pub fn with_max_request_body_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_request_body_bytes = bytes;
        self
    }

    /// The shared server state (graphs, rate limiter, tool catalog).
    pub fn state(&self) -> &Arc<KgServerState> {
        &self.state
    }

    /// Routes `/mcp` (Streamable HTTP), `/mcp/rpc` (plain JSON-RPC) and the REST reads
    /// (`/mcp/schema/version`, `/mcp/schema/changelog`, `/mcp/types/{name}/schema`). Starts the
    /// resource-subscription notifier, so call it inside the Tokio runtime.
    pub fn into_router<S: Clone + Send + Sync + 'static>(self) -> Router<S> {
        let state = self.state;
        state
            .subscriptions
            .clone()
            .spawn_notifier(state.graphs.subscribe(), self.settings.shutdown.clone());
        let handler_state = state.clone();
        let (router, guard) =
            mcp_router_and_guard(move || KgServer::new(handler_state.clone()), self.settings);
        router.merge(crate::rest::router(state, guard))
    }
}
