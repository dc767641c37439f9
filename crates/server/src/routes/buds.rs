//! `/api/buds` (scope `chat:use`): assistant profiles — name, system prompt, provider and
//! model with their fallback chain (`fallbacks: [{provider, model?}]`), and
//! `mcp_config {servers?, available_tools?, disabled_tools?, tool_choice?}`
//! (`tool_choice`: `auto | none | required | {"function": "<server>.<tool>" or catalog name}`).
//! Server references must be servers of the caller's workspace (422 naming the field). Every
//! member sees the workspace's buds; only a bud's owner (its creator) or an admin changes or
//! deletes it (403 otherwise).

use super::chat::chat_service;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use crate::wire_common::audit_details;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchboard_approvals::ConfigurationChange;
use switchboard_chat::{BudInput, BudUpdate};
use switchboard_core::{BudId, Principal, UserId};
use switchboard_store::{BudFallback, BudRecord};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_buds, create_bud))
        .routes(routes!(get_bud, update_bud, delete_bud))
}

/// A bud (an assistant profile) as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct BudView {
    #[schema(value_type = String)]
    pub id: BudId,
    pub name: String,
    pub system_prompt: String,
    /// The LLM provider; the configured default when `null`.
    pub provider: Option<String>,
    /// The model; the provider's default when `null`.
    pub model: Option<String>,
    /// Tried in order when the provider before fails before answering (5xx, timeout, 429,
    /// 529, no connection).
    pub fallbacks: Vec<Fallback>,
    /// `{servers?, available_tools?, disabled_tools?, tool_choice?}` (see the README).
    #[schema(value_type = Object)]
    pub mcp_config: Value,
    /// Its creator (`null` for buds from before owners were recorded).
    #[schema(value_type = Option<String>)]
    pub owner_user_id: Option<UserId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One step of a bud's fallback chain.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Fallback {
    /// A provider by name (see `GET /api/llm/providers`).
    pub provider: String,
    /// The model asked; the provider's default when `null` or absent.
    #[serde(default)]
    pub model: Option<String>,
}

impl From<BudFallback> for Fallback {
    fn from(fallback: BudFallback) -> Self {
        Self {
            provider: fallback.provider,
            model: fallback.model,
        }
    }
}

impl From<Fallback> for BudFallback {
    fn from(fallback: Fallback) -> Self {
        Self {
            provider: fallback.provider,
            model: fallback.model,
        }
    }
}

impl From<BudRecord> for BudView {
    fn from(bud: BudRecord) -> Self {
        Self {
            id: bud.id,
            name: bud.name,
            system_prompt: bud.system_prompt,
            provider: bud.provider,
            model: bud.model,
            fallbacks: bud.fallbacks.into_iter().map(Fallback::from).collect(),
            mcp_config: bud.mcp_config,
            owner_user_id: bud.owner_user_id,
            created_at: bud.created_at,
            updated_at: bud.updated_at,
        }
    }
}

/// `GET /api/buds` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct BudList {
    pub buds: Vec<BudView>,
}

/// `POST /api/buds` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateBudBody {
    pub name: String,
    #[serde(default)]
    pub system_prompt: String,
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// At most 5, each a provider the workspace sees with a model it can answer with.
    #[serde(default)]
    pub fallbacks: Vec<Fallback>,
    /// `{servers?, available_tools?, disabled_tools?, tool_choice?}`; server references must
    /// be servers of the workspace.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub mcp_config: Value,
}

