//! The gateway's MCP face: an rmcp `ServerHandler` that serves `tools/list` and `tools/call`
//! (and tells a session's client when a list it has listed changes, [`list_changed`]), and
//! the aggregated resources, resource templates, prompts and completions ([`items`]), every
//! list paged ([`pages`]), for a [`GatewayBackend`] (the host's registered servers, their policies and approvals — the
//! server crate wires it to the chat engine and the approvals module), mounted with
//! [`gateway_router`] at `/gateway/mcp`, `/gateway/buds/{bud}/mcp` and
//! `/gateway/servers/{server}/mcp` (one server under its own names) behind the same guard
//! as `/mcp` (Host/Origin, bearer token, sessions), with `gateway:use` required of every
//! request (403 without it) and its own per-token rate limit ([`rate_limit`]).
//!
//! While a call runs, [`client_link`] carries what goes back to the client on its request's
//! stream: the approval question of an `ASK_USER` call as an elicitation form (to a client
//! that declared elicitation) and the upstream's progress under the client's `progressToken`;
//! the client's `notifications/cancelled` fires the call's cancellation token. What the
//! upstream itself asks or tells during the call — `elicitation/create`,
//! `sampling/createMessage`, `notifications/message` — is passed on by [`forwarding`] to a
//! client that declared the matching capability. `logging/setLevel` goes to the backend,
//! which applies it upstream; `resources/subscribe` becomes a watch the backend hands back,
//! whose updates the session is told until it unsubscribes or ends ([`resource_updates`]).
//!
//! This module owns the wire only: who is calling (the guard's [`Caller`], the bearer token,
//! the bud named by the path, `clientInfo.name`), the rmcp shapes, and the JSON-RPC errors
//! (an unknown or denied-by-rule tool is `-32602 unknown tool`, an unknown resource
//! `-32002`, an upstream's own JSON-RPC error is passed on with its code). It decides nothing
//! about policies and opens no upstream connection.

// Logging, sampling and resources/subscribe are deprecated by 2026-07-28; the gateway forwards
// them for the clients and upstreams of earlier protocol versions.
#![allow(deprecated)]

mod client_link;
mod forwarding;
mod items;
mod list_changed;
mod pages;
mod rate_limit;
mod resource_updates;

pub use client_link::{GatewayAsker, GatewayProgress};
pub use forwarding::{ForwardFailure, GatewayClientLink};
pub use pages::DEFAULT_PAGE_SIZE;
pub use resource_updates::ResourceUpdates;

use crate::auth::{Caller, bearer_token};
use crate::http::{McpHttpSettings, streamable_router_at};
use async_trait::async_trait;
use axum::Router;
use axum::http::request::Parts;
use rmcp::model::*;
use rmcp::service::{MaybeSendFuture, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use switchboard_core::ToolSpec;
use tokio_util::sync::CancellationToken;

/// The workspace-wide gateway endpoint.
pub const GATEWAY_PATH: &str = "/gateway/mcp";
/// A bud's gateway endpoint (its servers and tool selection).
pub const BUD_GATEWAY_PATH: &str = "/gateway/buds/{bud}/mcp";
const BUD_PREFIX: &str = "/gateway/buds/";
/// One registered server's gateway endpoint: its tools, resources and prompts under their
/// own names and URIs (so a client sees what the server itself offers, governed).
pub const SERVER_GATEWAY_PATH: &str = "/gateway/servers/{server}/mcp";
const SERVER_PREFIX: &str = "/gateway/servers/";
/// `clientInfo.name` of a client that gave none.
pub const UNNAMED_CLIENT: &str = "unnamed client";

/// Who is asking, for one request.
#[derive(Clone)]
pub struct GatewayRequest {
    pub caller: Arc<Caller>,
    /// The request's bearer token (forwarded only to our own kg endpoint, as the chat does).
    pub bearer_token: Option<String>,
    /// The bud named by the path (its id or name), `None` at `/gateway/mcp`.
    pub bud: Option<String>,
    /// The server named by the path (its id or name) at [`SERVER_GATEWAY_PATH`].
    pub server: Option<String>,
    /// `clientInfo.name`, or [`UNNAMED_CLIENT`].
    pub client_name: String,
}

impl fmt::Debug for GatewayRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GatewayRequest")
            .field("caller", &self.caller)
            .field("bud", &self.bud)
            .field("server", &self.server)
            .field("client_name", &self.client_name)
            .finish_non_exhaustive()
    }
}

