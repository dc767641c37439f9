//! `GET /api/kg/changelog`: the schema's recent changes over the JSON API, newest first.
//!
//! Why it exists: the web UI's Knowledge graph page used to read the schema through our MCP
//! endpoint (`/mcp`), which takes bearer tokens only, so a person signed in with single
//! sign-on (a session cookie, no token) could not use the page. Two fixes were possible: teach
//! `/mcp` the session cookie, or move the page onto `/api/kg`. We moved the page: `/api/kg`
//! already accepts the cookie behind the one checked path every other page uses
//! ([`crate::auth`]: same-origin checks, the CSRF header on changes, the person's current role
//! and active state read on every request), and every read the page does was already here
//! (`GET /api/kg/schema` gives the version, the types and the relationship types) except the
//! changelog. Making `/mcp` accept an ambient credential would widen a protocol endpoint meant
//! for agents (its sessions are bound to a token, its verdicts cached per token, its clients
//! are not browsers) for the sake of one page, so `/mcp` stays bearer-only.

use super::ChangelogEntry;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Query, State};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Entries answered when `limit` is not given.
const DEFAULT_LIMIT: usize = 50;
/// The most entries one answer holds.
const MAX_LIMIT: usize = 500;

/// The paging of `GET /api/kg/changelog`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ChangelogQuery {
    /// Entries to answer, 1–500 (default 50).
    limit: Option<usize>,
}

/// `GET /api/kg/changelog` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChangelogView {
    /// The current schema version; `null` before the first one.
    pub current_version: Option<String>,
    /// How many changes the history holds (`changes` holds at most `limit` of them).
    pub total: usize,
    /// Newest first.
    pub changes: Vec<ChangelogEntry>,
}

/// The schema's changes, newest first.
#[utoipa::path(
    get,
    path = "/kg/changelog",
    tag = "kg",
    params(ChangelogQuery),
    responses(
        (status = 200, description = "The most recent changes", body = ChangelogView),
        (status = 400, description = "An unknown query parameter", body = ErrorBody),
        (status = 401, description = "No valid bearer token or session", body = ErrorBody),
        (status = 403, description = "The caller lacks `schema:read`, or a cross-site request with the session cookie", body = ErrorBody),
        (status = 422, description = "A `limit` out of range", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
pub(super) async fn schema_changelog(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::SchemaRead>,
    Query(query): Query<ChangelogQuery>,
) -> Result<Json<ChangelogView>, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::Unprocessable(format!(
            "limit: must be between 1 and {MAX_LIMIT}, got {limit}"
        )));
    }
    let graph = super::graph_of(&state, &principal).await?;
    let knowledge = graph.read();
    let history = knowledge.history();
    let (entries, total) = history
        .changes_since(None, limit)
        .map_err(super::kg_error)?;
    Ok(Json(ChangelogView {
        current_version: history.current().map(|version| version.version.clone()),
        total,
        changes: entries.into_iter().cloned().map(Into::into).collect(),
    }))
}
