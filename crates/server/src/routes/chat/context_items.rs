//! Resources and prompts for the composer (issue 12):
//!
//! - `GET /chat/context-items?conversation_id=` → `{servers: [{server, resources,
//!   resource_templates, prompts}], failed: [{server, message}]}`: what the servers a turn of the
//!   conversation uses (no id: a new conversation's) offer to attach or run, listed live.
//! - `POST /chat/context-items/complete` `{conversation_id?, server, reference: {type: prompt,
//!   name} | {type: resource, uri}, argument: {name, value}, context_arguments?}` →
//!   `{values, total, has_more}`: the server's `completion/complete` for an argument of a prompt
//!   or a resource template.
//!
//! A question then attaches resources and runs a prompt through `POST /chat/stream`
//! (`attachments`, `prompt`). Items are typed here from MCP's JSON; an item a server sent that
//! does not have MCP's shape is left out.

use super::chat_service;
use super::stream::bearer_token;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use switchboard_chat::{CompletionRequest, ServerContextItems, UserCredential};
use switchboard_core::ConversationId;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(context_items))
        .routes(routes!(complete_argument))
}

/// What the conversation's servers offer to attach and run.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContextItemsBody {
    pub servers: Vec<ServerItemsBody>,
    /// Servers that could not be listed just now.
    pub failed: Vec<FailedServerBody>,
}

/// One server's resources, templates and prompts.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServerItemsBody {
    /// The server's name in the conversation (what `attachments[].server` and `prompt.server`
    /// take).
    pub server: String,
    pub resources: Vec<ResourceItem>,
    pub resource_templates: Vec<ResourceTemplateItem>,
    pub prompts: Vec<PromptItem>,
}

/// A server that could not be listed.
#[derive(Debug, Serialize, ToSchema)]
pub struct FailedServerBody {
    pub server: String,
    pub message: String,
}

/// A resource (MCP `resources/list`).
#[derive(Debug, Deserialize, Serialize, ToSchema)]
pub struct ResourceItem {
    pub uri: String,
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default, alias = "mimeType")]
    pub mime_type: Option<String>,
}

/// A resource template (MCP `resources/templates/list`): its RFC 6570 `uri_template`.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
pub struct ResourceTemplateItem {
    #[serde(alias = "uriTemplate")]
    pub uri_template: String,
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default, alias = "mimeType")]
    pub mime_type: Option<String>,
}

/// A prompt (MCP `prompts/list`), run as `/server:name`.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
pub struct PromptItem {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub arguments: Vec<PromptArgumentItem>,
}