/// A `tools/call` as the client sent it.
#[derive(Debug)]
pub struct GatewayToolCall {
    /// As listed: `server__tool`, or the tool's own name at [`SERVER_GATEWAY_PATH`].
    pub name: String,
    pub arguments: Value,
    /// The JSON-RPC id, as text.
    pub request_id: String,
    /// Fires when the client cancels the request (`notifications/cancelled`) or leaves.
    pub cancellation: CancellationToken,
    /// Set when the client declared form elicitation: asks its user to approve the call.
    pub asker: Option<GatewayAsker>,
    /// Set when the request carried a `progressToken`: reports progress under it.
    pub progress: Option<GatewayProgress>,
    /// The client in a session (not a stateless request): the upstream's requests of the
    /// call it declared capabilities for, and its log messages, go there.
    pub client_link: Option<GatewayClientLink>,
}

/// A list the gateway aggregates besides tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GatewayList {
    Resources,
    ResourceTemplates,
    Prompts,
}

impl GatewayList {
    /// The list's name, as in its method (`resources/templates` for
    /// `resources/templates/list`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Resources => "resources",
            Self::ResourceTemplates => "resources/templates",
            Self::Prompts => "prompts",
        }
    }
}

/// Why the gateway could not answer.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// Not offered to this caller (unknown, switched off, or `ALWAYS_DENY`).
    #[error("unknown tool: {0}")]
    UnknownTool(String),
    /// No server of this caller's offers it (JSON-RPC -32002).
    #[error("unknown resource: {0}")]
    UnknownResource(String),
    #[error("unknown prompt: {0}")]
    UnknownPrompt(String),
    /// A `completion/complete` whose `ref` names nothing this caller is offered.
    #[error("unknown completion reference: {0}")]
    UnknownReference(String),
    /// The upstream answered with a JSON-RPC error: passed on as it is.
    #[error("{message}")]
    Upstream {
        code: i32,
        message: String,
        data: Option<Value>,
    },
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The bud of the path is not one of the workspace's.
    #[error("unknown bud: {0}")]
    UnknownBud(String),
    /// The server of the path is not one of the workspace's.
    #[error("unknown server: {0}")]
    UnknownServer(String),
    #[error("the gateway failed: {0}")]
    Internal(String),
}

