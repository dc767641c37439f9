//! The answer as Server-Sent Events.
//!
//! - `POST /chat/stream` `{conversation_id?, message, mcp_servers?, attachments?, prompt?}`
//!   (`conversationId`, the design's spelling, is accepted as an alias of `conversation_id`):
//!   stores the question (creating a conversation when no id is given) — after the messages of
//!   `prompt` (`prompts/get`), with the contents of its `attachments` (`resources/read`) — and
//!   streams the answer. A resource or prompt that cannot be fetched is 502. Refusals (unknown
//!   conversation, bad input, an answer already in flight → 409; the service shutting down →
//!   503 `shutting_down` with `Retry-After`) are plain JSON errors before any event.
//! - `GET /chat/{id}/stream`: attaches to the answer in flight — every event from its start,
//!   then live until `done` — or, when none is in flight, replays the last answer from the
//!   store (`meta` with `replay: true` … `done`).
//!
//! Each event is one `data:` line holding one JSON object with a `type`; a `: heartbeat`
//! comment is sent every `chat.heartbeat_secs` (15 s). When the last client of an answer
//! disconnects, the answer is cancelled (LLM request and tool calls) and what it produced is
//! kept.

use super::sse::SseMessage;
use super::{chat_service, sse};
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, BudgetExceededBody, ErrorBody};
use crate::mirrors;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Duration;
use switchboard_chat::{
    AttachmentRequest, ChatError, EphemeralServer, PromptRequest, TurnRequest, TurnStream,
    UserCredential,
};
use switchboard_core::{ConversationId, TransportKind};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(start_answer))
        .routes(routes!(attach_to_answer))
}

/// A question, in a new conversation (no id) or an existing one.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamBody {
    /// The conversation to continue; absent or empty starts a new one. Also accepted as
    /// `conversationId` (the design's spelling).
    #[serde(default, alias = "conversationId")]
    conversation_id: Option<String>,
    /// The question; may be empty (or absent) only when `prompt` is given.
    #[serde(default)]
    message: String,
    /// MCP servers for this answer only (not stored).
    #[serde(default)]
    mcp_servers: Vec<EphemeralServerBody>,
    /// Resources read now and given to the model with the question (stored with it); at most
    /// 10. See `GET /chat/context-items`.
    #[serde(default)]
    attachments: Vec<AttachmentBody>,
    /// A prompt whose messages (roles kept) go into the conversation before the answer.
    #[serde(default)]
    prompt: Option<PromptRunBody>,
}

/// A resource of one of the conversation's servers, attached to the question.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachmentBody {
    /// The server's name in the conversation.
    server: String,
    /// The resource's URI (a template's, with its variables filled in).
    uri: String,
}

/// A prompt of one of the conversation's servers, run from the slash menu.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptRunBody {
    server: String,
    name: String,
    #[serde(default)]
    arguments: BTreeMap<String, String>,
}

/// An MCP server used for one answer only.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EphemeralServerBody {
    name: String,
    url: String,
    /// Sent with every request to the server (write-only: never echoed).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Default `streamable_http`.
    #[serde(default)]
    #[schema(value_type = Option<mirrors::TransportKind>)]
    transport: Option<TransportKind>,
}

impl std::fmt::Debug for EphemeralServerBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EphemeralServerBody")
            .field("name", &self.name)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// Asks a question and streams the answer as Server-Sent Events: one `data:` line per event,
