//! `GET /chat/conversations/{id}/app-preview?server_id=…&resource_uri=…&resource_sha256=…` →
//! the page of the MCP App a `tool_input_partial` event names, so the UI can show the app while
//! the model still writes the call's input (there is no tool call to ask for yet). Authorised
//! like the conversation; it serves only an app the workspace keeps, at the hash the event
//! named (a server synced again since → 409). The frame is adopted by the call once its
//! `mcp_tool` `started` event comes, and from then on uses the call's own app routes.

use super::apps::AppPageBody;
use super::chat_service;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use switchboard_core::{ConversationId, ServerId, ToolApp};
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(app_preview))
}

/// The app, as a `tool_input_partial` event's `app` names it.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AppPreviewQuery {
    server_id: String,
    resource_uri: String,
    resource_sha256: String,
}

/// The page of an app a call being written will show.
#[utoipa::path(
    get,
    path = "/chat/conversations/{conversation_id}/app-preview",
    tag = "chat",
    security(("bearer" = [])),
    params(
        ("conversation_id" = String, Path, description = "The conversation"),
        AppPreviewQuery,
    ),
    responses(
        (status = 200, description = "The app's page", body = AppPageBody),
        (status = 400, description = "A query that cannot be read (a missing or malformed parameter)", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's, or no such app in the workspace", body = ErrorBody),
        (status = 409, description = "The app changed since the event named it", body = ErrorBody),
        (status = 503, description = "The chat engine or the apps origin is not running", body = ErrorBody),
    )
)]
async fn app_preview(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(conversation_id): Path<String>,
    query: Result<Query<AppPreviewQuery>, QueryRejection>,
) -> Result<Json<AppPageBody>, ApiError> {
    let chat = chat_service(&state)?;
    let conversation_id = ConversationId::from(conversation_id);
    let Query(query) = match query {
        Ok(query) => query,
        Err(rejection) => {
            // Someone else's conversation is not there, whatever the query says.
            chat.require_visible_conversation(&principal, &conversation_id)
                .await?;
            return Err(ApiError::BadRequest(rejection.body_text()));
        }
    };
    let app = ToolApp {
        server_id: ServerId::from(query.server_id),
        resource_uri: query.resource_uri,
        resource_sha256: query.resource_sha256,
    };
    let resource = chat.app_preview(&principal, &conversation_id, &app).await?;
    Ok(Json(AppPageBody::of(
        &state,
        &principal.workspace_id,
        &app,
        &resource,
    )?))
}
