//! `SessionPool`: the live sessions — every session slot, keyed by (server, scope key), plus
//! the concurrency limits shared across them (per server, per conversation) and each server's
//! latency window. It reaps idle sessions and closes everything, in parallel and within a
//! deadline, on shutdown or when a server goes away. (Not to be confused with
//! `switchboard-registry`'s `ServerRegistry`, the servers a workspace has registered.)

use super::slot::SessionSlot;
use super::{SessionKey, SessionStatus};
use crate::latency::LatencyBook;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::LockUnpoisoned;
use switchboard_core::{ConversationId, ServerId, SessionState};
use tokio::sync::Semaphore;

#[derive(Default)]
pub(crate) struct SessionPool {
    slots: Mutex<HashMap<SessionKey, Arc<SessionSlot>>>,
    server_limits: Mutex<HashMap<ServerId, Arc<Semaphore>>>,
    conversation_limits: Mutex<HashMap<ConversationId, Arc<Semaphore>>>,
    /// Each server's recent latencies, shared by all its sessions.
    pub latencies: LatencyBook,
}

impl std::fmt::Debug for SessionPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sessions = self.slots.lock().map(|slots| slots.len()).unwrap_or(0);
        f.debug_struct("SessionPool")
            .field("sessions", &sessions)
            .finish()
    }
}

impl SessionPool {
    pub fn slot(&self, key: &SessionKey) -> Arc<SessionSlot> {
        let mut slots = self.slots.lock_unpoisoned();
        slots
            .entry(key.clone())
            .or_insert_with(|| {
                Arc::new(SessionSlot::new(
                    key.clone(),
                    self.latencies.window(&key.server_id),
                ))
            })
            .clone()
    }

    pub fn slots_for_server(&self, server_id: &ServerId) -> Vec<Arc<SessionSlot>> {
        let slots = self.slots.lock_unpoisoned();
        slots
            .iter()
            .filter(|(key, _)| &key.server_id == server_id)
            .map(|(_, slot)| slot.clone())
            .collect()
    }

    fn all_slots(&self) -> Vec<Arc<SessionSlot>> {
        let slots = self.slots.lock_unpoisoned();
        slots.values().cloned().collect()
    }

    pub fn statuses(&self, server_id: &ServerId) -> Vec<SessionStatus> {
        let mut statuses: Vec<SessionStatus> = self
            .slots_for_server(server_id)
            .iter()
            .map(|slot| slot.status())
            .collect();
        statuses
            .sort_by(|left, right| format!("{:?}", left.scope).cmp(&format!("{:?}", right.scope)));
        statuses
    }

    pub fn server_limit(&self, server_id: &ServerId, permits: usize) -> Arc<Semaphore> {
        let mut limits = self.server_limits.lock_unpoisoned();
        limits
            .entry(server_id.clone())
            .or_insert_with(|| Arc::new(Semaphore::new(permits)))
            .clone()
    }

    pub fn conversation_limit(
        &self,
        conversation_id: &ConversationId,
        permits: usize,
    ) -> Arc<Semaphore> {
        let mut limits = self.conversation_limits.lock_unpoisoned();
        limits
            .entry(conversation_id.clone())
            .or_insert_with(|| Arc::new(Semaphore::new(permits)))
            .clone()
    }

    /// Closes and forgets every session of a server (deleted, deactivated or reconfigured).
    pub async fn close_server(
        &self,
        server_id: &ServerId,
        server_name: &str,
        close_within: Duration,
    ) {
        let removed: Vec<Arc<SessionSlot>> = {
            let mut slots = self.slots.lock_unpoisoned();
            let keys: Vec<SessionKey> = slots
                .keys()
                .filter(|key| &key.server_id == server_id)
                .cloned()
                .collect();
            // Under the slots lock, so a slot made after this starts on a fresh window (and
            // the calls still finishing on the removed ones write to the old one, unseen).
            self.latencies.forget(server_id);
            keys.iter().filter_map(|key| slots.remove(key)).collect()
        };
        futures::future::join_all(
            removed
                .iter()
                .map(|slot| slot.close(server_name, close_within)),
        )
        .await;
        self.server_limits.lock_unpoisoned().remove(server_id);
    }

    /// Closes and forgets the one session under `key`, if there is one (a request's ephemeral
    /// server, after the turn that used it).
    pub async fn close_session(&self, key: &SessionKey, server_name: &str, close_within: Duration) {
        let removed = self.slots.lock_unpoisoned().remove(key);
        if let Some(slot) = removed {
            slot.close(server_name, close_within).await;
        }
    }

    /// One pass of the idle reaper. Also forgets closed slots and unused conversation limits,
    /// so per-conversation sessions do not accumulate.
    pub async fn reap_idle(
        &self,
        server_names: &HashMap<ServerId, String>,
        idle_timeout: Duration,
        close_within: Duration,
    ) {
        for slot in self.all_slots() {
            let name = server_names
                .get(&slot.key.server_id)
                .map(String::as_str)
                .unwrap_or("unknown");
            slot.close_if_idle(name, idle_timeout, close_within).await;
        }
        {
            let mut slots = self.slots.lock_unpoisoned();
            slots.retain(|_, slot| {
                slot.status().state != SessionState::Closed || Arc::strong_count(slot) > 1
            });
        }
        let mut limits = self.conversation_limits.lock_unpoisoned();
        limits.retain(|_, semaphore| Arc::strong_count(semaphore) > 1);
    }

    /// Closes every session in parallel; whatever is not closed by the deadline is killed when
    /// its transport is dropped.
    pub async fn shutdown(&self, server_names: &HashMap<ServerId, String>, deadline: Duration) {
        let slots: Vec<Arc<SessionSlot>> = {
            let mut slots = self.slots.lock_unpoisoned();
            slots.drain().map(|(_, slot)| slot).collect()
        };
        let per_session = deadline
            .saturating_sub(Duration::from_millis(500))
            .max(Duration::from_millis(100));
        let closing = futures::future::join_all(slots.iter().map(|slot| {
            let name = server_names
                .get(&slot.key.server_id)
                .cloned()
                .unwrap_or_default();
            async move { slot.close(&name, per_session).await }
        }));
        if tokio::time::timeout(deadline, closing).await.is_err() {
            tracing::warn!(
                ?deadline,
                "some MCP sessions did not close in time; they are killed"
            );
        }
    }
}
