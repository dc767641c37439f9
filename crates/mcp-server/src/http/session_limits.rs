//! What one caller may hold at the endpoint: at most `max_sessions_per_caller` sessions (the
//! least recently used is closed when a new one would exceed it), `initialize` taken from the
//! caller's rate-limit budget, and sessions never used after `initialize` closed after
//! `unused_session_timeout` — without these one token opened 24,000 sessions (RSS 84 MB →
//! 1.36 GB), and with anonymous scopes no token was needed.

use super::session_binding::{BindingSessionManager, SessionBindings, SessionOwner};
use crate::rate_limit::RateLimiter;
use rmcp::transport::streamable_http_server::session::SessionManager;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The limits of [`super::McpHttpSettings`].
#[derive(Clone, Debug)]
pub struct SessionLimits {
    /// Sessions one caller (a token; an anonymous peer address) may hold at once.
    pub max_sessions_per_caller: usize,
    /// A session with no request but `notifications/initialized` after `initialize` is closed
    /// after this.
    pub unused_session_timeout: Duration,
    /// The budget `initialize` is taken from (the same one the handler's calls use); `None`
    /// leaves `initialize` unlimited.
    pub limiter: Option<RateLimiter>,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_sessions_per_caller: crate::config::DEFAULT_MAX_SESSIONS_PER_CALLER,
            unused_session_timeout: Duration::from_secs(
                crate::config::DEFAULT_UNUSED_SESSION_TIMEOUT_SECS,
            ),
            limiter: None,
        }
    }
}

/// Closes `owner`'s least recently used sessions beyond the cap.
pub(crate) async fn evict_over_the_cap(
    manager: &BindingSessionManager,
    bindings: &SessionBindings,
    owner: SessionOwner,
    max_sessions: usize,
) {
    for session_id in bindings.over_the_cap(owner, max_sessions) {
        tracing::info!(
            "closing a caller's least recently used MCP session (max_sessions_per_caller)"
        );
        let _ = manager.close_session(&session_id).await;
    }
}

/// Closes sessions never used after `initialize`, every so often, until `shutdown`. Without a
/// Tokio runtime (a router built outside one) only the guard's check on use applies.
pub(crate) fn spawn_unused_session_sweeper(
    manager: Arc<BindingSessionManager>,
    bindings: Arc<SessionBindings>,
    unused_timeout: Duration,
    shutdown: CancellationToken,
) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let period = (unused_timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(15));
    runtime.spawn(async move {
        let mut ticker = tokio::time::interval(period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticker.tick() => {}
                () = shutdown.cancelled() => return,
            }
            for session_id in bindings.expired_unused(unused_timeout) {
                tracing::debug!("closing an MCP session never used after initialize");
                let _ = manager.close_session(&session_id).await;
            }
        }
    });
}
