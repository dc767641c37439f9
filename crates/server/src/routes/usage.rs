//! Token usage (scope `chat:use`), summed from the usage each answer's LLM steps reported and
//! stored with their messages:
//!
//! - `GET /chat/conversations/{id}/usage` — one conversation (its owner or an admin);
//! - `GET /api/usage?user_id=&since=` — a person's conversations: the caller's own, another
//!   person's for an admin only (403);
//! - `GET /api/usage/workspace?since=` — the whole workspace (admins).
//!
//! Each answer gives the totals and the same counts by named provider and model.

use super::chat::chat_service;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchboard_chat::{UsageReport, UsageScope};
use switchboard_core::{ConversationId, UserId};
use switchboard_store::UsageRow;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The routes under `/api`.
pub fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(user_usage))
        .routes(routes!(workspace_usage))
}

/// The routes beside the chat API (`/chat/…`).
pub fn chat_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(conversation_usage))
}

/// Token counts (every count is a sum over LLM steps that reported usage).
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenCounts {
    /// LLM steps counted.
    pub steps: i64,
    /// Every prompt token, cached or not.
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// Of `input_tokens`, those read from the provider's prompt cache (where reported).
    pub cache_read_tokens: i64,
    /// Of `input_tokens`, those written to the provider's prompt cache (where reported).
    pub cache_write_tokens: i64,
}

/// Token counts of one named provider and model.
#[derive(Debug, Serialize, ToSchema)]
pub struct ModelUsage {
    /// The named provider (its kind for answers stored before names were recorded).
    pub provider: String,
    pub model: String,
    #[serde(flatten)]
    pub counts: TokenCounts,
}

/// Usage totals, overall and by provider and model.
#[derive(Debug, Serialize, ToSchema)]
pub struct UsageBody {
    /// Counted from this instant on; `null`: all time.
    pub since: Option<DateTime<Utc>>,
    pub total: TokenCounts,
    pub by_model: Vec<ModelUsage>,
}

fn counts(row: &UsageRow) -> TokenCounts {
    TokenCounts {
        steps: row.steps,
        input_tokens: row.input_tokens,
        output_tokens: row.output_tokens,
        cache_read_tokens: row.cache_read_tokens,
        cache_write_tokens: row.cache_write_tokens,
    }
}

fn usage_body(report: &UsageReport, since: Option<DateTime<Utc>>) -> UsageBody {
    UsageBody {
        since,
        total: counts(&report.total),
        by_model: report
            .by_model
            .iter()
            .map(|row| ModelUsage {
                provider: row.provider.clone(),
                model: row.model.clone(),
                counts: counts(row),
            })
            .collect(),
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct SinceQuery {
    /// Count only what was answered from this instant on (RFC 3339).
    #[serde(default)]
    since: Option<DateTime<Utc>>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct UserUsageQuery {
    /// Whose usage: the caller's own when absent; another person's for admins only.
    #[serde(default)]
    user_id: Option<String>,
    /// Count only what was answered from this instant on (RFC 3339).
    #[serde(default)]
    since: Option<DateTime<Utc>>,
}

/// Token usage of one conversation.
#[utoipa::path(
    get,
    path = "/chat/conversations/{conversation_id}/usage",
    tag = "chat",
    security(("bearer" = [])),
    params(("conversation_id" = String, Path, description = "The conversation"), SinceQuery),
    responses(
        (status = 200, description = "The conversation's totals", body = UsageBody),
        (status = 400, description = "A bad query parameter", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn conversation_usage(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(conversation_id): Path<String>,
    Query(query): Query<SinceQuery>,
) -> Result<Json<UsageBody>, ApiError> {
    let scope = UsageScope::Conversation(ConversationId::from(conversation_id));
    let report = chat_service(&state)?
        .usage(&principal, scope, query.since)
        .await?;
    Ok(Json(usage_body(&report, query.since)))
}

/// Token usage of a person's conversations (the caller's own by default).
#[utoipa::path(
    get,
    path = "/usage",
    tag = "chat",
    security(("bearer" = [])),
    params(UserUsageQuery),
    responses(
        (status = 200, description = "The person's totals", body = UsageBody),
        (status = 400, description = "A bad query parameter", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`, or `user_id` names another \
            person and the caller is not an admin", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn user_usage(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Query(query): Query<UserUsageQuery>,
) -> Result<Json<UsageBody>, ApiError> {
    let user_id = query
        .user_id
        .map(UserId::from_string)
        .unwrap_or_else(|| principal.user_id.clone());
    let report = chat_service(&state)?
        .usage(&principal, UsageScope::User(user_id), query.since)
        .await?;
    Ok(Json(usage_body(&report, query.since)))
}

/// Token usage of the whole workspace (admins).
#[utoipa::path(
    get,
    path = "/usage/workspace",
    tag = "chat",
    security(("bearer" = [])),
    params(SinceQuery),
    responses(
        (status = 200, description = "The workspace's totals", body = UsageBody),
        (status = 400, description = "A bad query parameter", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `admin`", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn workspace_usage(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Query(query): Query<SinceQuery>,
) -> Result<Json<UsageBody>, ApiError> {
    let report = chat_service(&state)?
        .usage(&principal, UsageScope::Workspace, query.since)
        .await?;
    Ok(Json(usage_body(&report, query.since)))
}
