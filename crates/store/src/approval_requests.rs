//! Approval requests: a tool call of a conversation waiting for (or having received) a person's
//! decision. Stored with the conversation so a reload shows them; a request is decided at most
//! once (compare-and-set on `pending`); requests still pending when the process restarts are
//! marked `expired` at start-up, never silently lost.

use crate::backend::on_backend;
use crate::clock;
use crate::decision_notices::APPROVAL_PREFIX;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::pending_requests::{PendingKind, PendingRequest, PendingResolution};
use crate::storable::{clean_json, clean_optional_json, clean_optional_text, clean_text};
use crate::store::Store;
use crate::validate;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use std::fmt;
use std::str::FromStr;
use switchboard_core::{ApprovalId, ConversationId, ServerId, ToolCallId, UserId, WorkspaceId};

/// Most requests one list call returns.
pub const MAX_APPROVAL_PAGE: i64 = 500;

/// Where a request stands. Only `Pending` may change, once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApprovalStatus {
    Pending,
    Approved,
    Denied,
    /// Nobody decided in time, or the process restarted while it waited.
    Expired,
    /// The answer it belonged to ended (client gone, shutdown) before a decision.
    Cancelled,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::Expired => "expired",
            ApprovalStatus::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for ApprovalStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalStatus {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "pending" => Ok(ApprovalStatus::Pending),
            "approved" => Ok(ApprovalStatus::Approved),
            "denied" => Ok(ApprovalStatus::Denied),
            "expired" => Ok(ApprovalStatus::Expired),
            "cancelled" => Ok(ApprovalStatus::Cancelled),
            other => Err(format!(
                "unknown approval status '{other}' (expected pending, approved, denied, expired or cancelled)"
            )),
        }
    }
}

/// A request to record, in state `pending`.
#[derive(Clone, Debug, PartialEq)]
pub struct NewApprovalRequest {
    pub id: ApprovalId,
    pub conversation_id: ConversationId,
    /// The conversation's owner: who may decide (besides an admin).
    pub owner_user_id: UserId,
    pub tool_call_id: ToolCallId,
    pub llm_call_id: String,
    /// `None` for a server the request brought along (not registered).
    pub server_id: Option<ServerId>,
    pub server_name: String,
    pub tool_name: String,
    pub arguments: Value,
    /// The tool's description as shown for approval (already sanitised).
    pub description: String,
    /// What changed since the definition was pinned, if it did.
    pub diff: Option<Value>,
    pub expires_at: DateTime<Utc>,
}

/// How a pending request ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalResolution {
    /// Anything but `Pending`.
    pub status: ApprovalStatus,
    /// `once` or `always`, for decisions made by a person.
    pub remember: Option<String>,
    /// A user id, `timeout`, `restart`, `cancelled`.
    pub decided_by: String,
    pub reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalRequestRecord {
    pub id: ApprovalId,
    pub workspace_id: WorkspaceId,
    pub conversation_id: ConversationId,
    pub owner_user_id: UserId,
    pub tool_call_id: ToolCallId,
    pub llm_call_id: String,
    pub server_id: Option<ServerId>,
    pub server_name: String,
    pub tool_name: String,
    pub arguments: Value,
    pub description: String,
    pub diff: Option<Value>,
    pub status: ApprovalStatus,
    pub remember: Option<String>,
    pub decided_by: Option<String>,
    pub reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub decided_at: Option<DateTime<Utc>>,
}

/// Which requests to list (all filters optional), oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalRequestFilter {
    pub owner_user_id: Option<UserId>,
    pub conversation_id: Option<ConversationId>,
    pub status: Option<ApprovalStatus>,
    pub limit: i64,
}

