//! What the composer offers from a conversation's MCP servers: their resources, resource
//! templates and prompts (to attach and to run as slash commands), and `completion/complete`
//! for a template's or a prompt's arguments. Listed live over the caller's sessions from the
//! servers a turn of the conversation would use (none given: a new conversation's), so what
//! is offered is exactly what a question may then attach or run.
//!
//! Items stay as their servers sent them (MCP's JSON); the HTTP layer types them.

use super::ChatService;
use super::question_context::{QuestionServers, question_context, server_target};
use crate::error::{ChatError, ChatResult};
use crate::tools::{TurnTools, UserCredential};
use serde_json::Value;
use switchboard_core::{ConversationId, Principal};
use switchboard_mcp_client::ForwardedList;

/// One server's items, as it listed them.
#[derive(Clone, Debug, Default)]
pub struct ServerContextItems {
    pub server: String,
    pub resources: Vec<Value>,
    pub resource_templates: Vec<Value>,
    pub prompts: Vec<Value>,
}

/// The items of every server of the conversation.
#[derive(Clone, Debug, Default)]
pub struct ContextItems {
    pub servers: Vec<ServerContextItems>,
    /// Servers that could not be listed: (name, why).
    pub failed: Vec<(String, String)>,
}

/// A `completion/complete` request from the composer.
#[derive(Clone, Debug)]
pub struct CompletionRequest {
    pub conversation_id: Option<ConversationId>,
    pub server: String,
    /// MCP's `params` (`ref`, `argument`, `context`), the `ref` naming the server's own prompt
    /// or template.
    pub params: Value,
}

impl ChatService {
    /// The resources, templates and prompts of the servers a turn of `conversation_id` uses.
    pub async fn context_items(
        &self,
        principal: &Principal,
        credential: Option<&UserCredential>,
        conversation_id: Option<&ConversationId>,
    ) -> ChatResult<ContextItems> {
        let tools = self
            .composer_tools(principal, credential, conversation_id)
            .await?;
        let context = question_context(principal, conversation_id);
        let client = self.engine.tools.client();
        let listed = futures::future::join_all(tools.targets().into_iter().map(|target| {
            let context = &context;
            async move {
                let lists = futures::future::try_join3(
                    client.list_everything(&target.upstream, ForwardedList::Resources, context),
                    client.list_everything(
                        &target.upstream,
                        ForwardedList::ResourceTemplates,
                        context,
                    ),
                    client.list_everything(&target.upstream, ForwardedList::Prompts, context),
                )
                .await;
                (target.upstream.name.clone(), lists)
            }
        }))
        .await;
        let mut items = ContextItems::default();
        for (server, lists) in listed {
            match lists {
                Ok((resources, resource_templates, prompts)) => {
                    items.servers.push(ServerContextItems {
                        server,
                        resources,
                        resource_templates,
                        prompts,
                    });
                }
                Err(error) => items.failed.push((server, error.to_string())),
            }
        }
        Ok(items)
    }

    /// `completion/complete` on one of the conversation's servers.
    pub async fn complete_argument(
        &self,
        principal: &Principal,
        credential: Option<&UserCredential>,
        request: CompletionRequest,
    ) -> ChatResult<Value> {
        let tools = self
            .composer_tools(principal, credential, request.conversation_id.as_ref())
            .await?;
        let target = server_target(&tools, &request.server, "server")?;
        let context = question_context(principal, request.conversation_id.as_ref());
        self.engine
            .tools
            .client()
            .complete_json(&target.upstream, request.params, &context)
            .await
            .map_err(|error| ChatError::Upstream {
                field: "completion".to_owned(),
                message: format!("'{}' could not complete: {error}", request.server),
            })
    }

    /// The servers a turn of `conversation_id` (none: a new conversation) may use.
    pub(super) async fn composer_tools(
        &self,
        principal: &Principal,
        credential: Option<&UserCredential>,
        conversation_id: Option<&ConversationId>,
    ) -> ChatResult<TurnTools> {
        let conversation = match conversation_id {
            Some(id) => Some(self.visible_conversation(principal, id).await?),
            None => None,
        };
        let (_, resolved) = self
            .conversation_servers(principal, conversation.as_ref())
            .await?;
        let servers = QuestionServers {
            resolved: &resolved,
            ephemeral: &[],
            credential,
            conversation_id,
        };
        Ok(self.question_tools(principal, &servers).await)
    }
}
