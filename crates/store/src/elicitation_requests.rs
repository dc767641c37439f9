//! Elicitation requests: an upstream server asked the conversation's owner to fill in a form
//! during a tool call (`elicitation/create`). Only the question and the outcome are kept — the
//! answer's content goes back to the upstream and is never stored (it may be a secret).

use crate::backend::on_backend;
use crate::clock;
use crate::decision_notices::ELICITATION_PREFIX;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::pending_requests::{PendingKind, PendingRequest, PendingResolution};
use crate::storable::{clean_json, clean_text, storable_text};
use crate::store::Store;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use std::fmt;
use std::str::FromStr;
use switchboard_core::{ConversationId, ElicitationId, ToolCallId, UserId, WorkspaceId};

/// Where a request stands. Only `Pending` may change, once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElicitationStatus {
    Pending,
    Accepted,
    Declined,
    Cancelled,
    /// Nobody answered in time, or the process restarted while it waited (the upstream was
    /// told `cancel`).
    Expired,
}

impl ElicitationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitationStatus::Pending => "pending",
            ElicitationStatus::Accepted => "accepted",
            ElicitationStatus::Declined => "declined",
            ElicitationStatus::Cancelled => "cancelled",
            ElicitationStatus::Expired => "expired",
        }
    }
}

impl fmt::Display for ElicitationStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ElicitationStatus {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "pending" => Ok(ElicitationStatus::Pending),
            "accepted" => Ok(ElicitationStatus::Accepted),
            "declined" => Ok(ElicitationStatus::Declined),
            "cancelled" => Ok(ElicitationStatus::Cancelled),
            "expired" => Ok(ElicitationStatus::Expired),
            other => Err(format!("unknown elicitation status '{other}'")),
        }
    }
}

/// A request to record, in state `pending`.
#[derive(Clone, Debug, PartialEq)]
pub struct NewElicitationRequest {
    pub id: ElicitationId,
    pub conversation_id: ConversationId,
    pub owner_user_id: UserId,
    /// The call during which the upstream asked, when known.
    pub tool_call_id: Option<ToolCallId>,
    pub server_name: String,
    /// Already sanitised for display.
    pub message: String,
    pub requested_schema: Value,
    pub expires_at: DateTime<Utc>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ElicitationRequestRecord {
    pub id: ElicitationId,
    pub workspace_id: WorkspaceId,
    pub conversation_id: ConversationId,
    pub owner_user_id: UserId,
    pub tool_call_id: Option<ToolCallId>,
    pub server_name: String,
    pub message: String,
    pub requested_schema: Value,
    pub status: ElicitationStatus,
    /// A user id, `timeout`, `restart`, `cancelled`.
    pub responded_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub responded_at: Option<DateTime<Utc>>,
}

#[derive(sqlx::FromRow)]
pub(crate) struct ElicitationRequestRow {
    id: String,
    workspace_id: String,
    conversation_id: String,
    owner_user_id: String,
    tool_call_id: Option<String>,
    server_name: String,
    message: String,
    requested_schema: Json<Value>,
    status: String,
    responded_by: Option<String>,
    created_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    responded_at: Option<DateTime<Utc>>,
}

impl TryFrom<ElicitationRequestRow> for ElicitationRequestRecord {
    type Error = StoreError;

    fn try_from(row: ElicitationRequestRow) -> Result<Self, Self::Error> {
        Ok(ElicitationRequestRecord {
            id: ElicitationId::from_string(row.id),
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            conversation_id: ConversationId::from_string(row.conversation_id),
            owner_user_id: UserId::from_string(row.owner_user_id),
            tool_call_id: row.tool_call_id.map(ToolCallId::from_string),
            server_name: row.server_name,
            message: row.message,
            requested_schema: row.requested_schema.0,
            status: row.status.parse().map_err(StoreError::corrupt)?,
            responded_by: row.responded_by,
            created_at: row.created_at,
            expires_at: row.expires_at,
            responded_at: row.responded_at,
        })
    }
}

macro_rules! select_elicitation_requests {
    ($tail:literal) => {
        concat!(
            "SELECT id, workspace_id, conversation_id, owner_user_id, tool_call_id, server_name, ",
            "message, requested_schema, status, responded_by, created_at, expires_at, responded_at ",
            "FROM elicitation_requests ",
            $tail
        )
    };
}

impl PendingRequest for ElicitationRequestRecord {
    type Row = ElicitationRequestRow;
    const KIND: PendingKind = PendingKind {
        table: "elicitation_requests",
        entity: "elicitation request",
        select: select_elicitation_requests!(""),
        resolved_by: "responded_by",
        resolved_at: "responded_at",
        notice_prefix: ELICITATION_PREFIX,
        expiry_extra: "",
    };

