//! Answer streams between replicas (PostgreSQL; see migration 0020): the replica running an
//! answer appends its events, in order, to `answer_stream_events` and — in the same
//! transaction — sends `NOTIFY switchboard_answer_streams, '<answer id>:<last seq>'`. A replica
//! whose client follows that conversation reads the rows from its first event and waits for
//! notices ([`Store::listen_for_answer_streams`]) to read the next ones.
//!
//! A notice carries no event (a `NOTIFY` payload is limited to 8000 bytes; a tool result is
//! not): it only says "rows up to this sequence number exist". Notices may be lost (a listener
//! reconnecting misses what was sent meanwhile), so followers also read on a timer.
//!
//! Must not: know what an event means (`chat` encodes and decodes them); rows are opaque text.

use crate::backend::{Backend, on_backend};
use crate::clock;
use crate::conversation_answers::AnswerClaim;
use crate::error::{StoreError, StoreResult};
use crate::store::Store;
use sqlx::postgres::PgListener;
use switchboard_core::ConversationId;

/// The PostgreSQL channel answer-stream rows are announced on.
pub const ANSWER_STREAMS_CHANNEL: &str = "switchboard_answer_streams";

/// One stored event of an answer: its position (from 0, no gaps) and its encoding.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct StreamEventRow {
    pub seq: i64,
    pub event: String,
}

/// "The answer's rows up to `seq` exist."
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerStreamNotice {
    pub answer_id: String,
    pub seq: i64,
}

impl AnswerStreamNotice {
    /// The `NOTIFY` payload: `<answer id>:<seq>`.
    pub fn payload(&self) -> String {
        format!("{}:{}", self.answer_id, self.seq)
    }

    /// Reads a payload; `None` for anything else.
    pub fn parse(payload: &str) -> Option<Self> {
        let (answer_id, seq) = payload.rsplit_once(':')?;
        let seq = seq.parse().ok()?;
        (!answer_id.is_empty()).then(|| AnswerStreamNotice {
            answer_id: answer_id.to_owned(),
            seq,
        })
    }
}

/// What an answer-stream listener heard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerStreamEvent {
    Notice(AnswerStreamNotice),
    /// The connection was lost and opened again: notices sent in between are lost, so every
    /// follower should read now.
    Reconnected,
}

/// A listener on [`ANSWER_STREAMS_CHANNEL`] on a connection of its own (application name
/// `switchboard-answer-streams`).
pub struct AnswerStreamListener {
    listener: PgListener,
}

impl std::fmt::Debug for AnswerStreamListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnswerStreamListener")
            .field("channel", &ANSWER_STREAMS_CHANNEL)
            .finish()
    }
}

impl AnswerStreamListener {
    /// The next notice, or [`AnswerStreamEvent::Reconnected`]. An error means the connection
    /// could not be opened again: call again later, it retries.
    pub async fn next(&mut self) -> StoreResult<AnswerStreamEvent> {
        loop {
            match self.listener.try_recv().await {
                Ok(Some(notification)) => {
                    if let Some(notice) = AnswerStreamNotice::parse(notification.payload()) {
                        return Ok(AnswerStreamEvent::Notice(notice));
                    }
                }
                Ok(None) => return Ok(AnswerStreamEvent::Reconnected),
                Err(error) => return Err(StoreError::Database(error)),
            }
        }
    }
}

