//! The MCP App (issue 12) shown under a tool call: which app, and its HTML as the store kept it
//! at the sync. A conversation's apps are visible to whoever may read the conversation.
//!
//! The app is the one the call was made with: the stored tool message names it (server, URI
//! and the resource's SHA-256 as read at the sync the call's definition came from); while the
//! call is still running, the tool's current definition does. A resource whose hash no longer
//! matches (the server was synced and its app changed since) is refused, never swapped in:
//! the app a person approved the call under is the only one it is shown with.
//!
//! An app's own `tools/call` ([`ChatService::run_app_call`]) reaches only its own server (the
//! one whose resource it is), only a tool that server lists as visible to apps, through the
//! conversation's servers (its bud and overrides: a server taken out of the conversation is
//! out for its apps too), and lives the life of any call made outside a turn: recorded in the
//! conversation, reviewed by the approval gate (policies, pins, a person), audited with origin
//! `app`.
//!
//! Both are recorded under a call id naming the app's tool call ([`app_of_request`]): an
//! approval request a person must decide says which app asked, and the chat shows its card
//! under that app while the app's request waits.
//!
//! An app's `resources/read` ([`ChatService::run_app_resource_read`]) goes the same way to the
//! same server only: reviewed, recorded and audited as a call of the host's pseudo-tool
//! [`RESOURCE_READ_TOOL`] (`resources/read`, a name outside MCP's tool-name characters, so no
//! server's tool shares its rules) with the URI as its argument. Policies and remembered
//! decisions for it are set per server like any tool's; by default a person is asked.

use super::ChatService;
use super::gateway::{GatewayOutcome, OutsideCall, OutsideRequest, object_arguments};
use crate::error::{ChatError, ChatResult};
use crate::gate::CallOrigin;
use crate::mcp_config::{BudMcpConfig, McpConfigOverrides, resolve_mcp_config};
use serde_json::{Value, json};
use switchboard_core::{
    AppResource, ConversationId, Principal, ToolApp, ToolCallId, ToolDefinition,
    ToolMessageMetadata,
};
use switchboard_mcp_client::Caller;
use switchboard_store::ToolCallRecord;
use tokio_util::sync::CancellationToken;

/// A `tools/call` an app made.
#[derive(Debug)]
pub struct AppCall<'a> {
    pub principal: &'a Principal,
    pub conversation_id: &'a ConversationId,
    /// The tool call the app is shown with.
    pub tool_call_id: &'a ToolCallId,
    /// The upstream's own tool name (the app knows its server's names, not ours).
    pub name: &'a str,
    pub arguments: Value,
    /// Fires when the request is dropped.
    pub cancellation: CancellationToken,
}

/// The id an app's request is recorded and asked under (the model's call id of a turn's call):
/// `app:{the tool call the app is shown with}:{a fresh id}`, so that its approval request names
/// the app that asked ([`app_of_request`]) and the UI shows the card under that app.
fn app_request_id(app_of: &ToolCallId) -> String {
    format!("app:{app_of}:{}", ToolCallId::generate())
}

/// The tool call whose app made the request recorded under `call_id`, if an app made it.
pub fn app_of_request(call_id: &str) -> Option<&str> {
    let (app_of, _fresh) = call_id.strip_prefix("app:")?.rsplit_once(':')?;
    (!app_of.is_empty()).then_some(app_of)
}

/// The name an app's `resources/read` is reviewed, recorded and audited under.
pub const RESOURCE_READ_TOOL: &str = "resources/read";

/// The host's pseudo-tool an app's `resources/read` is reviewed as (what the approval card
/// shows and what a policy pins).
fn resource_read_tool() -> ToolDefinition {
    ToolDefinition {
        name: RESOURCE_READ_TOOL.to_owned(),
        title: Some("Read a resource (asked by an MCP App)".to_owned()),
        description: "An MCP App shown in the chat reads a resource of its own server.".to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {"uri": {"type": "string"}},
            "required": ["uri"],
        }),
        output_schema: None,
        annotations: None,
        meta: Default::default(),
    }
}

/// A `resources/read` an app made.
#[derive(Debug)]
pub struct AppResourceRead<'a> {
    pub principal: &'a Principal,
    pub conversation_id: &'a ConversationId,
    /// The tool call the app is shown with.
    pub tool_call_id: &'a ToolCallId,
    pub uri: &'a str,
    /// Fires when the request is dropped.
    pub cancellation: CancellationToken,
}

/// A tool call's app and its resource.
#[derive(Debug)]
pub struct ToolCallApp {
    pub tool_call: ToolCallRecord,
    pub app: ToolApp,
    pub resource: AppResource,
}