/// What the gateway serves; implemented by the host.
#[async_trait]
pub trait GatewayBackend: Send + Sync + fmt::Debug + 'static {
    /// The tools offered to this caller, named `server__tool`.
    async fn list_tools(&self, request: &GatewayRequest) -> Result<Vec<ToolSpec>, GatewayError>;

    /// Runs one call; the answer is an MCP `CallToolResult` as JSON (a refusal by a person
    /// or a failed call is a result with `isError`).
    async fn call_tool(
        &self,
        request: &GatewayRequest,
        call: GatewayToolCall,
    ) -> Result<Value, GatewayError>;

    /// Whether resources, prompts and completions are served (advertised in the
    /// capabilities only then).
    fn serves_resources_and_prompts(&self) -> bool {
        false
    }

    /// Every item of `list` offered to this caller, as JSON in MCP's shape (a `Resource`, a
    /// `ResourceTemplate`, a `Prompt`), named so that the requests below find them again.
    async fn list_items(
        &self,
        _request: &GatewayRequest,
        _list: GatewayList,
    ) -> Result<Vec<Value>, GatewayError> {
        Ok(Vec::new())
    }

    /// `resources/read` of a listed URI (or a template's expansion): a `ReadResourceResult`.
    async fn read_resource(
        &self,
        _request: &GatewayRequest,
        uri: String,
        _cancellation: CancellationToken,
    ) -> Result<Value, GatewayError> {
        Err(GatewayError::UnknownResource(uri))
    }

    /// `prompts/get` of a listed prompt: a `GetPromptResult`.
    async fn get_prompt(
        &self,
        _request: &GatewayRequest,
        name: String,
        _arguments: Option<serde_json::Map<String, Value>>,
        _cancellation: CancellationToken,
    ) -> Result<Value, GatewayError> {
        Err(GatewayError::UnknownPrompt(name))
    }

    /// `completion/complete` (`params` as the client sent them; their `ref` names a listed
    /// prompt or resource template): a `CompleteResult`.
    async fn complete(
        &self,
        _request: &GatewayRequest,
        params: Value,
        _cancellation: CancellationToken,
    ) -> Result<Value, GatewayError> {
        Err(GatewayError::UnknownReference(params["ref"].to_string()))
    }

    /// `logging/setLevel` from a client: applied to the upstream of a per-server endpoint, or
    /// to each upstream of the caller's offer that declared `logging`.
    async fn set_log_level(
        &self,
        _request: &GatewayRequest,
        level: &str,
    ) -> Result<(), GatewayError> {
        Err(GatewayError::Internal(format!(
            "logging/setLevel {level} is not supported"
        )))
    }

    /// `resources/subscribe` of a listed URI: that resource's updates, under the gateway's
    /// name for each updated URI, until the stream is dropped (the session unsubscribed or
    /// ended), which releases the upstream's subscription when no one else wants it.
    async fn watch_resource(
        &self,
        _request: &GatewayRequest,
        uri: String,
    ) -> Result<ResourceUpdates, GatewayError> {
        Err(GatewayError::UnknownResource(uri))
    }

    /// Moves on whenever what some caller is offered may have changed (an upstream's list, a
    /// policy, a switch); `None`: never (sessions are not told `list_changed`).
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
}

/// One handler per MCP session (or stateless request); all share the backend.
#[derive(Clone, Debug)]
pub struct GatewayServer {
    backend: Arc<dyn GatewayBackend>,
    /// Items per page of every list.
    page_size: usize,
    /// What this session was last given of each list; its `list_changed` watcher (started by
    /// its first listing) compares against it.
    listings: list_changed::SessionListings,
    /// The per-token budget of requests that reach an upstream ([`rate_limit`]), shared by
    /// every session and the guard's `initialize`.
    limiter: Option<crate::rate_limit::RateLimiter>,
    /// This session's `logging/setLevel`: what of the upstreams' log messages it hears.
    log_level: forwarding::SessionLogLevel,
    /// This session's `resources/subscribe`s ([`resource_updates`]).
    subscriptions: resource_updates::SessionSubscriptions,
}

/// A router serving the gateway at [`GATEWAY_PATH`] and [`BUD_GATEWAY_PATH`], its lists in
/// pages of `page_size`.
pub fn gateway_router<S>(
    backend: Arc<dyn GatewayBackend>,
    settings: McpHttpSettings,
    page_size: usize,
) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let limiter = settings.sessions.limiter.clone();
    streamable_router_at(
        &[GATEWAY_PATH, BUD_GATEWAY_PATH, SERVER_GATEWAY_PATH],
        move || GatewayServer {
            backend: backend.clone(),
            page_size,
            listings: Default::default(),
            limiter: limiter.clone(),
            log_level: Default::default(),
            subscriptions: Default::default(),
        },
        settings,
    )
}

