//! The chat API (scope `chat:use`), outside `/api` as the web UI calls it:
//!
//! - `POST /chat/conversations` `{bud_id?, title?, mcp_config_overrides?, provider?, model?}`
//!   → 201 conversation
//! - `GET /chat/conversations?limit=&cursor=` → `{conversations, next_cursor}` (own, newest
//!   activity first; each with `answer_in_flight`)
//! - `GET /chat/conversations/{id}` → `{conversation, messages, tool_calls}`
//! - `PATCH /chat/conversations/{id}` `{title?, mcp_config_overrides?, provider?, model?}`
//! - `DELETE /chat/conversations/{id}` → 204 (an answer in flight is cancelled first)
//! - `GET /chat/conversations/{id}/tool-calls/{tool_call_id}/result?offset=&limit=` → a page of
//!   the call's full result text
//! - `GET /chat/conversations/{id}/tool-calls/{tool_call_id}/app` → the call's MCP App
//!   ([`apps`]); `PUT …/app/model-context`, an app's `ui/update-model-context` ([`app_context`])
//! - `POST /chat/conversations/{id}/tool-calls/{tool_call_id}/cancel` → 202: cancels the task
//!   a call became ([`task_calls`])
//! - `POST /chat/stream`, `GET /chat/{id}/stream`: the answer as SSE ([`stream`]).
//! - `GET /chat/context-items`, `POST /chat/context-items/complete`: resources and prompts to
//!   attach and run ([`context_items`]).

mod app_context;
mod app_preview;
mod apps;
mod attachment_updates;
mod context_items;
mod sse;
mod stream;
mod task_calls;
pub(crate) mod wire;

use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;
use switchboard_chat::{ChatError, ChatService, ConversationUpdate, NewConversationInput};
use switchboard_core::{BudId, ConversationId, ToolCallId};
use switchboard_store::ConversationCursor;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use wire::{Conversation, ConversationDetailBody, ConversationPage, ToolResultPageBody};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_conversations, create_conversation))
        .routes(routes!(
            get_conversation,
            update_conversation,
            delete_conversation
        ))
        .routes(routes!(tool_result_page))
        .merge(stream::router())
        .merge(apps::router())
        .merge(app_preview::router())
        .merge(attachment_updates::router())
        .merge(context_items::router())
        .merge(app_context::router())
        .merge(task_calls::router())
}

/// The chat engine, or 503 when this process runs without one.
pub(crate) fn chat_service(state: &AppState) -> Result<&ChatService, ApiError> {
    state.chat.as_ref().ok_or_else(|| {
        ApiError::Unavailable("the chat engine is not running in this process".into())
    })
}

impl From<ChatError> for ApiError {
    fn from(error: ChatError) -> Self {
        match error {
            ChatError::NotFound(_) => ApiError::NotFound(error.to_string()),
            ChatError::InvalidInput { .. } | ChatError::McpConfig(_) => {
                ApiError::Unprocessable(error.to_string())
            }
            ChatError::Conflict(message) => ApiError::Conflict(message),
            ChatError::Upstream { .. } => ApiError::BadGateway(error.to_string()),
            ChatError::Forbidden(message) => ApiError::Forbidden(message),
            ChatError::ShuttingDown => ApiError::Unavailable(error.to_string()),
            ChatError::BudgetExceeded(exceeded) => ApiError::BudgetExceeded(exceeded),
            ChatError::Store(store_error) => ApiError::from(store_error),
        }
    }
}

/// A new conversation: with a bud (or the workspace's default), a title, MCP overrides.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateConversationBody {
    /// Omit it (or send `null`) for the workspace's default bud.
    #[serde(default)]
    bud_id: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    mcp_config_overrides: Option<Value>,
    /// A provider (by name, see `GET /api/llm/providers`) answering this conversation instead
    /// of its bud's; omit it to keep the bud's (or `default`).
    #[serde(default)]
    provider: Option<String>,
    /// The model asked (the provider's default when omitted; alone, it applies to the bud's
    /// provider).
    #[serde(default)]
    model: Option<String>,
}