impl Store {
    /// Whether answers are relayed to other replicas through the store: PostgreSQL (replicas
    /// may share it); SQLite is one process.
    pub fn relays_answer_streams(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// Appends events `first_seq, first_seq + 1, …` of an answer and announces the last one
    /// (PostgreSQL), in one transaction: a follower woken by the notice finds the rows.
    pub async fn append_answer_stream_events(
        &self,
        conversation_id: &ConversationId,
        answer_id: &str,
        first_seq: i64,
        events: &[String],
    ) -> StoreResult<()> {
        if events.is_empty() {
            return Ok(());
        }
        let last_seq = first_seq + events.len() as i64 - 1;
        let now = clock::now();
        let notice = AnswerStreamNotice {
            answer_id: answer_id.to_owned(),
            seq: last_seq,
        };
        let announce = self.relays_answer_streams();
        crate::backend::write_transaction!(self, |tx| {
            for (seq, event) in (first_seq..).zip(events) {
                sqlx::query(
                    "INSERT INTO answer_stream_events \
                     (answer_id, seq, conversation_id, event, created_at) \
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(answer_id)
                .bind(seq)
                .bind(conversation_id.as_str())
                .bind(event)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            }
            if announce {
                sqlx::query("SELECT pg_notify($1, $2)")
                    .bind(ANSWER_STREAMS_CHANNEL)
                    .bind(notice.payload())
                    .execute(&mut *tx)
                    .await?;
            }
        });
        Ok(())
    }

    /// An answer's events after `after_seq` (all from the start with `-1`), in order, at most
    /// `limit`.
    pub async fn answer_stream_events_after(
        &self,
        answer_id: &str,
        after_seq: i64,
        limit: i64,
    ) -> StoreResult<Vec<StreamEventRow>> {
        let rows = on_backend!(self, |pool| sqlx::query_as(
            "SELECT seq, event FROM answer_stream_events \
             WHERE answer_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
        )
        .bind(answer_id)
        .bind(after_seq)
        .bind(limit)
        .fetch_all(pool)
        .await)?;
        Ok(rows)
    }

    /// Removes an answer's events (after it ended and its followers had time to read them).
    pub async fn prune_answer_stream(&self, answer_id: &str) -> StoreResult<u64> {
        let removed = on_backend!(self, |pool| sqlx::query(
            "DELETE FROM answer_stream_events WHERE answer_id = $1"
        )
        .bind(answer_id)
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        Ok(removed)
    }

    /// Removes the events of the conversation's earlier answers (a replica that stopped before
    /// pruning its own leaves them; the next answer there clears them).
    pub async fn prune_earlier_answer_streams(
        &self,
        conversation_id: &ConversationId,
        answer_id: &str,
    ) -> StoreResult<u64> {
        let removed = on_backend!(self, |pool| sqlx::query(
            "DELETE FROM answer_stream_events WHERE conversation_id = $1 AND answer_id <> $2"
        )
        .bind(conversation_id.as_str())
        .bind(answer_id)
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        Ok(removed)
    }

    /// The claim of the answer in flight in the conversation by a live instance other than
    /// this one (whose answers its own engine knows), if any.
    pub async fn answer_in_flight_elsewhere(
        &self,
        conversation_id: &ConversationId,
    ) -> StoreResult<Option<AnswerClaim>> {
        let claim = self.conversation_answer_claim(conversation_id).await?;
        Ok(claim.filter(|claim| {
            claim.instance_id.is_some() && claim.instance_id.as_ref() != self.instance_id()
        }))
    }

    /// PostgreSQL: a listener on [`ANSWER_STREAMS_CHANNEL`]. SQLite: `None`.
    pub async fn listen_for_answer_streams(&self) -> StoreResult<Option<AnswerStreamListener>> {
        let Backend::Postgres(pool) = &self.backend else {
            return Ok(None);
        };
        let listener = crate::listeners::open_listener(
            pool,
            "switchboard-answer-streams",
            ANSWER_STREAMS_CHANNEL,
        )
        .await?;
        Ok(Some(AnswerStreamListener { listener }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_read_back_and_foreign_ones_are_ignored() {
        let notice = AnswerStreamNotice {
            answer_id: "ans_1".into(),
            seq: 41,
        };
        assert_eq!(AnswerStreamNotice::parse(&notice.payload()), Some(notice));
        for foreign in ["", "ans_1", ":3", "ans_1:x"] {
            assert_eq!(AnswerStreamNotice::parse(foreign), None, "{foreign}");
        }
    }
}
