//! Binds each MCP session to the caller that created it: a session id presented with another
//! token (or anonymously, for a token's session) is treated as unknown (404), so a leaked id
//! is useless without its token.
//!
//! The guard records the binding when `initialize` answers with a new `Mcp-Session-Id`;
//! [`BindingSessionManager`] wraps rmcp's in-memory session manager and forgets the binding
//! whenever a session closes (DELETE, idle timeout, shutdown).

use crate::auth::CallerKey;
use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Session id → the caller that created it.
#[derive(Debug, Default)]
pub struct SessionBindings {
    owners: Mutex<HashMap<SessionId, CallerKey>>,
}

impl SessionBindings {
    pub fn bind(&self, session_id: &str, owner: CallerKey) {
        self.owners
            .lock()
            .expect("session bindings lock")
            .insert(Arc::from(session_id), owner);
    }

    pub fn owner(&self, session_id: &str) -> Option<CallerKey> {
        self.owners
            .lock()
            .expect("session bindings lock")
            .get(session_id)
            .copied()
    }

    pub fn forget(&self, session_id: &str) {
        self.owners
            .lock()
            .expect("session bindings lock")
            .remove(session_id);
    }

    pub fn len(&self) -> usize {
        self.owners.lock().expect("session bindings lock").len()
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
