//! Chat area: one user's conversations a page at a time, most recently active first, with a
//! keyset cursor (`updated_at`, `id`) so pages stay stable while conversations move.

use crate::backend::on_backend;
use crate::conversations::{ConversationRecord, ConversationRow, select_conversations};
use crate::error::StoreResult;
use crate::store::Store;
use chrono::{DateTime, Utc};
use switchboard_core::{ConversationId, UserId, WorkspaceId};

/// Where the previous page ended: the last conversation it returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversationCursor {
    pub updated_at: DateTime<Utc>,
    pub id: ConversationId,
}

impl ConversationCursor {
    pub fn after(record: &ConversationRecord) -> Self {
        Self {
            updated_at: record.updated_at,
            id: record.id.clone(),
        }
    }
}

impl Store {
    /// Up to `limit` of `owner`'s conversations that come after `after` in the order
    /// (`updated_at` descending, then `id` descending).
    pub async fn list_conversations_page(
        &self,
        workspace_id: &WorkspaceId,
        owner: &UserId,
        limit: u32,
        after: Option<&ConversationCursor>,
    ) -> StoreResult<Vec<ConversationRecord>> {
        let rows: Vec<ConversationRow> =
            on_backend!(self, |pool| sqlx::query_as(select_conversations!(
                "WHERE workspace_id = $1 AND owner_user_id = $2 \
                 AND ($3 = 0 OR updated_at < $4 OR (updated_at = $4 AND id < $5)) \
                 ORDER BY updated_at DESC, id DESC LIMIT $6"
            ))
            .bind(workspace_id.as_str())
            .bind(owner.as_str())
            .bind(i64::from(after.is_some()))
            .bind(after.map(|cursor| cursor.updated_at).unwrap_or_default())
            .bind(after.map(|cursor| cursor.id.as_str()).unwrap_or_default())
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(ConversationRecord::from).collect())
    }
}