/// Create a bud; the caller becomes its owner.
#[utoipa::path(
    post,
    path = "/buds",
    tag = "buds",
    request_body = CreateBudBody,
    responses(
        (status = 201, description = "The new bud", body = BudView),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 422, description = "Invalid fields, naming the field", body = ErrorBody),
        (status = 503, description = "The chat engine is not running in this process", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn create_bud(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Json(body): Json<CreateBudBody>,
) -> Result<(StatusCode, Json<BudView>), ApiError> {
    let bud = chat_service(&state)?
        .create_bud(
            &principal,
            BudInput {
                name: body.name,
                system_prompt: body.system_prompt,
                provider: body.provider,
                model: body.model,
                mcp_config: body.mcp_config,
                fallbacks: body.fallbacks.into_iter().map(BudFallback::from).collect(),
            },
        )
        .await?;
    audit_bud(&state, &principal, "bud.created", &bud).await;
    Ok((StatusCode::CREATED, Json(bud.into())))
}

/// List the workspace's buds.
#[utoipa::path(
    get,
    path = "/buds",
    tag = "buds",
    responses(
        (status = 200, description = "Every bud of the workspace", body = BudList),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 503, description = "The chat engine is not running in this process", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn list_buds(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
) -> Result<Json<BudList>, ApiError> {
    let buds = chat_service(&state)?.list_buds(&principal).await?;
    Ok(Json(BudList {
        buds: buds.into_iter().map(BudView::from).collect(),
    }))
}

/// Read one bud.
#[utoipa::path(
    get,
    path = "/buds/{bud_id}",
    tag = "buds",
    params(("bud_id" = String, Path, description = "The bud's id")),
    responses(
        (status = 200, description = "The bud", body = BudView),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such bud in this workspace", body = ErrorBody),
        (status = 503, description = "The chat engine is not running in this process", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn get_bud(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(bud_id): Path<String>,
) -> Result<Json<BudView>, ApiError> {
    let bud = chat_service(&state)?
        .get_bud(&principal, &BudId::from(bud_id))
        .await?;
    Ok(Json(bud.into()))
}

/// `PATCH /api/buds/{bud_id}` body: only the fields given change; `provider` and `model`
/// take `null` to go back to the default.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateBudBody {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub system_prompt: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub provider: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub model: Option<Option<String>>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub mcp_config: Option<Value>,
    /// Replaces the fallback chain (`[]` removes it).
    #[serde(default)]
    pub fallbacks: Option<Vec<Fallback>>,
}

/// Absent → `None`; `null` → `Some(None)`; a value → `Some(Some(value))`.
fn nullable<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<String>>, D::Error> {
    Ok(Some(Option::<String>::deserialize(deserializer)?))
}

/// Change a bud (its owner or an admin).
#[utoipa::path(
    patch,
    path = "/buds/{bud_id}",
    tag = "buds",
    params(("bud_id" = String, Path, description = "The bud's id")),
    request_body = UpdateBudBody,
    responses(
        (status = 200, description = "The bud as it is now", body = BudView),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`, or the caller is neither the bud's owner nor an admin", body = ErrorBody),
        (status = 404, description = "No such bud in this workspace", body = ErrorBody),
        (status = 422, description = "Invalid fields, naming the field", body = ErrorBody),
        (status = 503, description = "The chat engine is not running in this process", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn update_bud(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(bud_id): Path<String>,
    Json(body): Json<UpdateBudBody>,
) -> Result<Json<BudView>, ApiError> {
    let bud = chat_service(&state)?
        .update_bud(
            &principal,
            &BudId::from(bud_id),
            BudUpdate {
                name: body.name,
                system_prompt: body.system_prompt,
                provider: body.provider,
                model: body.model,
                mcp_config: body.mcp_config,
                fallbacks: body
                    .fallbacks
                    .map(|fallbacks| fallbacks.into_iter().map(BudFallback::from).collect()),
            },
        )
        .await?;
    audit_bud(&state, &principal, "bud.updated", &bud).await;
    Ok(Json(bud.into()))
}

/// What the audit log keeps of a created or changed bud: what it is now.
#[derive(Debug, Serialize)]
struct BudDetails<'a> {
    name: &'a str,
    provider: Option<&'a str>,
    model: Option<&'a str>,
    fallbacks: &'a [BudFallback],
    mcp_config: &'a Value,
}

/// What the audit log keeps of a deleted bud: its id (the entry's target) only.
#[derive(Debug, Serialize)]
struct BudDeletedDetails {}

/// Bud changes are configuration changes: audited with what the bud is now.
async fn audit_bud(state: &AppState, principal: &Principal, action: &str, bud: &BudRecord) {
    state
        .approvals
        .audit()
        .configuration_change(
            principal,
            ConfigurationChange::new(
                action,
                bud.id.as_str(),
                audit_details(&BudDetails {
                    name: &bud.name,
                    provider: bud.provider.as_deref(),
                    model: bud.model.as_deref(),
                    fallbacks: &bud.fallbacks,
                    mcp_config: &bud.mcp_config,
                }),
            ),
        )
        .await;
}

/// Delete a bud (its owner or an admin).
#[utoipa::path(
    delete,
    path = "/buds/{bud_id}",
    tag = "buds",
    params(("bud_id" = String, Path, description = "The bud's id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`, or the caller is neither the bud's owner nor an admin", body = ErrorBody),
        (status = 404, description = "No such bud in this workspace", body = ErrorBody),
        (status = 503, description = "The chat engine is not running in this process", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn delete_bud(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(bud_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let bud_id = BudId::from(bud_id);
    chat_service(&state)?
        .delete_bud(&principal, &bud_id)
        .await?;
    state
        .approvals
        .audit()
        .configuration_change(
            &principal,
            ConfigurationChange::new(
                "bud.deleted",
                bud_id.as_str(),
                audit_details(&BudDeletedDetails {}),
            ),
        )
        .await;
    Ok(StatusCode::NO_CONTENT)
}