impl Default for ApprovalRequestFilter {
    fn default() -> Self {
        Self {
            owner_user_id: None,
            conversation_id: None,
            status: None,
            limit: 100,
        }
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct ApprovalRequestRow {
    id: String,
    workspace_id: String,
    conversation_id: String,
    owner_user_id: String,
    tool_call_id: String,
    llm_call_id: String,
    server_id: Option<String>,
    server_name: String,
    tool_name: String,
    arguments: Json<Value>,
    description: String,
    diff: Option<Json<Value>>,
    status: String,
    remember: Option<String>,
    decided_by: Option<String>,
    reason: Option<String>,
    created_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    decided_at: Option<DateTime<Utc>>,
}

impl TryFrom<ApprovalRequestRow> for ApprovalRequestRecord {
    type Error = StoreError;

    fn try_from(row: ApprovalRequestRow) -> Result<Self, Self::Error> {
        Ok(ApprovalRequestRecord {
            id: ApprovalId::from_string(row.id),
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            conversation_id: ConversationId::from_string(row.conversation_id),
            owner_user_id: UserId::from_string(row.owner_user_id),
            tool_call_id: ToolCallId::from_string(row.tool_call_id),
            llm_call_id: row.llm_call_id,
            server_id: row.server_id.map(ServerId::from_string),
            server_name: row.server_name,
            tool_name: row.tool_name,
            arguments: row.arguments.0,
            description: row.description,
            diff: row.diff.map(|json| json.0),
            status: row.status.parse().map_err(StoreError::corrupt)?,
            remember: row.remember,
            decided_by: row.decided_by,
            reason: row.reason,
            created_at: row.created_at,
            expires_at: row.expires_at,
            decided_at: row.decided_at,
        })
    }
}

macro_rules! select_approval_requests {
    ($tail:literal) => {
        concat!(
            "SELECT id, workspace_id, conversation_id, owner_user_id, tool_call_id, llm_call_id, ",
            "server_id, server_name, tool_name, arguments, description, diff, status, remember, ",
            "decided_by, reason, created_at, expires_at, decided_at FROM approval_requests ",
            $tail
        )
    };
}

impl PendingRequest for ApprovalRequestRecord {
    type Row = ApprovalRequestRow;
    const KIND: PendingKind = PendingKind {
        table: "approval_requests",
        entity: "approval request",
        select: select_approval_requests!(""),
        resolved_by: "decided_by",
        resolved_at: "decided_at",
        notice_prefix: APPROVAL_PREFIX,
        expiry_extra: "reason = 'the service restarted while this request waited', ",
    };

    fn from_row(row: ApprovalRequestRow) -> StoreResult<Self> {
        Self::try_from(row)
    }

    fn status_name(&self) -> &'static str {
        self.status.as_str()
    }
}

impl Store {
    /// Records a pending request. `NotFound { entity: "conversation" }` when the conversation
    /// is not in the workspace.
    pub async fn create_approval_request(
        &self,
        workspace_id: &WorkspaceId,
        new_request: NewApprovalRequest,
    ) -> StoreResult<ApprovalRequestRecord> {
        if new_request.tool_name.is_empty() {
            return Err(StoreError::invalid("tool_name", "must not be empty"));
        }
        let now = clock::now();
        let mut record = ApprovalRequestRecord {
            id: new_request.id,
            workspace_id: workspace_id.clone(),
            conversation_id: new_request.conversation_id,
            owner_user_id: new_request.owner_user_id,
            tool_call_id: new_request.tool_call_id,
            llm_call_id: new_request.llm_call_id,
            server_id: new_request.server_id,
            server_name: new_request.server_name,
            tool_name: new_request.tool_name,
            arguments: new_request.arguments,
            description: new_request.description,
            diff: new_request.diff,
            status: ApprovalStatus::Pending,
            remember: None,
            decided_by: None,
            reason: None,
            created_at: now,
            expires_at: clock::truncate_to_micros(new_request.expires_at),
            decided_at: None,
        };
        for text in [
            &mut record.llm_call_id,
            &mut record.server_name,
            &mut record.tool_name,
            &mut record.description,
        ] {
            clean_text(text);
        }
        clean_json(&mut record.arguments);
        clean_optional_json(&mut record.diff);
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO approval_requests (id, workspace_id, conversation_id, owner_user_id, \
             tool_call_id, llm_call_id, server_id, server_name, tool_name, arguments, description, \
             diff, status, created_at, expires_at, instance_id) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16 \
             WHERE EXISTS (SELECT 1 FROM conversations WHERE workspace_id = $2 AND id = $3)"
        )
        .bind(record.id.as_str())
        .bind(workspace_id.as_str())
        .bind(record.conversation_id.as_str())
        .bind(record.owner_user_id.as_str())
        .bind(record.tool_call_id.as_str())
        .bind(&record.llm_call_id)
        .bind(record.server_id.as_ref().map(ServerId::as_str))
        .bind(&record.server_name)
        .bind(&record.tool_name)
        .bind(Json(&record.arguments))
        .bind(&record.description)
        .bind(record.diff.as_ref().map(Json))
        .bind(record.status.as_str())
        .bind(record.created_at)
        .bind(record.expires_at)
        .bind(self.owning_instance())
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))
        .map_err(insert_error("approval request", "id", "conversation"))
        .and_then(|inserted| {
            if inserted == 0 {
                Err(StoreError::not_found("conversation"))
            } else {
                Ok(())
            }
        })?;
        Ok(record)
    }

    pub async fn get_approval_request(
        &self,
        workspace_id: &WorkspaceId,
        approval_id: &ApprovalId,
    ) -> StoreResult<ApprovalRequestRecord> {
        self.get_pending_request(workspace_id, approval_id.as_str())
            .await
    }

    /// Moves a pending request to its final status, exactly once: a request that is no longer
    /// pending answers `Conflict` naming its status (a decision racing a timeout loses cleanly).
    pub async fn resolve_approval_request(
        &self,
        workspace_id: &WorkspaceId,
        approval_id: &ApprovalId,
        mut resolution: ApprovalResolution,
    ) -> StoreResult<ApprovalRequestRecord> {
        clean_optional_text(&mut resolution.reason);
        if resolution.decided_by.trim().is_empty() {
            return Err(StoreError::invalid("decided_by", "must not be empty"));
        }
        let columns = [
            ("remember", resolution.remember.as_deref()),
            ("decided_by", Some(resolution.decided_by.as_str())),
            ("reason", resolution.reason.as_deref()),
        ];
        self.resolve_pending_request(
            workspace_id,
            approval_id.as_str(),
            PendingResolution {
                status: resolution.status.as_str(),
                columns: &columns,
            },
        )
        .await
    }

    /// Requests matching `filter`, oldest first (at most [`MAX_APPROVAL_PAGE`]).
    pub async fn list_approval_requests(
        &self,
        workspace_id: &WorkspaceId,
        filter: ApprovalRequestFilter,
    ) -> StoreResult<Vec<ApprovalRequestRecord>> {
        validate::page_limit(filter.limit, MAX_APPROVAL_PAGE)?;
        let rows: Vec<ApprovalRequestRow> =
            on_backend!(self, |pool| sqlx::query_as(select_approval_requests!(
                "WHERE workspace_id = $1 AND ($2 IS NULL OR owner_user_id = $2) \
                 AND ($3 IS NULL OR conversation_id = $3) AND ($4 IS NULL OR status = $4) \
                 ORDER BY created_at, id LIMIT $5"
            ))
            .bind(workspace_id.as_str())
            .bind(filter.owner_user_id.as_ref().map(UserId::as_str))
            .bind(filter.conversation_id.as_ref().map(ConversationId::as_str))
            .bind(filter.status.map(ApprovalStatus::as_str))
            .bind(filter.limit)
            .fetch_all(pool)
            .await)?;
        rows.into_iter()
            .map(ApprovalRequestRecord::try_from)
            .collect()
    }

    /// Recovery of dead instances' requests (at start-up and in each sweep), across all
    /// workspaces: requests still pending whose process died become `expired` (decided by
    /// `restart`) so the conversation shows what happened. Requests waiting in live instances
    /// (other replicas, and this one) are left alone; see `instances`. Returns how many changed.
    pub async fn expire_pending_approval_requests(&self) -> StoreResult<u64> {
        let changed = self
            .expire_orphaned_requests::<ApprovalRequestRecord>()
            .await?;
        if changed > 0 {
            tracing::warn!(
                changed,
                "expired approval requests left pending by a restart"
            );
        }
        Ok(changed)
    }
}
