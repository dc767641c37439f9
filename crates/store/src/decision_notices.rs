//! Decision notices between replicas (PostgreSQL only): when a person's decision on an
//! approval request or an answer to an elicitation form is recorded, the same statement sends
//! `NOTIFY switchboard_decisions, 'approval:<id>'` (or `'elicitation:<id>'`), delivered when it
//! commits. A replica whose call waits for that request listens on the channel
//! ([`Store::listen_for_decisions`]) and looks in the store at once instead of at its next poll.
//!
//! A notice is only a hint to look now: it carries the id, never the decision, and it may be
//! lost (a listener reconnecting misses what was sent meanwhile), so waiters keep polling. On
//! SQLite there is one process and no channel. Ids are random, so notices of deployments
//! sharing one database (other schemas) only cost a lookup in an in-memory map.

use crate::backend::Backend;
use crate::error::{StoreError, StoreResult};
use crate::store::Store;
use sqlx::postgres::PgListener;
use switchboard_core::{ApprovalId, ElicitationId};

/// The PostgreSQL channel decisions are announced on.
pub const DECISIONS_CHANNEL: &str = "switchboard_decisions";

/// Payload prefixes; the SQL that sends notices builds the same text (`'approval:' || id`).
pub(crate) const APPROVAL_PREFIX: &str = "approval:";
pub(crate) const ELICITATION_PREFIX: &str = "elicitation:";

/// Which request was just settled.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DecisionNotice {
    Approval(ApprovalId),
    Elicitation(ElicitationId),
}

impl DecisionNotice {
    /// The `NOTIFY` payload: `approval:<id>` or `elicitation:<id>`.
    pub fn payload(&self) -> String {
        match self {
            DecisionNotice::Approval(id) => format!("{APPROVAL_PREFIX}{id}"),
            DecisionNotice::Elicitation(id) => format!("{ELICITATION_PREFIX}{id}"),
        }
    }

    /// Reads a payload; `None` for anything else (sent by something that is not us).
    pub fn parse(payload: &str) -> Option<Self> {
        if let Some(id) = payload.strip_prefix(APPROVAL_PREFIX) {
            (!id.is_empty()).then(|| DecisionNotice::Approval(ApprovalId::from_string(id)))
        } else if let Some(id) = payload.strip_prefix(ELICITATION_PREFIX) {
            (!id.is_empty()).then(|| DecisionNotice::Elicitation(ElicitationId::from_string(id)))
        } else {
            None
        }
    }
}

/// What a listener heard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListenerEvent {
    Notice(DecisionNotice),
    /// The connection was lost and has been opened again (channel listened to again): notices
    /// sent in between are lost, so whoever waits should look in the store now.
    Reconnected,
}

/// A listener on [`DECISIONS_CHANNEL`], on a connection of its own (not one of the store's
/// pool, which it would hold for good; application name `switchboard-decisions`). A lost
/// connection is opened again (and the channel listened to again) by the next call.
pub struct DecisionListener {
    listener: PgListener,
}

impl std::fmt::Debug for DecisionListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecisionListener")
            .field("channel", &DECISIONS_CHANNEL)
            .finish()
    }
}

impl DecisionListener {
    /// The next notice, or [`ListenerEvent::Reconnected`] after a lost connection was opened
    /// again. An error means the connection could not be opened again (the database is down):
    /// call again later, it retries.
    pub async fn next(&mut self) -> StoreResult<ListenerEvent> {
        loop {
            match self.listener.try_recv().await {
                Ok(Some(notification)) => match DecisionNotice::parse(notification.payload()) {
                    Some(notice) => return Ok(ListenerEvent::Notice(notice)),
                    None => tracing::debug!(
                        payload = notification.payload(),
                        "ignored a notice on the decisions channel"
                    ),
                },
                Ok(None) => return Ok(ListenerEvent::Reconnected),
                Err(error) => return Err(StoreError::Database(error)),
            }
        }
    }
}

impl DecisionListener {
    /// The PostgreSQL backend serving the listener now (`pg_stat_activity.pid`, also shown
    /// there as application `switchboard-decisions`), for diagnostics.
    pub async fn backend_pid(&mut self) -> StoreResult<i32> {
        sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut self.listener)
            .await
            .map_err(StoreError::Database)
    }
}

impl Store {
    /// PostgreSQL: a listener on [`DECISIONS_CHANNEL`] (its own connection, with the store's
    /// connection options). SQLite: `None` — one process, nobody else decides.
    pub async fn listen_for_decisions(&self) -> StoreResult<Option<DecisionListener>> {
        let Backend::Postgres(pool) = &self.backend else {
            return Ok(None);
        };
        let listener =
            crate::listeners::open_listener(pool, "switchboard-decisions", DECISIONS_CHANNEL)
                .await?;
        Ok(Some(DecisionListener { listener }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_read_back_and_foreign_ones_are_ignored() {
        for notice in [
            DecisionNotice::Approval(ApprovalId::from_string("apr_1")),
            DecisionNotice::Elicitation(ElicitationId::from_string("eli_2")),
        ] {
            assert_eq!(DecisionNotice::parse(&notice.payload()), Some(notice));
        }
        for foreign in ["", "approval:", "hello", "tool:abc"] {
            assert_eq!(DecisionNotice::parse(foreign), None, "{foreign}");
        }
    }
}