/// each a JSON object tagged by `type` (`meta` first, `done` last; `: heartbeat` comments
/// between).
#[utoipa::path(
    post,
    path = "/chat/stream",
    tag = "chat",
    security(("bearer" = [])),
    request_body = StreamBody,
    responses(
        (status = 200, description = "The answer's events", content_type = "text/event-stream", body = SseMessage,
            headers(
                ("x-conversation-id" = String, description = "The conversation answered in"),
                ("x-answer-source" = String, description = "`live` or `replay`"),
            )),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's", body = ErrorBody),
        (status = 409, description = "An answer is already being written in the conversation", body = ErrorBody),
        (status = 422, description = "Invalid input (an empty message, a bad MCP server, an attachment or prompt of a server the conversation cannot use)", body = ErrorBody),
        (status = 429, description = "A monthly token budget (the workspace's or the caller's) is used up: the budget and when it resets, with `Retry-After`", body = BudgetExceededBody),
        (status = 502, description = "An attached resource could not be read, or the prompt could not be fetched", body = ErrorBody),
        (status = 503, description = "The chat engine is not running or is shutting down (`shutting_down`, with `Retry-After`)", body = ErrorBody),
    )
)]
async fn start_answer(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    headers: HeaderMap,
    Json(body): Json<StreamBody>,
) -> Result<Response, ApiError> {
    let chat = chat_service(&state)?;
    let request = TurnRequest {
        conversation_id: body
            .conversation_id
            .filter(|id| !id.is_empty())
            .map(ConversationId::from),
        message: body.message,
        ephemeral_servers: body
            .mcp_servers
            .into_iter()
            .map(|server| EphemeralServer {
                name: server.name,
                url: server.url,
                headers: server.headers,
                transport: server.transport.unwrap_or(TransportKind::StreamableHttp),
            })
            .collect(),
        credential: bearer_token(&headers).map(UserCredential::new),
        attachments: body
            .attachments
            .into_iter()
            .map(|attachment| AttachmentRequest {
                server: attachment.server,
                uri: attachment.uri,
            })
            .collect(),
        prompt: body.prompt.map(|prompt| PromptRequest {
            server: prompt.server,
            name: prompt.name,
            arguments: prompt.arguments,
        }),
    };
    let turn = match chat.start_turn(&principal, request).await {
        Ok(turn) => turn,
        Err(ChatError::ShuttingDown) => return Ok(shutting_down()),
        Err(error) => return Err(error.into()),
    };
    Ok(event_stream(turn, chat.config().heartbeat_interval()))
}

/// How soon a client refused during a shutdown may try again (a restart, or another instance
/// behind the load balancer, which `/readyz` already steers to).
const RETRY_AFTER_SECS: &str = "5";

/// 503 `shutting_down` with `Retry-After`: the service is draining (answers already running
/// finish; new ones are refused).
fn shutting_down() -> Response {
    let body = crate::error::error_body(
        "shutting_down",
        "the service is shutting down: answers already running may finish, new ones are \
         refused; retry shortly",
    );
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, RETRY_AFTER_SECS)],
        Json(body),
    )
        .into_response()
}

/// Attaches to the answer in flight (every event from its start, then live until `done`), or
/// replays the last answer when none is (`meta.replay: true`).
#[utoipa::path(
    get,
    path = "/chat/{conversation_id}/stream",
    tag = "chat",
    security(("bearer" = [])),
    params(("conversation_id" = String, Path, description = "The conversation")),
    responses(
        (status = 200, description = "The answer's events", content_type = "text/event-stream", body = SseMessage,
            headers(
                ("x-conversation-id" = String, description = "The conversation answered in"),
                ("x-answer-source" = String, description = "`live` or `replay`"),
            )),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn attach_to_answer(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(conversation_id): Path<String>,
) -> Result<Response, ApiError> {
    let chat = chat_service(&state)?;
    let turn = chat
        .attach(&principal, &ConversationId::from(conversation_id))
        .await?;
    Ok(event_stream(turn, chat.config().heartbeat_interval()))
}

/// The caller's bearer token (already verified by the extractor), for our own MCP endpoint.
pub(super) fn bearer_token(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_owned())
        .filter(|token| !token.is_empty())
}

fn event_stream(turn: TurnStream, heartbeat: Duration) -> Response {
    let conversation_id = turn.conversation_id.clone();
    let live = turn.live;
    let events = turn
        .events
        .map(|event| Ok::<Event, Infallible>(Event::default().data(sse::event_data(&event))));
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(heartbeat).text("heartbeat"))
        .into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-transform"),
    );
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    if let Ok(value) = HeaderValue::from_str(conversation_id.as_str()) {
        headers.insert("x-conversation-id", value);
    }
    headers.insert(
        "x-answer-source",
        HeaderValue::from_static(if live { "live" } else { "replay" }),
    );
    response
}