impl ChatService {
    /// The app of `tool_call_id` in a conversation `principal` may read. `NotFound` for
    /// another person's conversation, a call of another conversation, or a call without an
    /// app; `Conflict` when the app changed since the call.
    pub async fn tool_call_app(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
        tool_call_id: &ToolCallId,
    ) -> ChatResult<ToolCallApp> {
        let conversation = self
            .visible_conversation(principal, conversation_id)
            .await?;
        let store = &self.engine.store;
        let workspace_id = &principal.workspace_id;
        let tool_call = store.get_tool_call(workspace_id, tool_call_id).await?;
        if tool_call.conversation_id != conversation.id {
            return Err(ChatError::NotFound("tool call"));
        }
        let app = match self.app_of_stored_message(principal, &tool_call).await? {
            Some(app) => app,
            None => {
                self.app_of_current_definition(principal, &tool_call)
                    .await?
            }
        };
        let resource = store
            .get_app_resource(workspace_id, &app.server_id, &app.resource_uri)
            .await?;
        if resource.sha256 != app.resource_sha256 {
            return Err(ChatError::Conflict(
                "the app changed since this call was made (its server was synced again)".into(),
            ));
        }
        Ok(ToolCallApp {
            tool_call,
            app,
            resource,
        })
    }

    /// `NotFound` unless `principal` may read `conversation_id` (a request about it that is
    /// malformed otherwise is answered as for a conversation that is not there, first).
    pub async fn require_visible_conversation(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
    ) -> ChatResult<()> {
        self.visible_conversation(principal, conversation_id)
            .await
            .map(|_| ())
    }

    /// The stored page of `app`, to preview a call the model is still writing (its
    /// `tool_input_partial` events name `app`) in a conversation `principal` may read.
    /// `NotFound` for another person's conversation or an app the workspace does not keep;
    /// `Conflict` when the server was synced again and the app changed.
    pub async fn app_preview(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
        app: &ToolApp,
    ) -> ChatResult<AppResource> {
        self.visible_conversation(principal, conversation_id)
            .await?;
        let resource = self
            .engine
            .store
            .get_app_resource(&principal.workspace_id, &app.server_id, &app.resource_uri)
            .await?;
        if resource.sha256 != app.resource_sha256 {
            return Err(ChatError::Conflict(
                "the app changed since the model was given this tool (its server was synced again)"
                    .into(),
            ));
        }
        Ok(resource)
    }

    /// The app the stored tool message of the call names, once the call has finished.
    async fn app_of_stored_message(
        &self,
        principal: &Principal,
        tool_call: &ToolCallRecord,
    ) -> ChatResult<Option<ToolApp>> {
        let messages = self
            .engine
            .store
            .list_messages(&principal.workspace_id, &tool_call.conversation_id)
            .await?;
        Ok(messages.iter().rev().find_map(|message| {
            let metadata = ToolMessageMetadata::from_stored(&message.metadata)?;
            (metadata.tool_call_id.as_ref() == Some(&tool_call.id))
                .then_some(metadata.app)
                .flatten()
        }))
    }

    /// The app the tool's current definition names (a call still running).
    async fn app_of_current_definition(
        &self,
        principal: &Principal,
        tool_call: &ToolCallRecord,
    ) -> ChatResult<ToolApp> {
        let server_id = tool_call
            .server_id
            .as_ref()
            .ok_or(ChatError::NotFound("app"))?;
        let tools = self
            .engine
            .store
            .list_server_tools(&principal.workspace_id, server_id)
            .await?;
        tools
            .iter()
            .find(|tool| tool.name == tool_call.tool_name)
            .and_then(|tool| ToolApp::of(Some(server_id), &tool.definition()))
            .ok_or(ChatError::NotFound("app"))
    }

