//! Sessions with upstream servers: which session a caller uses (scope keys), what a session
//! looks like from outside (`SessionStatus`), and the memory of each upstream's negotiated
//! protocol version.
//!
//! Protocol-version negotiation and the two protocol generations (`initialize`, 2025-03-26 …
//! 2025-11-25; stateless 2026-07-28 with `server/discover`): what is sent, what is accepted, how
//! a session falls back — see `PROTOCOL.md` beside this file.
//!
//! `pool` holds the live sessions (`SessionPool`); `slot` starts and watches one; `start` makes
//! a start's attempts (retries, backoff, lifecycle switches); `live` is one connected session
//! and its handshake, whose kind `lifecycle` chooses; `listen` its `subscriptions/listen`
//! stream.

pub(crate) mod lifecycle;
pub(crate) mod listen;
pub(crate) mod live;
pub(crate) mod pool;
pub(crate) mod slot;
mod start;

use crate::config::McpClientConfig;
use crate::handler::ElicitationResponder;
use crate::notifications::ListChangedCallback;
use crate::server::UpstreamServer;
use crate::url_policy::UrlPolicy;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use switchboard_core::{ConversationId, ServerId, SessionScope, SessionState, UserId};

/// Who shares a session, resolved for one caller.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum SessionScopeKey {
    Shared,
    User(UserId),
    Conversation(ConversationId),
}

impl SessionScopeKey {
    /// The key for a caller. A per-conversation server used outside a conversation (a tool
    /// tried from the API) gets a session of the caller's own.
    pub fn for_caller(
        scope: SessionScope,
        user_id: &UserId,
        conversation_id: Option<&ConversationId>,
    ) -> Self {
        match (scope, conversation_id) {
            (SessionScope::Shared, _) => SessionScopeKey::Shared,
            (SessionScope::PerUser, _) | (SessionScope::PerConversation, None) => {
                SessionScopeKey::User(user_id.clone())
            }
            (SessionScope::PerConversation, Some(conversation_id)) => {
                SessionScopeKey::Conversation(conversation_id.clone())
            }
        }
    }
}

/// Identifies one session.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionKey {
    pub server_id: ServerId,
    pub scope: SessionScopeKey,
}

/// A session as the API shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionStatus {
    pub server_id: ServerId,
    pub scope: SessionScopeKey,
    pub state: SessionState,
    /// When the state last changed.
    pub since: chrono::DateTime<chrono::Utc>,
    pub protocol_version: Option<String>,
    pub in_flight: usize,
    pub last_error: Option<String>,
    /// For stdio sessions: the child's pid, which is also its process group id.
    pub process_id: Option<i32>,
}

/// The protocol version each upstream negotiated, so later connects skip the probe. Entries
/// are tied to the connection fingerprint: a reconfigured server is probed again.
#[derive(Debug, Default)]
pub struct VersionMemory {
    versions: Mutex<HashMap<ServerId, (u64, String)>>,
}

impl VersionMemory {
    pub fn remember(&self, server_id: &ServerId, fingerprint: u64, version: &str) {
        if version.is_empty() {
            return;
        }
        if let Ok(mut versions) = self.versions.lock() {
            versions.insert(server_id.clone(), (fingerprint, version.to_owned()));
        }
    }

    pub fn recall(&self, server_id: &ServerId, fingerprint: u64) -> Option<String> {
        let versions = self.versions.lock().ok()?;
        versions
            .get(server_id)
            .filter(|(remembered_fingerprint, _)| *remembered_fingerprint == fingerprint)
            .map(|(_, version)| version.clone())
    }

    pub fn forget(&self, server_id: &ServerId) {
        if let Ok(mut versions) = self.versions.lock() {
            versions.remove(server_id);
        }
    }
}

/// Everything a slot needs to start a session.
pub(crate) struct StartContext<'a> {
    pub server: &'a UpstreamServer,
    pub config: &'a McpClientConfig,
    pub http_client: &'a reqwest::Client,
    pub policy: &'a UrlPolicy,
    pub versions: &'a VersionMemory,
    pub list_changed: Option<ListChangedCallback>,
    pub elicitation: Option<Arc<dyn ElicitationResponder>>,
    pub sampling: bool,
    /// Told when the session connects, fails to start or closes.
    pub session_events: Option<crate::session_events::SessionEventHandler>,
    /// Cancelled at shutdown: a start in progress gives up.
    pub shutdown: tokio_util::sync::CancellationToken,
    /// Where the session's task status notifications go.
    pub task_watchers: Arc<crate::task_watch::TaskWatchers>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_keys_isolate_users_and_conversations() {
        let alice = UserId::from("alice");
        let chat = ConversationId::from("c1");
        assert_eq!(
            SessionScopeKey::for_caller(SessionScope::Shared, &alice, Some(&chat)),
            SessionScopeKey::Shared
        );
        assert_eq!(
            SessionScopeKey::for_caller(SessionScope::PerUser, &alice, Some(&chat)),
            SessionScopeKey::User(alice.clone())
        );
        assert_eq!(
            SessionScopeKey::for_caller(SessionScope::PerConversation, &alice, Some(&chat)),
            SessionScopeKey::Conversation(chat)
        );
        assert_eq!(
            SessionScopeKey::for_caller(SessionScope::PerConversation, &alice, None),
            SessionScopeKey::User(alice)
        );
    }

    #[test]
    fn version_memory_is_tied_to_the_fingerprint() {
        let memory = VersionMemory::default();
        let server = ServerId::from("s1");
        memory.remember(&server, 1, "2025-06-18");
        assert_eq!(memory.recall(&server, 1).as_deref(), Some("2025-06-18"));
        assert_eq!(memory.recall(&server, 2), None);
        memory.forget(&server);
        assert_eq!(memory.recall(&server, 1), None);
    }
}
