//! Binds each MCP session to the caller that created it: a session id presented with another
//! token (or anonymously, for a token's session) is treated as unknown (404), so a leaked id
//! is useless without its token.
//!
//! The guard records the binding when `initialize` answers with a new `Mcp-Session-Id`;
//! [`BindingSessionManager`] wraps rmcp's in-memory session manager and forgets the binding
//! whenever a session closes (DELETE, idle timeout, eviction, shutdown).
//!
//! The bindings also bound what one caller can hold (`session_limits`): when each session was
//! last used, so a caller's least recently used session is closed past the per-caller cap, and
//! whether it was used at all after `initialize`, so sessions opened and abandoned (the way to
//! pile up sessions cheaply) are closed after a short time rather than the idle timeout.

use crate::auth::CallerKey;
use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::LockUnpoisoned;

/// Whose sessions count together under `max_sessions_per_caller`: a token's sessions, or the
/// anonymous sessions of one peer address (all anonymous callers share one [`CallerKey`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SessionOwner {
    pub caller: CallerKey,
    /// Set for anonymous callers only.
    pub peer: Option<IpAddr>,
}

impl SessionOwner {
    pub fn new(caller: CallerKey, peer: Option<IpAddr>) -> Self {
        let peer = match caller {
            CallerKey::Anonymous => peer,
            CallerKey::Token(_) => None,
        };
        Self { caller, peer }
    }
}

/// One live session as the guard tracks it.
#[derive(Debug)]
struct Binding {
    owner: SessionOwner,
    created_at: Instant,
    last_used_at: Instant,
    /// Whether anything but `notifications/initialized` came after `initialize`.
    used: bool,
}

/// Session id → the caller that created it, when it was made and last used.
#[derive(Debug, Default)]
pub struct SessionBindings {
    sessions: Mutex<HashMap<SessionId, Binding>>,
}

impl SessionBindings {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Binding>> {
        self.sessions.lock_unpoisoned()
    }

    pub fn bind(&self, session_id: &str, owner: SessionOwner) {
        let now = Instant::now();
        self.lock().insert(
            Arc::from(session_id),
            Binding {
                owner,
                created_at: now,
                last_used_at: now,
                used: false,
            },
        );
    }

    pub fn owner(&self, session_id: &str) -> Option<CallerKey> {
        self.lock()
            .get(session_id)
            .map(|binding| binding.owner.caller)
    }

    /// Records a request in the session; `counts_as_use` is false for the
    /// `notifications/initialized` that completes the handshake.
    pub fn touch(&self, session_id: &str, counts_as_use: bool) {
        if let Some(binding) = self.lock().get_mut(session_id) {
            binding.last_used_at = Instant::now();
            binding.used |= counts_as_use;
        }
    }

    /// Whether the session was never used and `unused_timeout` has passed since `initialize`.
    pub fn is_expired_unused(&self, session_id: &str, unused_timeout: Duration) -> bool {
        self.lock()
            .get(session_id)
            .is_some_and(|binding| !binding.used && binding.created_at.elapsed() >= unused_timeout)
    }

    /// Every session never used within `unused_timeout` of its `initialize`.
    pub fn expired_unused(&self, unused_timeout: Duration) -> Vec<SessionId> {
        self.lock()
            .iter()
            .filter(|(_, binding)| !binding.used && binding.created_at.elapsed() >= unused_timeout)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// `owner`'s least recently used sessions beyond the newest `max` (to close).
    pub fn over_the_cap(&self, owner: SessionOwner, max: usize) -> Vec<SessionId> {
        let sessions = self.lock();
        let mut owned: Vec<(&SessionId, Instant)> = sessions
            .iter()
            .filter(|(_, binding)| binding.owner == owner)
            .map(|(id, binding)| (id, binding.last_used_at))
            .collect();
        if owned.len() <= max {
            return Vec::new();
        }
        owned.sort_by_key(|(_, last_used_at)| *last_used_at);
        let excess = owned.len() - max;
        owned
            .into_iter()
            .take(excess)
            .map(|(id, _)| id.clone())
            .collect()
    }

    pub fn forget(&self, session_id: &str) {
        self.lock().remove(session_id);
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// rmcp's [`LocalSessionManager`] plus binding clean-up on close.
#[derive(Debug)]
pub struct BindingSessionManager {
    inner: LocalSessionManager,
    bindings: Arc<SessionBindings>,
}

impl BindingSessionManager {
    pub fn new(
        bindings: Arc<SessionBindings>,
        idle_timeout: Duration,
        sse_retry: Option<Duration>,
    ) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle_timeout);
        inner.session_config.sse_retry = sse_retry;
        Self { inner, bindings }
    }
}

type Inner = LocalSessionManager;

impl SessionManager for BindingSessionManager {
    type Error = <Inner as SessionManager>::Error;
    type Transport = <Inner as SessionManager>::Transport;

    fn create_session(
        &self,
    ) -> impl Future<Output = Result<(SessionId, Self::Transport), Self::Error>> + Send {
        self.inner.create_session()
    }

    fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<ServerJsonRpcMessage, Self::Error>> + Send {
        self.inner.initialize_session(id, message)
    }

    fn has_session(
        &self,
        id: &SessionId,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send {
        self.inner.has_session(id)
    }

    fn close_session(
        &self,
        id: &SessionId,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.bindings.forget(id);
        self.inner.close_session(id)
    }

    fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.inner.create_stream(id, message)
    }

    fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.accept_message(id, message)
    }

    fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.inner.create_standalone_stream(id)
    }

    fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.inner.resume(id, last_event_id)
    }

    fn restore_session(
        &self,
        id: SessionId,
    ) -> impl Future<Output = Result<RestoreOutcome<Self::Transport>, Self::Error>> + Send {
        self.inner.restore_session(id)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
