//! `GET /api/me`: who the bearer token belongs to — workspace, user, token and scopes. The web
//! UI calls it to decide what to show; any valid token may call it.

use crate::auth::Authenticated;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

pub fn router() -> Router<AppState> {
    Router::new().route("/me", get(me))
}

async fn me(
    State(state): State<AppState>,
    Authenticated(principal): Authenticated,
) -> Result<Json<Value>, ApiError> {
    let workspace = state.store.get_workspace(&principal.workspace_id).await?;
    Ok(Json(json!({
        "workspace": { "id": workspace.id, "name": workspace.name },
        "user_id": principal.user_id,
        "token_id": principal.token_id,
        "scopes": principal.scopes,
    })))
}