/// An argument of a prompt.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
pub struct PromptArgumentItem {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub required: bool,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ContextItemsQuery {
    /// The conversation whose servers to list; omit it for a new conversation's.
    #[serde(default)]
    conversation_id: Option<String>,
}

/// Lists the resources, resource templates and prompts the conversation's servers offer.
#[utoipa::path(
    get,
    path = "/chat/context-items",
    tag = "chat",
    security(("bearer" = [])),
    params(ContextItemsQuery),
    responses(
        (status = 200, description = "Every server's items (servers that failed in `failed`)", body = ContextItemsBody),
        (status = 400, description = "A query that cannot be read (an encoded NUL character, a malformed parameter)", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's", body = ErrorBody),
        (status = 422, description = "The conversation's MCP configuration is not usable", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn context_items(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    headers: HeaderMap,
    Query(query): Query<ContextItemsQuery>,
) -> Result<Json<ContextItemsBody>, ApiError> {
    let conversation_id = conversation_id(query.conversation_id);
    let credential = bearer_token(&headers).map(UserCredential::new);
    let items = chat_service(&state)?
        .context_items(&principal, credential.as_ref(), conversation_id.as_ref())
        .await?;
    Ok(Json(ContextItemsBody {
        servers: items.servers.into_iter().map(server_items).collect(),
        failed: items
            .failed
            .into_iter()
            .map(|(server, message)| FailedServerBody { server, message })
            .collect(),
    }))
}

fn conversation_id(id: Option<String>) -> Option<ConversationId> {
    id.filter(|id| !id.is_empty()).map(ConversationId::from)
}

fn server_items(items: ServerContextItems) -> ServerItemsBody {
    ServerItemsBody {
        server: items.server,
        resources: typed(items.resources),
        resource_templates: typed(items.resource_templates),
        prompts: typed(items.prompts),
    }
}

/// The items that have MCP's shape.
fn typed<T: serde::de::DeserializeOwned>(items: Vec<Value>) -> Vec<T> {
    items
        .into_iter()
        .filter_map(|item| serde_json::from_value(item).ok())
        .collect()
}

/// An argument to complete, with what is filled in so far.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteBody {
    /// The conversation whose servers to ask; omit it for a new conversation's.
    #[serde(default)]
    conversation_id: Option<String>,
    server: String,
    reference: CompletionReference,
    argument: CompletionArgument,
    /// The other arguments already filled in (MCP's `context.arguments`).
    #[serde(default)]
    context_arguments: BTreeMap<String, String>,
}

/// What the argument belongs to: a prompt (by name) or a resource template (by URI template).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum CompletionReference {
    Prompt { name: String },
    Resource { uri: String },
}

/// The argument being typed.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompletionArgument {
    pub name: String,
    pub value: String,
}

/// The server's suggestions.
#[derive(Debug, Serialize, ToSchema)]
pub struct CompletionBody {
    /// At most 100, best first.
    pub values: Vec<String>,
    /// How many there are in all, when the server said.
    pub total: Option<u64>,
    pub has_more: bool,
}

/// MCP's `completion/complete` params.
#[derive(Serialize)]
struct McpCompleteParams<'a> {
    #[serde(rename = "ref")]
    reference: McpReference<'a>,
    argument: &'a CompletionArgument,
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<McpCompleteContext<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum McpReference<'a> {
    #[serde(rename = "ref/prompt")]
    Prompt { name: &'a str },
    #[serde(rename = "ref/resource")]
    Resource { uri: &'a str },
}

#[derive(Serialize)]
struct McpCompleteContext<'a> {
    arguments: &'a BTreeMap<String, String>,
}

/// MCP's `completion/complete` result.
#[derive(Debug, Default, Deserialize)]
struct McpCompletion {
    #[serde(default)]
    values: Vec<String>,
    #[serde(default)]
    total: Option<u64>,
    #[serde(default, rename = "hasMore")]
    has_more: Option<bool>,
}

/// Asks a server to complete an argument of one of its prompts or resource templates.
#[utoipa::path(
    post,
    path = "/chat/context-items/complete",
    tag = "chat",
    security(("bearer" = [])),
    request_body = CompleteBody,
    responses(
        (status = 200, description = "The server's suggestions", body = CompletionBody),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's", body = ErrorBody),
        (status = 422, description = "Not a server of this conversation (or a bad body)", body = ErrorBody),
        (status = 502, description = "The server failed to complete", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn complete_argument(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    headers: HeaderMap,
    Json(body): Json<CompleteBody>,
) -> Result<Json<CompletionBody>, ApiError> {
    let reference = match &body.reference {
        CompletionReference::Prompt { name } => McpReference::Prompt { name },
        CompletionReference::Resource { uri } => McpReference::Resource { uri },
    };
    let params = McpCompleteParams {
        reference,
        argument: &body.argument,
        context: (!body.context_arguments.is_empty()).then_some(McpCompleteContext {
            arguments: &body.context_arguments,
        }),
    };
    let params = serde_json::to_value(params)
        .map_err(|error| ApiError::Unprocessable(format!("completion: {error}")))?;
    let request = CompletionRequest {
        conversation_id: conversation_id(body.conversation_id),
        server: body.server,
        params,
    };
    let credential = bearer_token(&headers).map(UserCredential::new);
    let result = chat_service(&state)?
        .complete_argument(&principal, credential.as_ref(), request)
        .await?;
    let completion: McpCompletion = result
        .get("completion")
        .and_then(|completion| serde_json::from_value(completion.clone()).ok())
        .unwrap_or_default();
    Ok(Json(CompletionBody {
        has_more: completion.has_more.unwrap_or(false),
        total: completion.total,
        values: completion.values.into_iter().take(100).collect(),
    }))
}
