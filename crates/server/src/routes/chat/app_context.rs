//! `PUT /chat/conversations/{id}/tool-calls/{tool_call_id}/app/model-context` `{content,
//! structured_content?}` → the stored context: an MCP App's `ui/update-model-context` (issue
//! 12), relayed by the web UI. Each update replaces the previous one of that app; the model
//! gets it with the call's result on the conversation's next turns (`chat::service::app_context`).
//! Text blocks only, at most `APP_MODEL_CONTEXT_MAX_BYTES` of JSON; authorised like the app
//! itself (someone else's conversation, or a call without an app → 404).

use super::chat_service;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use switchboard_chat::AppContextUpdate;
use switchboard_core::{ConversationId, ToolCallId};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(update_app_model_context))
}

/// A content block of an app's model context: text only (what the host advertises).
#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppContextBlock {
    Text { text: String },
}

/// An app's `ui/update-model-context`: replaces what the app told the model before.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AppModelContextRequest {
    /// Text blocks (absent: none).
    #[serde(default)]
    pub content: Vec<AppContextBlock>,
    /// The app's `structuredContent`: an object.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub structured_content: Option<Map<String, Value>>,
}

/// The context as stored, given to the model with the call's result on later turns.
#[derive(Debug, Serialize, ToSchema)]
pub struct AppModelContextBody {
    pub tool_call_id: String,
    pub content: Vec<AppContextBlock>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub structured_content: Option<Map<String, Value>>,
    pub updated_at: DateTime<Utc>,
}

/// An MCP App updates what the model knows of it.
#[utoipa::path(
    put,
    path = "/chat/conversations/{conversation_id}/tool-calls/{tool_call_id}/app/model-context",
    tag = "chat",
    security(("bearer" = [])),
    params(
        ("conversation_id" = String, Path, description = "The conversation"),
        ("tool_call_id" = String, Path, description = "The tool call the app is shown with"),
    ),
    request_body = AppModelContextRequest,
    responses(
        (status = 200, description = "Stored; the model gets it on the next turn", body = AppModelContextBody),
        (status = 400, description = "A body that is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's, tool call, or app", body = ErrorBody),
        (status = 409, description = "The app changed since the call was made", body = ErrorBody),
        (status = 415, description = "The body is not `application/json`", body = ErrorBody),
        (status = 422, description = "A body of the wrong shape (a block other than text), or a context over the size limit", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn update_app_model_context(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path((conversation_id, tool_call_id)): Path<(String, String)>,
    Json(body): Json<AppModelContextRequest>,
) -> Result<Json<AppModelContextBody>, ApiError> {
    let update = AppContextUpdate {
        texts: body
            .content
            .into_iter()
            .map(|AppContextBlock::Text { text }| text)
            .collect(),
        structured_content: body.structured_content,
    };
    let stored = chat_service(&state)?
        .update_app_model_context(
            &principal,
            &ConversationId::from(conversation_id),
            &ToolCallId::from(tool_call_id),
            update,
        )
        .await?;
    Ok(Json(AppModelContextBody {
        tool_call_id: stored.tool_call_id.as_str().to_owned(),
        content: stored.context["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .map(|text| AppContextBlock::Text {
                text: text.to_owned(),
            })
            .collect(),
        structured_content: stored.context["structuredContent"].as_object().cloned(),
        updated_at: stored.updated_at,
    }))
}
