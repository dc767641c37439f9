//! `GET /api/audit` (scope `admin`): the workspace's audit log, newest first — every tool
//! call, approval and elicitation outcome, server connection event and configuration change.
//!
//! Filters (all optional, combined): `from`, `to` (RFC 3339; `from` inclusive, `to`
//! exclusive), `server`, `tool`, `user` (the user id the event concerns, or its actor),
//! `status` (`completed`, `failed`, `denied`, `unknown`, `approved`, `expired`, `connect`,
//! `disconnect`, `error`, `changed`…), `action` (exact, or a prefix ending in `.` such as
//! `tool_call.`). Paging: `limit` (1–500, default 50) and `cursor` (the `next_cursor` of the
//! previous page; `null` on the last page). Answer: `{"entries": [entry…], "next_cursor": "…" | null}`; arguments and
//! details were redacted before they were stored.

use crate::auth::{Scoped, scopes};
use crate::error::ApiError;
use crate::error::ErrorBody;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Query, State};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchboard_core::{ConversationId, UserId};
use switchboard_store::{AuditEventRecord, AuditSearch};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

const DEFAULT_PAGE: i64 = 50;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(search_audit))
}

/// The filters and paging of `GET /api/audit`; all optional, combined. Empty values mean
/// "any". Times are strings so that a bad one is answered in our words.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct AuditQuery {
    /// Inclusive, RFC 3339 (e.g. `2026-11-22T09:30:00Z`).
    from: Option<String>,
    /// Exclusive, RFC 3339.
    to: Option<String>,
    /// A server's name.
    server: Option<String>,
    /// A tool's name.
    tool: Option<String>,
    /// The user id the event concerns, or its actor.
    user: Option<String>,
    /// e.g. `completed`, `failed`, `denied`, `unknown`, `approved`, `expired`, `connect`,
    /// `disconnect`, `error`, `changed`.
    status: Option<String>,
    /// Exact, or a prefix ending in `.` such as `tool_call.`.
    action: Option<String>,
    /// Entries per page, 1–500 (default 50).
    limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    cursor: Option<String>,
}

/// An RFC 3339 time parameter (`from`, `to`); empty means "any".
fn time_parameter(name: &str, value: Option<String>) -> Result<Option<DateTime<Utc>>, ApiError> {
    let Some(text) = given(value) else {
        return Ok(None);
    };
    DateTime::parse_from_rfc3339(&text)
        .map(|time| Some(time.with_timezone(&Utc)))
        .map_err(|_| {
            ApiError::Unprocessable(format!(
                "`{name}`: '{text}' is not an RFC 3339 time (e.g. 2026-11-22T09:30:00Z)"
            ))
        })
}

/// Empty query values (`?server=`) mean "any".
fn given(value: Option<String>) -> Option<String> {
    value
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// One audit log entry. Arguments and details were redacted before they were stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditEntryView {
    /// Increasing: later entries have larger ids.
    pub id: i64,
    pub at: DateTime<Utc>,
    /// e.g. `tool_call.completed`, `approval.approved`, `server.connect`, `token.created`.
    pub action: String,
    /// Who acted (a user id when a person did).
    pub actor: String,
    pub target: Option<String>,
    #[schema(value_type = Option<String>)]
    pub user_id: Option<UserId>,
    #[schema(value_type = Option<String>)]
    pub conversation_id: Option<ConversationId>,
    pub server_name: Option<String>,
    pub tool_name: Option<String>,
    pub status: Option<String>,
    pub duration_ms: Option<i64>,
    /// `details.decision`, when the entry records one.
    pub decision: Option<String>,
    /// `details.decided_by`, when the entry records one.
    pub decided_by: Option<String>,
    /// Everything else the entry recorded; its keys depend on `action`.
    #[schema(value_type = Object)]
    pub details: Value,
}

impl From<AuditEventRecord> for AuditEntryView {
    fn from(entry: AuditEventRecord) -> Self {
        let detail = |key: &str| {
            entry
                .details
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        Self {
            decision: detail("decision"),
            decided_by: detail("decided_by"),
            id: entry.id,
            at: entry.at,
            action: entry.action,
            actor: entry.actor,
            target: entry.target,
            user_id: entry.user_id,
            conversation_id: entry.conversation_id,
            server_name: entry.server_name,
            tool_name: entry.tool_name,
            status: entry.status,
            duration_ms: entry.duration_ms,
            details: entry.details,
        }
    }
}

/// A page of the audit log, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditPage {
    pub entries: Vec<AuditEntryView>,
    /// The `cursor` of the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// Search the workspace's audit log, newest first.
#[utoipa::path(
    get,
    path = "/audit",
    tag = "audit",
    params(AuditQuery),
    responses(
        (status = 200, description = "A page of entries", body = AuditPage),
        (status = 400, description = "An unknown query parameter", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks the `admin` scope", body = ErrorBody),
        (status = 422, description = "A bad time, cursor or limit", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn search_audit(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Query(query): Query<AuditQuery>,
) -> Result<Json<AuditPage>, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    let before_id =
        match given(query.cursor) {
            Some(cursor) => Some(cursor.parse::<i64>().ok().filter(|id| *id > 0).ok_or_else(
                || {
                    ApiError::Unprocessable(format!(
                        "cursor: '{cursor}' is not a cursor from a previous page"
                    ))
                },
            )?),
            None => None,
        };
    let search = AuditSearch {
        from: time_parameter("from", query.from)?,
        to: time_parameter("to", query.to)?,
        server_name: given(query.server),
        tool_name: given(query.tool),
        user: given(query.user),
        status: given(query.status),
        action: given(query.action),
        before_id,
        limit,
    };
    let entries = state
        .store
        .search_audit(&principal.workspace_id, search.clone())
        .await?;
    // A full page has a next one only if an older entry matches: look one entry ahead, so the
    // last page never points at an empty one.
    let next_cursor = match entries.last() {
        Some(last) if entries.len() as i64 == limit => {
            let older = state
                .store
                .search_audit(
                    &principal.workspace_id,
                    AuditSearch {
                        before_id: Some(last.id),
                        limit: 1,
                        ..search
                    },
                )
                .await?;
            (!older.is_empty()).then(|| last.id.to_string())
        }
        _ => None,
    };
    Ok(Json(AuditPage {
        entries: entries.into_iter().map(AuditEntryView::from).collect(),
        next_cursor,
    }))
}
