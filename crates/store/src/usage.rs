//! Token usage totals, read from what the chat engine stores with each assistant message
//! (`metadata.usage`: the provider's own counts for one LLM step, with `provider_name` and
//! `model`). Nothing is stored here: the totals are sums over the messages, grouped by provider
//! and model, for one conversation, one person's conversations or the whole workspace, from an
//! optional instant on. A deleted conversation's usage goes with its messages.
//!
//! JSON is read differently on each backend (`json_extract` / `->>`), so the query is written
//! twice; the shape of the rows is the same.

use crate::backend::{Backend, on_backend};
use crate::error::StoreResult;
use crate::store::Store;
use chrono::{DateTime, Utc};
use switchboard_core::{ConversationId, UserId, WorkspaceId};

/// Which assistant messages to count (all given filters apply).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UsageFilter {
    pub conversation_id: Option<ConversationId>,
    /// Messages of conversations this person owns.
    pub owner_user_id: Option<UserId>,
    /// Messages created at or after this instant.
    pub since: Option<DateTime<Utc>>,
}

/// Tokens counted for one provider and model.
#[derive(Clone, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct UsageRow {
    /// The named provider that answered (its kind for messages stored before names were
    /// recorded).
    pub provider: String,
    pub model: String,
    /// LLM steps with usage reported.
    pub steps: i64,
    /// Every prompt token, cached or not.
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// Of `input_tokens`, those read from the provider's prompt cache.
    pub cache_read_tokens: i64,
    /// Of `input_tokens`, those written to the provider's prompt cache.
    pub cache_write_tokens: i64,
}

const SQLITE_USAGE: &str = "SELECT \
     COALESCE(json_extract(m.metadata, '$.provider_name'), \
              json_extract(m.metadata, '$.provider'), '') AS provider, \
     COALESCE(json_extract(m.metadata, '$.model'), '') AS model, \
     COUNT(*) AS steps, \
     COALESCE(SUM(json_extract(m.metadata, '$.usage.prompt_tokens')), 0) AS input_tokens, \
     COALESCE(SUM(json_extract(m.metadata, '$.usage.completion_tokens')), 0) AS output_tokens, \
     COALESCE(SUM(json_extract(m.metadata, '$.usage.cache_read_tokens')), 0) \
         AS cache_read_tokens, \
     COALESCE(SUM(json_extract(m.metadata, '$.usage.cache_creation_tokens')), 0) \
         AS cache_write_tokens \
     FROM messages m JOIN conversations c \
         ON c.workspace_id = m.workspace_id AND c.id = m.conversation_id \
     WHERE m.workspace_id = $1 AND m.role = 'assistant' \
         AND json_extract(m.metadata, '$.usage') IS NOT NULL \
         AND ($2 IS NULL OR m.conversation_id = $2) \
         AND ($3 IS NULL OR c.owner_user_id = $3) \
         AND ($4 IS NULL OR m.created_at >= $4) \
     GROUP BY 1, 2 ORDER BY 1, 2";

const POSTGRES_USAGE: &str = "SELECT \
     COALESCE(m.metadata->>'provider_name', m.metadata->>'provider', '') AS provider, \
     COALESCE(m.metadata->>'model', '') AS model, \
     COUNT(*)::BIGINT AS steps, \
     COALESCE(SUM((m.metadata->'usage'->>'prompt_tokens')::BIGINT), 0)::BIGINT AS input_tokens, \
     COALESCE(SUM((m.metadata->'usage'->>'completion_tokens')::BIGINT), 0)::BIGINT \
         AS output_tokens, \
     COALESCE(SUM((m.metadata->'usage'->>'cache_read_tokens')::BIGINT), 0)::BIGINT \
         AS cache_read_tokens, \
     COALESCE(SUM((m.metadata->'usage'->>'cache_creation_tokens')::BIGINT), 0)::BIGINT \
         AS cache_write_tokens \
     FROM messages m JOIN conversations c \
         ON c.workspace_id = m.workspace_id AND c.id = m.conversation_id \
     WHERE m.workspace_id = $1 AND m.role = 'assistant' \
         AND m.metadata ? 'usage' \
         AND ($2::TEXT IS NULL OR m.conversation_id = $2) \
         AND ($3::TEXT IS NULL OR c.owner_user_id = $3) \
         AND ($4::TIMESTAMPTZ IS NULL OR m.created_at >= $4) \
     GROUP BY 1, 2 ORDER BY 1, 2";

impl Store {
    /// Token totals by provider and model of the workspace's assistant messages that `filter`
    /// selects.
    pub async fn usage_totals(
        &self,
        workspace_id: &WorkspaceId,
        filter: &UsageFilter,
    ) -> StoreResult<Vec<UsageRow>> {
        let sql = match &self.backend {
            Backend::Sqlite(_) => SQLITE_USAGE,
            Backend::Postgres(_) => POSTGRES_USAGE,
        };
        let rows: Vec<UsageRow> = on_backend!(self, |pool| sqlx::query_as(sql)
            .bind(workspace_id.as_str())
            .bind(filter.conversation_id.as_ref().map(ConversationId::as_str))
            .bind(filter.owner_user_id.as_ref().map(UserId::as_str))
            .bind(filter.since)
            .fetch_all(pool)
            .await)?;
        Ok(rows)
    }
}