    fn from_row(row: ElicitationRequestRow) -> StoreResult<Self> {
        Self::try_from(row)
    }

    fn status_name(&self) -> &'static str {
        self.status.as_str()
    }
}

impl Store {
    /// Records a pending request. `NotFound { entity: "conversation" }` when the conversation
    /// is not in the workspace.
    pub async fn create_elicitation_request(
        &self,
        workspace_id: &WorkspaceId,
        mut new_request: NewElicitationRequest,
    ) -> StoreResult<ElicitationRequestRecord> {
        // The message and schema come from the upstream: stored as every backend can hold them.
        clean_text(&mut new_request.server_name);
        clean_text(&mut new_request.message);
        clean_json(&mut new_request.requested_schema);
        let now = clock::now();
        let record = ElicitationRequestRecord {
            id: new_request.id,
            workspace_id: workspace_id.clone(),
            conversation_id: new_request.conversation_id,
            owner_user_id: new_request.owner_user_id,
            tool_call_id: new_request.tool_call_id,
            server_name: new_request.server_name,
            message: new_request.message,
            requested_schema: new_request.requested_schema,
            status: ElicitationStatus::Pending,
            responded_by: None,
            created_at: now,
            expires_at: clock::truncate_to_micros(new_request.expires_at),
            responded_at: None,
        };
        let inserted = on_backend!(self, |pool| {
            sqlx::query(
            "INSERT INTO elicitation_requests (id, workspace_id, conversation_id, owner_user_id, \
             tool_call_id, server_name, message, requested_schema, status, created_at, expires_at, \
             instance_id) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 \
             WHERE EXISTS (SELECT 1 FROM conversations WHERE workspace_id = $2 AND id = $3)"
        )
        .bind(record.id.as_str())
        .bind(workspace_id.as_str())
        .bind(record.conversation_id.as_str())
        .bind(record.owner_user_id.as_str())
        .bind(record.tool_call_id.as_ref().map(ToolCallId::as_str))
        .bind(&record.server_name)
        .bind(&record.message)
        .bind(Json(&record.requested_schema))
        .bind(record.status.as_str())
        .bind(record.created_at)
        .bind(record.expires_at)
        .bind(self.owning_instance())
        .execute(pool)
        .await
        .map(|result| result.rows_affected())
        })
        .map_err(insert_error("elicitation request", "id", "conversation"))?;
        if inserted == 0 {
            return Err(StoreError::not_found("conversation"));
        }
        Ok(record)
    }

    pub async fn get_elicitation_request(
        &self,
        workspace_id: &WorkspaceId,
        elicitation_id: &ElicitationId,
    ) -> StoreResult<ElicitationRequestRecord> {
        self.get_pending_request(workspace_id, elicitation_id.as_str())
            .await
    }

    /// Moves a pending request to `status`, exactly once (`Conflict` naming the status
    /// otherwise).
    pub async fn resolve_elicitation_request(
        &self,
        workspace_id: &WorkspaceId,
        elicitation_id: &ElicitationId,
        status: ElicitationStatus,
        responded_by: &str,
    ) -> StoreResult<ElicitationRequestRecord> {
        let responded_by = storable_text(responded_by);
        self.resolve_pending_request(
            workspace_id,
            elicitation_id.as_str(),
            PendingResolution {
                status: status.as_str(),
                columns: &[("responded_by", Some(&*responded_by))],
            },
        )
        .await
    }

    /// The pending requests of a user (all users when `None`), oldest first, at most 500.
    pub async fn list_pending_elicitation_requests(
        &self,
        workspace_id: &WorkspaceId,
        owner_user_id: Option<&UserId>,
    ) -> StoreResult<Vec<ElicitationRequestRecord>> {
        let rows: Vec<ElicitationRequestRow> =
            on_backend!(self, |pool| sqlx::query_as(select_elicitation_requests!(
                "WHERE workspace_id = $1 AND ($2 IS NULL OR owner_user_id = $2) \
                 AND status = 'pending' ORDER BY created_at, id LIMIT 500"
            ))
            .bind(workspace_id.as_str())
            .bind(owner_user_id.map(UserId::as_str))
            .fetch_all(pool)
            .await)?;
        rows.into_iter()
            .map(ElicitationRequestRecord::try_from)
            .collect()
    }

    /// Recovery of dead instances' forms (at start-up and in each sweep), across all
    /// workspaces: pending requests whose process died become `expired` (decided by
    /// `restart`); forms waiting in live instances are left alone. Returns how many changed.
    pub async fn expire_pending_elicitation_requests(&self) -> StoreResult<u64> {
        self.expire_orphaned_requests::<ElicitationRequestRecord>()
            .await
    }
}
