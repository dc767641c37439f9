//! `/api/buds` (scope `chat:use`): assistant profiles — name, system prompt, provider and
//! model, and `mcp_config {servers?, available_tools?, disabled_tools?, tool_choice?}`
//! (`tool_choice`: `auto | none | required | {"function": "<server>.<tool>" or catalog name}`).
//! Server references must be servers of the caller's workspace (422 naming the field). Every
//! member sees the workspace's buds; only a bud's owner (its creator) or an admin changes or
//! deletes it (403 otherwise).

use super::chat::chat_service;
use crate::auth::{Scoped, scopes};
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use switchboard_approvals::ConfigurationChange;
use switchboard_chat::{BudInput, BudUpdate};
use switchboard_core::{BudId, Principal};
use switchboard_store::BudRecord;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/buds", get(list_buds).post(create_bud))
        .route(
            "/buds/{bud_id}",
            get(get_bud).patch(update_bud).delete(delete_bud),
        )
}

fn bud_view(bud: &BudRecord) -> Value {
    json!({
        "id": bud.id,
        "name": bud.name,
        "system_prompt": bud.system_prompt,
        "provider": bud.provider,
        "model": bud.model,
        "mcp_config": bud.mcp_config,
        "owner_user_id": bud.owner_user_id,
        "created_at": bud.created_at,
        "updated_at": bud.updated_at,
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateBudBody {
    name: String,
    #[serde(default)]
    system_prompt: String,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    mcp_config: Value,
}

async fn create_bud(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Json(body): Json<CreateBudBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let bud = chat_service(&state)?
        .create_bud(
            &principal,
            BudInput {
                name: body.name,
                system_prompt: body.system_prompt,
                provider: body.provider,
                model: body.model,
                mcp_config: body.mcp_config,
            },
        )
        .await?;
    audit_bud(&state, &principal, "bud.created", &bud).await;
    Ok((StatusCode::CREATED, Json(bud_view(&bud))))
}

async fn list_buds(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
) -> Result<Json<Value>, ApiError> {
    let buds = chat_service(&state)?.list_buds(&principal).await?;
    Ok(Json(
        json!({"buds": buds.iter().map(bud_view).collect::<Vec<_>>()}),
    ))
}

async fn get_bud(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(bud_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let bud = chat_service(&state)?
        .get_bud(&principal, &BudId::from(bud_id))
        .await?;
    Ok(Json(bud_view(&bud)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateBudBody {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    system_prompt: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    provider: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    model: Option<Option<String>>,
    #[serde(default)]
    mcp_config: Option<Value>,
}

/// Absent → `None`; `null` → `Some(None)`; a value → `Some(Some(value))`.
fn nullable<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<String>>, D::Error> {
    Ok(Some(Option::<String>::deserialize(deserializer)?))
}

async fn update_bud(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(bud_id): Path<String>,
    Json(body): Json<UpdateBudBody>,
) -> Result<Json<Value>, ApiError> {
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
            },
        )
        .await?;
    audit_bud(&state, &principal, "bud.updated", &bud).await;
    Ok(Json(bud_view(&bud)))
}

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
                json!({
                    "name": bud.name,
                    "provider": bud.provider,
                    "model": bud.model,
                    "mcp_config": bud.mcp_config,
                }),
            ),
        )
        .await;
}

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
            ConfigurationChange::new("bud.deleted", bud_id.as_str(), json!({})),
        )
        .await;
    Ok(StatusCode::NO_CONTENT)
}