/// Starts a conversation.
#[utoipa::path(
    post,
    path = "/chat/conversations",
    tag = "chat",
    security(("bearer" = [])),
    request_body = CreateConversationBody,
    responses(
        (status = 201, description = "Created", body = Conversation),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such bud", body = ErrorBody),
        (status = 422, description = "Invalid input (an unknown provider, a provider without \
            a model…)", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn create_conversation(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Json(body): Json<CreateConversationBody>,
) -> Result<(StatusCode, Json<Conversation>), ApiError> {
    if body
        .bud_id
        .as_deref()
        .is_some_and(|id| id.trim().is_empty())
    {
        return Err(ApiError::Unprocessable(
            "bud_id: must name a bud; omit it (or send null) for the workspace's default".into(),
        ));
    }
    let input = NewConversationInput {
        bud_id: body.bud_id.map(BudId::from_string),
        title: body.title,
        mcp_config_overrides: body.mcp_config_overrides,
        provider: body.provider,
        model: body.model,
    };
    let created = chat_service(&state)?
        .create_conversation(&principal, input)
        .await?;
    Ok((StatusCode::CREATED, Json(wire::conversation(&created))))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// At most this many (default 50).
    #[serde(default)]
    limit: Option<u32>,
    /// `next_cursor` of the previous page.
    #[serde(default)]
    cursor: Option<String>,
}

/// The caller's conversations, newest activity first.
#[utoipa::path(
    get,
    path = "/chat/conversations",
    tag = "chat",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, description = "One page", body = ConversationPage),
        (status = 400, description = "A bad query parameter or cursor", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn list_conversations(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Query(query): Query<ListQuery>,
) -> Result<Json<ConversationPage>, ApiError> {
    let after = query
        .cursor
        .as_deref()
        .filter(|cursor| !cursor.is_empty())
        .map(parse_cursor)
        .transpose()?;
    let page = chat_service(&state)?
        .list_conversations(&principal, query.limit.unwrap_or(50), after)
        .await?;
    Ok(Json(ConversationPage {
        conversations: page
            .conversations
            .iter()
            .map(|conversation| {
                wire::conversation_with_activity(
                    conversation,
                    page.answer_in_flight(&conversation.id),
                )
            })
            .collect(),
        next_cursor: page.next_cursor.as_ref().map(format_cursor),
    }))
}

/// `<microseconds since the epoch>.<conversation id>`: opaque to clients.
fn format_cursor(cursor: &ConversationCursor) -> String {
    format!("{}.{}", cursor.updated_at.timestamp_micros(), cursor.id)
}

fn parse_cursor(text: &str) -> Result<ConversationCursor, ApiError> {
    let invalid = || ApiError::BadRequest("`cursor` is not a cursor this API returned".into());
    let (micros, id) = text.split_once('.').ok_or_else(invalid)?;
    let micros: i64 = micros.parse().map_err(|_| invalid())?;
    let updated_at = DateTime::<Utc>::from_timestamp_micros(micros).ok_or_else(invalid)?;
    if id.is_empty() {
        return Err(invalid());
    }
    Ok(ConversationCursor {
        updated_at,
        id: ConversationId::from(id),
    })
}

/// A conversation with its messages and tool calls.
#[utoipa::path(
    get,
    path = "/chat/conversations/{conversation_id}",
    tag = "chat",
    security(("bearer" = [])),
    params(("conversation_id" = String, Path, description = "The conversation")),
    responses(
        (status = 200, description = "The conversation", body = ConversationDetailBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn get_conversation(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(conversation_id): Path<String>,
) -> Result<Json<ConversationDetailBody>, ApiError> {
    let detail = chat_service(&state)?
        .conversation_detail(&principal, &ConversationId::from(conversation_id))
        .await?;
    Ok(Json(wire::conversation_detail(&detail)))
}

/// A change to a conversation; absent fields stay as they are.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateConversationBody {
    #[serde(default)]
    title: Option<String>,
    /// Absent: unchanged; `null`: removed.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Object>)]
    mcp_config_overrides: Option<Option<Value>>,
    /// The conversation's own provider. Absent: unchanged; `null`: the bud's again.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    provider: Option<Option<String>>,
    /// The conversation's own model. Absent: unchanged; `null`: the provider's default (or
    /// the bud's model when the provider is the bud's).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    model: Option<Option<String>>,
}

/// Distinguishes an absent field (`None`) from an explicit `null` (`Some(None)`).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Renames a conversation or changes its MCP overrides or its provider and model.
#[utoipa::path(
    patch,
    path = "/chat/conversations/{conversation_id}",
    tag = "chat",
    security(("bearer" = [])),
    params(("conversation_id" = String, Path, description = "The conversation")),
    request_body = UpdateConversationBody,
    responses(
        (status = 200, description = "The conversation as changed", body = Conversation),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's", body = ErrorBody),
        (status = 422, description = "Invalid input", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn update_conversation(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(conversation_id): Path<String>,
    Json(body): Json<UpdateConversationBody>,
) -> Result<Json<Conversation>, ApiError> {
    let updated = chat_service(&state)?
        .update_conversation(
            &principal,
            &ConversationId::from(conversation_id),
            ConversationUpdate {
                title: body.title,
                mcp_config_overrides: body.mcp_config_overrides,
                provider: body.provider,
                model: body.model,
            },
        )
        .await?;
    Ok(Json(wire::conversation(&updated)))
}

/// Deletes a conversation (an answer in flight is cancelled first).
#[utoipa::path(
    delete,
    path = "/chat/conversations/{conversation_id}",
    tag = "chat",
    security(("bearer" = [])),
    params(("conversation_id" = String, Path, description = "The conversation")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn delete_conversation(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(conversation_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    chat_service(&state)?
        .delete_conversation(&principal, &ConversationId::from(conversation_id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct PageQuery {
    /// First character of the page (default 0).
    #[serde(default)]
    offset: usize,
    /// At most this many characters (default 65,536).
    #[serde(default)]
    limit: Option<usize>,
}

/// A page of a tool call's full result text.
#[utoipa::path(
    get,
    path = "/chat/conversations/{conversation_id}/tool-calls/{tool_call_id}/result",
    tag = "chat",
    security(("bearer" = [])),
    params(
        ("conversation_id" = String, Path, description = "The conversation"),
        ("tool_call_id" = String, Path, description = "The tool call (`tool_call_id` of the events)"),
        PageQuery,
    ),
    responses(
        (status = 200, description = "One page", body = ToolResultPageBody),
        (status = 400, description = "A bad query parameter", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation or tool call", body = ErrorBody),
        (status = 422, description = "Invalid paging", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn tool_result_page(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path((conversation_id, tool_call_id)): Path<(String, String)>,
    Query(query): Query<PageQuery>,
) -> Result<Json<ToolResultPageBody>, ApiError> {
    let page = chat_service(&state)?
        .tool_result_page(
            &principal,
            &ConversationId::from(conversation_id),
            &ToolCallId::from(tool_call_id),
            query.offset,
            query.limit.unwrap_or(64 * 1024),
        )
        .await?;
    Ok(Json(wire::tool_result_page(&page)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        let cursor = ConversationCursor {
            updated_at: DateTime::<Utc>::from_timestamp_micros(1_700_000_000_123_456).unwrap(),
            id: ConversationId::from("0190f5a2-0000-7000-8000-000000000000"),
        };
        assert_eq!(parse_cursor(&format_cursor(&cursor)).unwrap(), cursor);
        for bad in ["", "abc", "12.", "x.y"] {
            assert!(parse_cursor(bad).is_err(), "{bad}");
        }
    }
}
