//! Structured audit events on top of the audit log (`audit`): the same append-only table with
//! columns an admin filters on — user, conversation, server, tool, status, duration — filled
//! in, and a search over them (time range, server, tool, user, status, action) paged by id.
//! Details are redacted before storage, as for every audit entry.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::storable::{clean_json, clean_optional_text, clean_text};
use crate::store::Store;
use crate::validate;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use switchboard_core::redact::redact_json;
use switchboard_core::{ConversationId, UserId, WorkspaceId};

/// Most events one search returns.
pub const MAX_AUDIT_SEARCH_PAGE: i64 = 500;

/// An event to record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NewAuditEvent {
    /// Who: a user id, `system`, `policy`, `timeout`…
    pub actor: String,
    /// What, as `area.verb` (`tool_call.completed`, `server.connected`, `policy.set`).
    pub action: String,
    /// The object acted on (an id or name), if any.
    pub target: Option<String>,
    /// The user on whose behalf it happened (for tool calls: the conversation's user).
    pub user_id: Option<UserId>,
    pub conversation_id: Option<ConversationId>,
    pub server_name: Option<String>,
    pub tool_name: Option<String>,
    /// A short outcome word (`completed`, `failed`, `denied`, `connect`, `error`…).
    pub status: Option<String>,
    pub duration_ms: Option<i64>,
    /// Anything else; secret-looking keys are replaced by `[REDACTED]` before storage.
    pub details: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AuditEventRecord {
    /// Increasing: later events have larger ids.
    pub id: i64,
    pub workspace_id: WorkspaceId,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub target: Option<String>,
    pub user_id: Option<UserId>,
    pub conversation_id: Option<ConversationId>,
    pub server_name: Option<String>,
    pub tool_name: Option<String>,
    pub status: Option<String>,
    pub duration_ms: Option<i64>,
    pub details: Value,
}

/// Which events to return: newest first, all filters optional and combined with AND.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditSearch {
    /// Inclusive.
    pub from: Option<DateTime<Utc>>,
    /// Exclusive.
    pub to: Option<DateTime<Utc>>,
    pub server_name: Option<String>,
    pub tool_name: Option<String>,
    /// Matches the event's user or its actor.
    pub user: Option<String>,
    pub status: Option<String>,
    /// An exact action, or a prefix when it ends with `.` (`tool_call.`).
    pub action: Option<String>,
    /// Only events with a smaller id (the previous page's last id).
    pub before_id: Option<i64>,
    pub limit: i64,
}

