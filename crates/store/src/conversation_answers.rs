//! Answer claims: at most one answer in flight per conversation across every replica. Starting
//! an answer claims the conversation ([`Store::claim_conversation_answer`], a row keyed by the
//! conversation with the claiming instance); ending it releases the claim. A claim held by a
//! live instance refuses another; a claim of a dead instance (see `instances`) or of this
//! instance itself is taken over — this process's own engine already guarantees one answer per
//! conversation in memory, so its own leftover claim (a release not yet landed, or lost) is
//! stale by definition.
//!
//! Must not: know about turns or their events (`chat` owns them); a claim is only "someone is
//! answering here".

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreResult, insert_error};
use crate::instances::{InstanceId, orphaned};
use crate::store::Store;
use chrono::{DateTime, Utc};
use switchboard_core::{ConversationId, WorkspaceId};

/// One answer in flight: which conversation, which answer, in which process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerClaim {
    pub conversation_id: ConversationId,
    /// Random per claim, so a late release of an earlier answer never frees a newer one.
    pub answer_id: String,
    /// `None` when written by a store that never registered an instance (counts as dead).
    pub instance_id: Option<InstanceId>,
    pub started_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct AnswerClaimRow {
    conversation_id: String,
    answer_id: String,
    instance_id: Option<String>,
    started_at: DateTime<Utc>,
}

impl From<AnswerClaimRow> for AnswerClaim {
    fn from(row: AnswerClaimRow) -> Self {
        AnswerClaim {
            conversation_id: ConversationId::from_string(row.conversation_id),
            answer_id: row.answer_id,
            instance_id: row.instance_id.map(InstanceId::from_string),
            started_at: row.started_at,
        }
    }
}

impl Store {
    /// Claims the conversation for a new answer by this instance. `None` when a live instance
    /// (another replica) holds it; a dead instance's claim, or this instance's own, is taken
    /// over. `NotFound` when the conversation is not in the workspace.
    pub async fn claim_conversation_answer(
        &self,
        workspace_id: &WorkspaceId,
        conversation_id: &ConversationId,
    ) -> StoreResult<Option<AnswerClaim>> {
        let now = clock::now();
        let answer_id = format!("ans_{}", uuid::Uuid::new_v4().simple());
        let claimed: Option<String> = on_backend!(self, |pool| sqlx::query_scalar(
            "INSERT INTO conversation_answers \
             (conversation_id, workspace_id, answer_id, instance_id, started_at) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (conversation_id) DO UPDATE SET answer_id = excluded.answer_id, \
             instance_id = excluded.instance_id, started_at = excluded.started_at \
             WHERE conversation_answers.workspace_id = excluded.workspace_id \
             AND (conversation_answers.instance_id IS NULL \
             OR conversation_answers.instance_id = $6 \
             OR conversation_answers.instance_id NOT IN \
             (SELECT id FROM instances WHERE alive_until > $5)) \
             RETURNING answer_id"
        )
        .bind(conversation_id.as_str())
        .bind(workspace_id.as_str())
        .bind(&answer_id)
        .bind(self.owning_instance())
        .bind(now)
        .bind(self.me_for_recovery())
        .fetch_optional(pool)
        .await)
        .map_err(insert_error(
            "answer claim",
            "conversation_id",
            "conversation",
        ))?;
        Ok(claimed.map(|answer_id| AnswerClaim {
            conversation_id: conversation_id.clone(),
            answer_id,
            instance_id: self.instance_id().cloned(),
            started_at: now,
        }))
    }

    /// Releases the claim when its answer ended (completed, failed, cancelled, shut down).
    /// False when it was no longer held (taken over meanwhile, or the conversation deleted).
    pub async fn release_conversation_answer(&self, claim: &AnswerClaim) -> StoreResult<bool> {
        let released = on_backend!(self, |pool| sqlx::query(
            "DELETE FROM conversation_answers WHERE conversation_id = $1 AND answer_id = $2"
        )
        .bind(claim.conversation_id.as_str())
        .bind(&claim.answer_id)
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        Ok(released > 0)
    }

    /// The conversation's answer claim when held by a live instance (this one included).
    pub async fn conversation_answer_claim(
        &self,
        conversation_id: &ConversationId,
    ) -> StoreResult<Option<AnswerClaim>> {
        let row: Option<AnswerClaimRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT conversation_id, answer_id, instance_id, started_at \
             FROM conversation_answers WHERE conversation_id = $1 \
             AND instance_id IN (SELECT id FROM instances WHERE alive_until > $2)"
        )
        .bind(conversation_id.as_str())
        .bind(clock::now())
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(AnswerClaim::from))
    }

    /// The workspace's answers in flight in live instances (this one included), oldest first.
    pub async fn list_answers_in_flight(
        &self,
        workspace_id: &WorkspaceId,
    ) -> StoreResult<Vec<AnswerClaim>> {
        let rows: Vec<AnswerClaimRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT conversation_id, answer_id, instance_id, started_at \
             FROM conversation_answers WHERE workspace_id = $1 \
             AND instance_id IN (SELECT id FROM instances WHERE alive_until > $2) \
             ORDER BY started_at, conversation_id"
        )
        .bind(workspace_id.as_str())
        .bind(clock::now())
        .fetch_all(pool)
        .await)?;
        Ok(rows.into_iter().map(AnswerClaim::from).collect())
    }

    /// Sweep: claims of dead instances are released. Returns how many.
    pub(crate) async fn release_orphaned_answers(&self) -> StoreResult<u64> {
        let released = on_backend!(self, |pool| sqlx::query(concat!(
            "DELETE FROM conversation_answers WHERE ",
            orphaned!("$2", "$1")
        ))
        .bind(clock::now())
        .bind(self.me_for_recovery())
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        Ok(released)
    }
}