impl GatewayServer {
    fn request(context: &RequestContext<RoleServer>) -> Result<GatewayRequest, ErrorData> {
        let parts = context.extensions.get::<Parts>();
        let caller = parts
            .and_then(|parts| parts.extensions.get::<Arc<Caller>>())
            .cloned()
            .ok_or_else(|| {
                ErrorData::internal_error("request reached the gateway unauthenticated", None)
            })?;
        let bearer_token = parts
            .and_then(|parts| parts.headers.get(axum::http::header::AUTHORIZATION))
            .and_then(|value| bearer_token(value.as_bytes()))
            .map(str::to_owned);
        let bud = parts.and_then(|parts| named_by_path(parts.uri.path(), BUD_PREFIX));
        let server = parts.and_then(|parts| named_by_path(parts.uri.path(), SERVER_PREFIX));
        let client_name = context
            .client_info()
            .map(|info| info.name)
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| UNNAMED_CLIENT.to_owned());
        Ok(GatewayRequest {
            caller,
            bearer_token,
            bud,
            server,
            client_name,
        })
    }

    /// [`Self::request`], once the caller's rate limit admits a `method` request.
    fn admitted(
        &self,
        context: &RequestContext<RoleServer>,
        method: &'static str,
    ) -> Result<GatewayRequest, ErrorData> {
        let request = Self::request(context)?;
        rate_limit::admit(self.limiter.as_ref(), &request, method)?;
        Ok(request)
    }

    async fn answer_list_tools(
        &self,
        params: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let request = Self::request(&context)?;
        let specs = self
            .backend
            .list_tools(&request)
            .await
            .map_err(to_error_data)?;
        self.watch_list(&context, &request, list_changed::Listing::Tools(&specs));
        pages::paged("tools", specs, params, self.page_size, |spec| {
            Ok(tool_of_spec(spec))
        })
    }

    async fn answer_call_tool(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let request = self.admitted(&context, "tools/call")?;
        let call = GatewayToolCall {
            name: params.name.to_string(),
            arguments: params.arguments.map(Value::Object).unwrap_or(Value::Null),
            request_id: request_id_text(&context.id),
            cancellation: context.ct.clone(),
            asker: GatewayAsker::of(&context),
            progress: GatewayProgress::of(&context),
            client_link: context.peer.peer_info().is_some().then(|| {
                GatewayClientLink::of(&context, &self.log_level, request.server.is_none())
            }),
        };
        let answer = self
            .backend
            .call_tool(&request, call)
            .await
            .map_err(to_error_data)?;
        let result: CallToolResult = serde_json::from_value(answer).map_err(|error| {
            ErrorData::internal_error(format!("unreadable upstream result: {error}"), None)
        })?;
        Ok(CallToolResponse::from(result))
    }

    async fn answer_set_level(
        &self,
        params: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let request = self.admitted(&context, "logging/setLevel")?;
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|level| level.as_str().map(str::to_owned))
            .unwrap_or_else(|| "info".to_owned());
        self.backend
            .set_log_level(&request, &level)
            .await
            .map_err(to_error_data)?;
        self.log_level.set(params.level);
        Ok(())
    }
}

/// The gateway's capabilities: resources, prompts and completions when the backend serves
/// them, their `listChanged` when it says when something changed.
fn server_config(serves_resources_and_prompts: bool, announces_changes: bool) -> ServerConfig {
    let mut capabilities = ServerCapabilities::builder()
        .enable_tools()
        .enable_tool_list_changed()
        .enable_logging()
        .build();
    if serves_resources_and_prompts {
        let list_changed = announces_changes.then_some(true);
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(true);
        resources.list_changed = list_changed;
        capabilities.resources = Some(resources);
        let mut prompts = PromptsCapability::default();
        prompts.list_changed = list_changed;
        capabilities.prompts = Some(prompts);
        capabilities.completions = Some(JsonObject::default());
    }
    ServerConfig::new(capabilities)
        .with_server_info(
            Implementation::new("switchboard-gateway", env!("CARGO_PKG_VERSION"))
                .with_title("Switchboard gateway"),
        )
        .with_instructions(
            "Switchboard's gateway: the tools of this workspace's MCP servers, named server__tool, under its approval policies; their resources as switchboard://server/uri and prompts as server__prompt (at /gateway/servers/{server}/mcp: one server's, under their own names).",
        )
}

