//! The answer as Server-Sent Events.
//!
//! - `POST /chat/stream` `{conversationId?, message, mcp_servers?}`: stores the question
//!   (creating a conversation when no id is given) and streams the answer. Refusals (unknown
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

use super::{chat_service, sse};
use crate::auth::{Scoped, scopes};
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Duration;
use switchboard_chat::{ChatError, EphemeralServer, TurnRequest, TurnStream, UserCredential};
use switchboard_core::{ConversationId, TransportKind};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/chat/stream", post(start_answer))
        .route("/chat/{conversation_id}/stream", get(attach_to_answer))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StreamBody {
    #[serde(default, rename = "conversationId", alias = "conversation_id")]
    conversation_id: Option<String>,
    message: String,
    #[serde(default)]
    mcp_servers: Vec<EphemeralServerBody>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EphemeralServerBody {
    name: String,
    url: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
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
fn bearer_token(headers: &HeaderMap) -> Option<String> {
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
