//! Session lifecycle events for observers outside this crate (the audit log): a session to an
//! upstream connected, failed to start, or closed (and why). Emitted where the session metrics
//! are counted. The handler runs inline: it must return quickly (spawn any IO).

use crate::server::UpstreamServer;
use std::sync::Arc;
use switchboard_core::{ServerId, WorkspaceId};

/// What happened to a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionEventKind {
    Connected {
        protocol_version: String,
    },
    /// Every attempt of a start failed (`code` as [`crate::UpstreamError::code`]).
    StartFailed {
        code: &'static str,
        message: String,
    },
    /// `idle`, `closed` (shutdown, server removed), `dead` (the connection dropped),
    /// `reconfigured`.
    Closed {
        reason: &'static str,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionEvent {
    pub workspace_id: WorkspaceId,
    pub server_id: ServerId,
    pub server_name: String,
    pub kind: SessionEventKind,
}

/// Receives every [`SessionEvent`] (see [`crate::McpClientBuilder::on_session_event`]).
#[derive(Clone)]
pub struct SessionEventHandler(Arc<dyn Fn(SessionEvent) + Send + Sync>);

impl SessionEventHandler {
    pub fn new(handler: impl Fn(SessionEvent) + Send + Sync + 'static) -> Self {
        Self(Arc::new(handler))
    }
}

impl std::fmt::Debug for SessionEventHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionEventHandler")
    }
}

/// A handler bound to one server, kept by its session slot.
#[derive(Clone)]
pub(crate) struct SessionObserver {
    handler: SessionEventHandler,
    workspace_id: WorkspaceId,
    server_id: ServerId,
    server_name: String,
}

impl SessionObserver {
    pub fn new(handler: SessionEventHandler, server: &UpstreamServer) -> Self {
        Self {
            handler,
            workspace_id: server.workspace_id.clone(),
            server_id: server.id.clone(),
            server_name: server.name.clone(),
        }
    }

    pub fn emit(&self, kind: SessionEventKind) {
        (self.handler.0)(SessionEvent {
            workspace_id: self.workspace_id.clone(),
            server_id: self.server_id.clone(),
            server_name: self.server_name.clone(),
            kind,
        });
    }
}