    /// Runs an app's call to a tool of its own server. A tool of another server, unknown,
    /// disabled, or not visible to apps is `UnknownTool` (never reached, never recorded).
    pub async fn run_app_call(&self, call: AppCall<'_>) -> ChatResult<GatewayOutcome> {
        let shown = self
            .tool_call_app(call.principal, call.conversation_id, call.tool_call_id)
            .await?;
        let arguments = match object_arguments(call.arguments) {
            Ok(arguments) => arguments,
            Err(message) => return Ok(GatewayOutcome::InvalidArguments(message)),
        };
        let store = &self.engine.store;
        let workspace_id = &call.principal.workspace_id;
        let server_id = &shown.app.server_id;
        let tool = store
            .list_server_tools(workspace_id, server_id)
            .await?
            .into_iter()
            .find(|tool| tool.name == call.name && tool.is_enabled)
            .map(|tool| tool.definition())
            .filter(|definition| definition.visible_to_app());
        let Some(tool) = tool else {
            return Ok(GatewayOutcome::UnknownTool);
        };
        let tools = self
            .conversation_tools(call.principal, call.conversation_id)
            .await?;
        let Some(target) = tools.target(server_id) else {
            return Ok(GatewayOutcome::Failed {
                code: "server_unavailable".to_owned(),
                message: "the app's server is not available in this conversation".to_owned(),
            });
        };
        self.run_call_outside_turn(OutsideCall {
            principal: call.principal,
            conversation_id: call.conversation_id,
            server_name: &shown.tool_call.server_name,
            tool: &tool,
            target,
            arguments,
            request_id: app_request_id(call.tool_call_id),
            origin: CallOrigin::App {
                app_of: call.tool_call_id.as_str().to_owned(),
            },
            cancellation: call.cancellation,
            request: OutsideRequest::CallTool,
            client_approver: None,
            events: None,
            client_link: None,
        })
        .await
    }

    /// Runs an app's `resources/read` on its own server (the only one it can name): reviewed
    /// by the gate as [`RESOURCE_READ_TOOL`], recorded and audited with origin `app`. The
    /// answer is the upstream's `ReadResourceResult`, as the structured content of the result.
    pub async fn run_app_resource_read(
        &self,
        read: AppResourceRead<'_>,
    ) -> ChatResult<GatewayOutcome> {
        let shown = self
            .tool_call_app(read.principal, read.conversation_id, read.tool_call_id)
            .await?;
        if read.uri.is_empty() {
            return Ok(GatewayOutcome::InvalidArguments(
                "uri must not be empty".to_owned(),
            ));
        }
        let tools = self
            .conversation_tools(read.principal, read.conversation_id)
            .await?;
        let Some(target) = tools.target(&shown.app.server_id) else {
            return Ok(GatewayOutcome::Failed {
                code: "server_unavailable".to_owned(),
                message: "the app's server is not available in this conversation".to_owned(),
            });
        };
        self.run_call_outside_turn(OutsideCall {
            principal: read.principal,
            conversation_id: read.conversation_id,
            server_name: &shown.tool_call.server_name,
            tool: &resource_read_tool(),
            target,
            arguments: json!({ "uri": read.uri }),
            request_id: app_request_id(read.tool_call_id),
            origin: CallOrigin::App {
                app_of: read.tool_call_id.as_str().to_owned(),
            },
            cancellation: read.cancellation,
            request: OutsideRequest::ReadResource {
                uri: read.uri.to_owned(),
            },
            client_approver: None,
            events: None,
            client_link: None,
        })
        .await
    }

    /// The registered servers a turn of the conversation would use (bud and overrides).
    pub(super) async fn conversation_tools(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
    ) -> ChatResult<crate::tools::TurnTools> {
        let store = &self.engine.store;
        let workspace_id = &principal.workspace_id;
        let conversation = self
            .visible_conversation(principal, conversation_id)
            .await?;
        let bud = match &conversation.bud_id {
            Some(bud_id) => Some(store.get_bud(workspace_id, bud_id).await?),
            None => None,
        };
        let null = Value::Null;
        let bud_config =
            BudMcpConfig::parse(bud.as_ref().map(|bud| &bud.mcp_config).unwrap_or(&null))?;
        let overrides =
            McpConfigOverrides::parse(conversation.mcp_config_overrides.as_ref().unwrap_or(&null))?;
        let servers = store.list_servers(workspace_id).await?;
        let resolved = resolve_mcp_config(&bud_config, &overrides, &servers)?;
        let caller = Caller {
            user_id: principal.user_id.clone(),
            conversation_id: Some(conversation_id.clone()),
        };
        Ok(self
            .engine
            .tools
            .for_turn(principal, None, &caller, &resolved, &[])
            .await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_request_id_names_the_app_that_asked() {
        let app_of = ToolCallId::generate();
        let id = app_request_id(&app_of);
        assert_eq!(app_of_request(&id), Some(app_of.as_str()));
        assert_ne!(app_request_id(&app_of), id, "every request has its own id");
    }

    #[test]
    fn other_call_ids_name_no_app() {
        for call_id in ["call_1", "app-019a", "app:", "app::x", "gw-1", ""] {
            assert_eq!(app_of_request(call_id), None, "{call_id}");
        }
    }
}
