//! `GET /chat/conversations/{id}/attachment-updates` → a stream of Server-Sent Events that keeps
//! the resources attached to the conversation's questions current while the caller holds it
//! (the UI does while the conversation is open): first `watching` (how many attached resources
//! are watched: those whose servers offer subscriptions), then one `attachment_updated` each
//! time a server says one changed and it was read again (its new contents stored with the
//! questions, for the next turn's model). Nothing to watch: the stream ends after `watching`.
//! Authorised like the conversation.

use super::chat_service;
use super::sse::sse_message_schema;
use super::stream::bearer_token;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde::Serialize;
use std::convert::Infallible;
use switchboard_chat::{AttachmentUpdate, AttachmentWatch, UserCredential};
use switchboard_core::ConversationId;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(attachment_updates))
}

/// One event of the attachment-updates stream, tagged with its `type`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AttachmentWatchEvent {
    /// The watch is in place: `watched` attached resources are followed.
    Watching { watched: usize },
    /// An attached resource changed and was read again.
    AttachmentUpdated(AttachmentUpdatedEvent),
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AttachmentUpdatedEvent {
    /// The server's name in the conversation and the resource's URI, as attached.
    pub server: String,
    pub uri: String,
    pub refreshed_at: DateTime<Utc>,
    /// The stored questions whose attachment now holds the new contents.
    pub message_ids: Vec<String>,
}

impl From<AttachmentUpdate> for AttachmentWatchEvent {
    fn from(update: AttachmentUpdate) -> Self {
        AttachmentWatchEvent::AttachmentUpdated(AttachmentUpdatedEvent {
            server: update.server,
            uri: update.uri,
            refreshed_at: update.refreshed_at,
            message_ids: update
                .message_ids
                .into_iter()
                .map(|id| id.as_str().to_owned())
                .collect(),
        })
    }
}

/// The stream's messages, for the OpenAPI document.
#[derive(Debug)]
pub struct AttachmentWatchMessage;

impl utoipa::PartialSchema for AttachmentWatchMessage {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        sse_message_schema("AttachmentWatchEvent")
    }
}

impl ToSchema for AttachmentWatchMessage {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        schemas.push((
            AttachmentWatchEvent::name().into_owned(),
            <AttachmentWatchEvent as utoipa::PartialSchema>::schema(),
        ));
        <AttachmentWatchEvent as ToSchema>::schemas(schemas);
    }
}

/// Follows the conversation's attached resources while the stream is open.
#[utoipa::path(
    get,
    path = "/chat/conversations/{conversation_id}/attachment-updates",
    tag = "chat",
    security(("bearer" = [])),
    params(("conversation_id" = String, Path, description = "The conversation")),
    responses(
        (status = 200, description = "`watching`, then each update of an attached resource", content_type = "text/event-stream", body = AttachmentWatchMessage),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's", body = ErrorBody),
        (status = 422, description = "The conversation's MCP configuration is not usable", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn attachment_updates(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    headers: HeaderMap,
    Path(conversation_id): Path<String>,
) -> Result<Response, ApiError> {
    let chat = chat_service(&state)?;
    let credential = bearer_token(&headers).map(UserCredential::new);
    let watch = chat
        .watch_attachments(
            &principal,
            credential.as_ref(),
            &ConversationId::from(conversation_id),
        )
        .await?;
    Ok(event_stream(watch, chat.config().heartbeat_interval()))
}

fn event_stream(watch: AttachmentWatch, heartbeat: std::time::Duration) -> Response {
    let first = AttachmentWatchEvent::Watching {
        watched: watch.watched,
    };
    let updates = futures::stream::unfold(watch, |mut watch| async move {
        let update = watch.updates.recv().await?;
        Some((AttachmentWatchEvent::from(update), watch))
    });
    let events = futures::stream::once(async move { first })
        .chain(updates)
        .map(|event| Ok::<Event, Infallible>(Event::default().data(event_data(&event))));
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(heartbeat).text("heartbeat"))
        .into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-transform"),
    );
    response
}

fn event_data(event: &AttachmentWatchEvent) -> String {
    serde_json::to_string(event).unwrap_or_else(|_| String::from("{}"))
}
