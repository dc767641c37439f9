//! The client side of each MCP session as rmcp sees it (`ClientHandler`): who we are
//! (`clientInfo` and capabilities), and where server-initiated traffic goes (progress and log
//! notifications are routed before they reach rmcp: `transport::call_notifications`) — task status notifications to the follower of
//! that task (`crate::task_watch`), list-changed notifications to the capability cache,
//! resource updates to the session's watchers of that URI, elicitation and sampling requests
//! to [`crate::input_answers`] for the call whose stream carried them (the call's own client
//! when it answers them, else Switchboard's forms for elicitation and a refusal for sampling).

#![allow(deprecated)] // sampling (`CreateMessage*`) is deprecated by SEP-2577; servers up to 2025-11-25 still ask for it.

use crate::input_answers::Answerers;
use crate::notifications::{ListChangeKind, NotificationRouter};
use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, ProtocolVersion,
    ResourceUpdatedNotificationParam, TaskStatusNotificationParams,
};
use rmcp::service::{InboundStreamOrigin, NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::Value;
use std::sync::Arc;
use switchboard_core::ConversationId;

/// How long an elicitation waits for its call to be registered (it may overtake it).
const CALL_REGISTRATION_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// A form the upstream asks the user to fill in (`elicitation/create`), rmcp-free.
#[derive(Clone, Debug, PartialEq)]
pub struct ElicitationRequest {
    pub server_name: String,
    /// The conversation whose call the request belongs to, when it can be told (the call whose
    /// response stream carried it, or the only conversation with calls running).
    pub conversation_id: Option<ConversationId>,
    pub message: String,
    /// The JSON Schema (flat object of primitive properties) of the expected answer.
    pub requested_schema: Value,
}

/// The answer to an [`ElicitationRequest`].
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitationResponse {
    Accept(Value),
    Decline,
    Cancel,
}

/// Answers elicitation requests. Without one, the client does not declare the capability and
/// upstreams do not ask.
pub trait ElicitationResponder: Send + Sync + std::fmt::Debug {
    fn respond(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationResponse>;
}

/// Accepts every form with the defaults its schema declares (used by the conformance client).
#[derive(Debug, Default)]
pub struct AcceptSchemaDefaults;

impl ElicitationResponder for AcceptSchemaDefaults {
    fn respond(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationResponse> {
        let mut content = serde_json::Map::new();
        if let Some(properties) = request
            .requested_schema
            .get("properties")
            .and_then(Value::as_object)
        {
            for (name, property) in properties {
                if let Some(default) = property.get("default") {
                    content.insert(name.clone(), default.clone());
                }
            }
        }
        Box::pin(std::future::ready(ElicitationResponse::Accept(
            Value::Object(content),
        )))
    }
}

/// What we declare to every upstream, in `initialize` and (2026-07-28) in every request's
/// `_meta`: form elicitation when a responder is wired in, sampling when it may be forwarded
/// to a gateway client, and the MCP Apps extension (`io.modelcontextprotocol/ui`, its HTML
/// MIME type) and the tasks extension (`io.modelcontextprotocol/tasks`) in `extensions`.
pub(crate) fn client_capabilities(elicitation: bool, sampling: bool) -> ClientCapabilities {
    let mut capabilities = serde_json::json!({
        "extensions": {
            switchboard_core::UI_EXTENSION_ID: {
                "mimeTypes": [switchboard_core::UI_RESOURCE_MIME_TYPE],
            },
            // A tool call may become a task (`calls/task.rs` follows it).
            rmcp::model::TASKS_EXTENSION_ID: {},
        },
    });
    if elicitation {
        capabilities["elicitation"] = serde_json::json!({"form": {}});
    }
    if sampling {
        capabilities["sampling"] = serde_json::json!({});
    }
    serde_json::from_value(capabilities).unwrap_or_default()
}

/// One instance per session.
#[derive(Debug, Clone)]
pub(crate) struct SessionHandler {
    info: ClientConfig,
    router: Arc<NotificationRouter>,
    elicitation: Option<Arc<dyn ElicitationResponder>>,
}

impl SessionHandler {
    pub fn new(
        protocol_version: ProtocolVersion,
        router: Arc<NotificationRouter>,
        elicitation: Option<Arc<dyn ElicitationResponder>>,
        sampling: bool,
    ) -> Self {
        let capabilities = client_capabilities(elicitation.is_some(), sampling);
        let mut client_info = Implementation::new("switchboard", env!("CARGO_PKG_VERSION"));
        client_info.title = Some("Switchboard".to_owned());
        let info =
            ClientConfig::new(capabilities, client_info).with_protocol_version(protocol_version);
        Self {
            info,
            router,
            elicitation,
        }
    }
}

impl ClientHandler for SessionHandler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let wire = serde_json::to_value(&request).unwrap_or(Value::Null);
        if wire.get("mode").and_then(Value::as_str) == Some("url") {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        let origin = origin_of(&context);
        self.router
            .await_call(origin.as_ref(), CALL_REGISTRATION_WAIT)
            .await;
        // A person is being asked: the call's timeout waits for them.
        let _paused = self.router.pause_calls(origin.as_ref());
        self.answerers(origin.as_ref()).elicit(wire).await
    }

    /// Passed on to the call's client when it declared sampling; otherwise refused (no model
    /// of Switchboard's answers an upstream's sampling).
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let origin = origin_of(&context);
        self.router
            .await_call(origin.as_ref(), CALL_REGISTRATION_WAIT)
            .await;
        let _paused = self.router.pause_calls(origin.as_ref());
        let params = serde_json::to_value(&params).unwrap_or(Value::Null);
        self.answerers(origin.as_ref()).sample(params).await
    }

    /// `notifications/tasks` (SEP-2663): the task's status at once, before the next poll.
    async fn on_task_status(
        &self,
        params: TaskStatusNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) {
        self.router.task_status(params.task);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.router.list_changed(ListChangeKind::Tools);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.router.list_changed(ListChangeKind::Resources);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.router.list_changed(ListChangeKind::Prompts);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.router.resource_updated(&params.uri);
    }
}

/// The call whose response stream carried an upstream request (Streamable HTTP only).
fn origin_of(context: &RequestContext<RoleClient>) -> Option<rmcp::model::RequestId> {
    match context.extensions.get::<InboundStreamOrigin>() {
        Some(InboundStreamOrigin::OutboundRequest(id)) => Some(id.clone()),
        _ => None,
    }
}

impl SessionHandler {
    /// Who answers for the call `origin` names (or the only call running).
    fn answerers(&self, origin: Option<&rmcp::model::RequestId>) -> Answerers {
        Answerers {
            server_name: self.router.server_name().to_owned(),
            conversation_id: self.router.conversation_for(origin),
            link: self.router.link_for(origin),
            responder: self.elicitation.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_apps_extension_is_advertised_with_or_without_elicitation() {
        for elicitation in [false, true] {
            let declared = serde_json::to_value(client_capabilities(elicitation, false)).unwrap();
            assert_eq!(
                declared["extensions"]["io.modelcontextprotocol/ui"]["mimeTypes"],
                serde_json::json!(["text/html;profile=mcp-app"]),
                "{declared}"
            );
            assert_eq!(declared.get("elicitation").is_some(), elicitation);
            assert!(declared.get("sampling").is_none());
        }
        let declared = serde_json::to_value(client_capabilities(false, true)).unwrap();
        assert!(declared.get("sampling").is_some(), "{declared}");
    }
}