impl Default for AuditSearch {
    fn default() -> Self {
        Self {
            from: None,
            to: None,
            server_name: None,
            tool_name: None,
            user: None,
            status: None,
            action: None,
            before_id: None,
            limit: 100,
        }
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct AuditEventRow {
    id: i64,
    workspace_id: String,
    at: DateTime<Utc>,
    actor: String,
    action: String,
    target: Option<String>,
    user_id: Option<String>,
    conversation_id: Option<String>,
    server_name: Option<String>,
    tool_name: Option<String>,
    status: Option<String>,
    duration_ms: Option<i64>,
    details: Json<Value>,
}

impl From<AuditEventRow> for AuditEventRecord {
    fn from(row: AuditEventRow) -> Self {
        AuditEventRecord {
            id: row.id,
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            at: row.at,
            actor: row.actor,
            action: row.action,
            target: row.target,
            user_id: row.user_id.map(UserId::from_string),
            conversation_id: row.conversation_id.map(ConversationId::from_string),
            server_name: row.server_name,
            tool_name: row.tool_name,
            status: row.status,
            duration_ms: row.duration_ms,
            details: row.details.0,
        }
    }
}

/// The columns of an [`AuditEventRow`], for `concat!` with a `WHERE` clause.
macro_rules! select_audit_events {
    () => {
        "SELECT id, workspace_id, at, actor, action, target, user_id, conversation_id, \
         server_name, tool_name, status, duration_ms, details FROM audit_log "
    };
}
pub(crate) use select_audit_events;

/// `LIKE` pattern matching values that start with `prefix` literally.
fn like_prefix(prefix: &str) -> String {
    let mut pattern = String::with_capacity(prefix.len() + 1);
    for character in prefix.chars() {
        if matches!(character, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(character);
    }
    pattern.push('%');
    pattern
}

/// An event checked, cleaned and redacted, stamped with its time: what is inserted, by
/// [`Store::append_audit_event`] or inside another write's transaction (a tool call's final
/// state and its audit row are one commit, `tool_calls.rs`).
#[derive(Debug)]
pub(crate) struct StorableAuditEvent {
    pub(crate) event: NewAuditEvent,
    pub(crate) details: Value,
    pub(crate) at: DateTime<Utc>,
}

impl StorableAuditEvent {
    pub(crate) fn new(mut event: NewAuditEvent) -> StoreResult<Self> {
        if event.action.trim().is_empty() {
            return Err(StoreError::invalid("action", "must not be empty"));
        }
        if event.actor.trim().is_empty() {
            return Err(StoreError::invalid("actor", "must not be empty"));
        }
        let mut details = redact_json(&event.details);
        clean_json(&mut details);
        clean_text(&mut event.actor);
        clean_text(&mut event.action);
        for text in [
            &mut event.target,
            &mut event.server_name,
            &mut event.tool_name,
            &mut event.status,
        ] {
            clean_optional_text(text);
        }
        Ok(Self {
            event,
            details,
            at: clock::now(),
        })
    }

    pub(crate) fn into_record(self, workspace_id: &WorkspaceId, id: i64) -> AuditEventRecord {
        let event = self.event;
        AuditEventRecord {
            id,
            workspace_id: workspace_id.clone(),
            at: self.at,
            actor: event.actor,
            action: event.action,
            target: event.target,
            user_id: event.user_id,
            conversation_id: event.conversation_id,
            server_name: event.server_name,
            tool_name: event.tool_name,
            status: event.status,
            duration_ms: event.duration_ms,
            details: self.details,
        }
    }
}

/// Inserts a [`StorableAuditEvent`] with `$executor` (a pool or `&mut *tx` of either
/// backend); evaluates to the `sqlx` result of its new id.
macro_rules! insert_audit_event {
    ($executor:expr, $workspace_id:expr, $storable:expr) => {{
        let storable: &$crate::audit_events::StorableAuditEvent = &$storable;
        let event = &storable.event;
        sqlx::query_scalar::<_, i64>(
            "INSERT INTO audit_log (workspace_id, at, actor, action, target, details, user_id, \
             conversation_id, server_name, tool_name, status, duration_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
        )
        .bind($workspace_id.as_str())
        .bind(storable.at)
        .bind(&event.actor)
        .bind(&event.action)
        .bind(&event.target)
        .bind(sqlx::types::Json(&storable.details))
        .bind(event.user_id.as_ref().map(switchboard_core::UserId::as_str))
        .bind(
            event
                .conversation_id
                .as_ref()
                .map(switchboard_core::ConversationId::as_str),
        )
        .bind(&event.server_name)
        .bind(&event.tool_name)
        .bind(&event.status)
        .bind(event.duration_ms)
        .fetch_one($executor)
        .await
    }};
}
pub(crate) use insert_audit_event;

impl Store {
    /// Appends an event (details redacted) and returns it as stored.
    pub async fn append_audit_event(
        &self,
        workspace_id: &WorkspaceId,
        event: NewAuditEvent,
    ) -> StoreResult<AuditEventRecord> {
        let event = StorableAuditEvent::new(event)?;
        let id: i64 = on_backend!(self, |pool| insert_audit_event!(pool, workspace_id, event))
            .map_err(insert_error("audit event", "id", "workspace"))?;
        Ok(event.into_record(workspace_id, id))
    }

    /// The workspace's events matching `search`, newest first (at most
    /// [`MAX_AUDIT_SEARCH_PAGE`]). Entries written with `append_audit` appear too, with the
    /// structured columns empty.
    pub async fn search_audit(
        &self,
        workspace_id: &WorkspaceId,
        search: AuditSearch,
    ) -> StoreResult<Vec<AuditEventRecord>> {
        validate::page_limit(search.limit, MAX_AUDIT_SEARCH_PAGE)?;
        if let (Some(from), Some(to)) = (search.from, search.to)
            && from >= to
        {
            return Err(StoreError::invalid("from", "must be before `to`"));
        }
        let (action_exact, action_prefix) = match search.action.as_deref() {
            Some(action) if action.ends_with('.') => (None, Some(like_prefix(action))),
            Some(action) => (Some(action.to_owned()), None),
            None => (None, None),
        };
        let from = search.from.map(clock::truncate_to_micros);
        let to = search.to.map(clock::truncate_to_micros);
        let rows: Vec<AuditEventRow> = on_backend!(self, |pool| sqlx::query_as(concat!(
            select_audit_events!(),
            "WHERE workspace_id = $1 AND ($2 IS NULL OR at >= $2) AND ($3 IS NULL OR at < $3) \
             AND ($4 IS NULL OR server_name = $4) AND ($5 IS NULL OR tool_name = $5) \
             AND ($6 IS NULL OR user_id = $6 OR actor = $6) AND ($7 IS NULL OR status = $7) \
             AND ($8 IS NULL OR action = $8) AND ($9 IS NULL OR action LIKE $9 ESCAPE '\\') \
             AND ($10 IS NULL OR id < $10) ORDER BY id DESC LIMIT $11"
        ))
        .bind(workspace_id.as_str())
        .bind(from)
        .bind(to)
        .bind(&search.server_name)
        .bind(&search.tool_name)
        .bind(&search.user)
        .bind(&search.status)
        .bind(&action_exact)
        .bind(&action_prefix)
        .bind(search.before_id)
        .bind(search.limit)
        .fetch_all(pool)
        .await)?;
        Ok(rows.into_iter().map(AuditEventRecord::from).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::like_prefix;

    #[test]
    fn like_prefix_escapes_wildcards() {
        assert_eq!(like_prefix("tool_call."), "tool\\_call.%");
        assert_eq!(like_prefix("a%b\\"), "a\\%b\\\\%");
    }
}