impl ServerHandler for GatewayServer {
    fn get_info(&self) -> ServerConfig {
        server_config(
            self.backend.serves_resources_and_prompts(),
            self.backend.changes().is_some(),
        )
    }

    fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_list_tools(request, context))
    }

    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourcesResult, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_list_resources(request, context))
    }

    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourceTemplatesResult, ErrorData>> + MaybeSendFuture + '_
    {
        Box::pin(self.answer_list_resource_templates(request, context))
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_read_resource(request, context))
    }

    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListPromptsResult, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_list_prompts(request, context))
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_get_prompt(request, context))
    }

    fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CompleteResult, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_complete(request, context))
    }

    fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_set_level(request, context))
    }

    fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_subscribe(request.uri, true, context))
    }

    fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_subscribe(request.uri, false, context))
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_call_tool(request, context))
    }
}

/// The bud of `/gateway/buds/{bud}/mcp` or the server of `/gateway/servers/{server}/mcp`
/// (`prefix` says which; percent-decoded), `None` for any other path.
fn named_by_path(path: &str, prefix: &str) -> Option<String> {
    let encoded = path.strip_prefix(prefix)?.strip_suffix("/mcp")?;
    (!encoded.is_empty() && !encoded.contains('/')).then(|| percent_decode(encoded))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[index], hex) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                index += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

fn request_id_text(id: &RequestId) -> String {
    match id {
        NumberOrString::Number(number) => number.to_string(),
        NumberOrString::String(text) => text.to_string(),
    }
}

fn tool_of_spec(spec: ToolSpec) -> Tool {
    let schema = match spec.parameters {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    Tool::new(spec.name, spec.description, Arc::new(schema))
}

fn to_error_data(error: GatewayError) -> ErrorData {
    match error {
        GatewayError::UnknownTool(_)
        | GatewayError::UnknownPrompt(_)
        | GatewayError::UnknownReference(_)
        | GatewayError::InvalidArguments(_)
        | GatewayError::UnknownBud(_)
        | GatewayError::UnknownServer(_) => ErrorData::invalid_params(error.to_string(), None),
        GatewayError::UnknownResource(_) => ErrorData::resource_not_found(error.to_string(), None),
        GatewayError::Upstream {
            code,
            message,
            data,
        } => ErrorData::new(ErrorCode(code), message, data),
        GatewayError::Internal(_) => ErrorData::internal_error(error.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bud_comes_from_the_path() {
        let bud_of_path = |path| named_by_path(path, BUD_PREFIX);
        assert_eq!(bud_of_path("/gateway/mcp"), None);
        assert_eq!(
            bud_of_path("/gateway/buds/research/mcp").as_deref(),
            Some("research")
        );
        assert_eq!(
            bud_of_path("/gateway/buds/my%20bud/mcp").as_deref(),
            Some("my bud")
        );
        assert_eq!(bud_of_path("/gateway/buds//mcp"), None);
        assert_eq!(bud_of_path("/gateway/buds/a/b/mcp"), None);
        assert_eq!(bud_of_path("/gateway/servers/a/mcp"), None);
    }

    #[test]
    fn the_server_comes_from_the_path() {
        let server_of_path = |path| named_by_path(path, SERVER_PREFIX);
        assert_eq!(server_of_path("/gateway/mcp"), None);
        assert_eq!(server_of_path("/gateway/buds/a/mcp"), None);
        assert_eq!(
            server_of_path("/gateway/servers/fixture/mcp").as_deref(),
            Some("fixture")
        );
        assert_eq!(server_of_path("/gateway/servers//mcp"), None);
    }
}
