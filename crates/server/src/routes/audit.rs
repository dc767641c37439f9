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
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Value, json};
use switchboard_store::{AuditEventRecord, AuditSearch};

const DEFAULT_PAGE: i64 = 50;

pub fn router() -> Router<AppState> {
    Router::new().route("/audit", get(search_audit))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditQuery {
    from: Option<String>,
    to: Option<String>,
    server: Option<String>,
    tool: Option<String>,
    user: Option<String>,
    status: Option<String>,
    action: Option<String>,
    limit: Option<i64>,
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

pub fn audit_entry_view(entry: &AuditEventRecord) -> Value {
    json!({
        "id": entry.id,
        "at": entry.at,
        "action": entry.action,
        "actor": entry.actor,
        "target": entry.target,
        "user_id": entry.user_id,
        "conversation_id": entry.conversation_id,
        "server_name": entry.server_name,
        "tool_name": entry.tool_name,
        "status": entry.status,
        "duration_ms": entry.duration_ms,
        "decision": entry.details.get("decision"),
        "decided_by": entry.details.get("decided_by"),
        "details": entry.details,
    })
}

async fn search_audit(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Query(query): Query<AuditQuery>,
) -> Result<Json<Value>, ApiError> {
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
    Ok(Json(json!({
        "entries": entries.iter().map(audit_entry_view).collect::<Vec<_>>(),
        "next_cursor": next_cursor,
    })))
}
