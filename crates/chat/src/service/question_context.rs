//! What a question brings from the conversation's MCP servers before the model answers:
//! resources attached to it (`resources/read`) and a prompt run from the slash menu
//! (`prompts/get`). Both are fetched when the question is asked — before anything is stored,
//! so a failure is a plain HTTP error — and stored with the messages (`core::MessageContext`),
//! so replays and later turns see the same content without asking the server again.
//!
//! Only servers the turn itself may use are reached (the same [`TurnTools`] a turn builds: the
//! bud's and the conversation's choice, active, usable for the caller); neither is a tool
//! call, so the approval gate does not review them. Sizes are bounded like a tool result's:
//! each text cut to `chat.tool_result_max_chars` (head and tail), the blocks of one message
//! within [`STORED_CONTENT_MAX_BYTES`].

use super::ChatService;
use crate::error::{ChatError, ChatResult};
use crate::tools::{
    CallTarget, STORED_CONTENT_MAX_BYTES, TurnTools, UserCredential, cut_keeping_ends, result_block,
};
use std::collections::BTreeMap;
use switchboard_core::{
    AttachmentRef, ChatMessage, ChatRole, ConversationId, MESSAGE_CONTEXT_KEY, MessageContext,
    Principal, PromptOrigin, ResultBlock,
};
use switchboard_mcp_client::{
    CallContext, Caller, PromptMessage, ResourceContent, ToolContent, UpstreamServer,
};
use switchboard_store::NewMessage;
use tokio_util::sync::CancellationToken;

use crate::mcp_config::ResolvedMcpConfig;

/// Most resources one question may attach.
pub const MAX_ATTACHMENTS: usize = 10;

/// A resource to attach to the question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachmentRequest {
    /// The server's name in the conversation.
    pub server: String,
    pub uri: String,
}

/// A prompt to run before the answer: its messages go into the conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptRequest {
    pub server: String,
    pub name: String,
    pub arguments: BTreeMap<String, String>,
}

/// The messages a question adds, in order: the prompt's, then the question with its
/// attachments (absent when a prompt alone was run).
#[derive(Debug, Default)]
pub(super) struct QuestionMessages {
    pub prompt_messages: Vec<NewMessage>,
    pub question: Option<NewMessage>,
}

/// Where the servers of the question are reached.
pub(super) struct QuestionServers<'a> {
    pub resolved: &'a ResolvedMcpConfig,
    pub ephemeral: &'a [UpstreamServer],
    pub credential: Option<&'a UserCredential>,
    pub conversation_id: Option<&'a ConversationId>,
}

impl ChatService {
    /// The messages of a question: the prompt's (fetched), then `message` with its
    /// attachments (read). `message` may be empty only when a prompt is run.
    pub(super) async fn question_messages(
        &self,
        principal: &Principal,
        servers: QuestionServers<'_>,
        message: &str,
        attachments: &[AttachmentRequest],
        prompt: Option<&PromptRequest>,
    ) -> ChatResult<QuestionMessages> {
        if attachments.len() > MAX_ATTACHMENTS {
            return Err(ChatError::invalid(
                "attachments",
                format!("at most {MAX_ATTACHMENTS} resources per question"),
            ));
        }
        let plain = || NewMessage::from_chat(ChatMessage::user(message));
        if attachments.is_empty() && prompt.is_none() {
            return Ok(QuestionMessages {
                prompt_messages: Vec::new(),
                question: Some(plain()),
            });
        }
        let tools = self.question_tools(principal, &servers).await;
        let context = question_context(principal, servers.conversation_id);
        let prompt_messages = match prompt {
            Some(prompt) => self.prompt_messages(&tools, prompt, &context).await?,
            None => Vec::new(),
        };
        let question = if message.is_empty() && attachments.is_empty() {
            None
        } else {
            let context = self
                .attachments_context(&tools, attachments, &context)
                .await?;
            Some(with_context(plain(), &context))
        };
        if prompt_messages.is_empty() && question.is_none() {
            return Err(ChatError::invalid(
                "prompt",
                "the prompt returned no messages; add a message to ask",
            ));
        }
        Ok(QuestionMessages {
            prompt_messages,
            question,
        })
    }

    /// The servers a turn with `servers` could use, as the caller.
    pub(super) async fn question_tools(
        &self,
        principal: &Principal,
        servers: &QuestionServers<'_>,
    ) -> TurnTools {
        if !self.engine.config.enable_mcp_tools {
            return TurnTools::default();
        }
        let caller = Caller {
            user_id: principal.user_id.clone(),
            conversation_id: servers.conversation_id.cloned(),
        };
        self.engine
            .tools
            .for_turn(
                principal,
                servers.credential,
                &caller,
                servers.resolved,
                servers.ephemeral,
            )
            .await
    }

    /// Every attachment read, its contents as context blocks.
    async fn attachments_context(
        &self,
        tools: &TurnTools,
        attachments: &[AttachmentRequest],
        context: &CallContext,
    ) -> ChatResult<MessageContext> {
        let client = self.engine.tools.client();
        let max_chars = self.engine.config.tool_result_max_chars;
        let mut blocks = Vec::new();
        let mut refs = Vec::with_capacity(attachments.len());
        for (index, attachment) in attachments.iter().enumerate() {
            let field = format!("attachments[{index}]");
            let target = server_target(tools, &attachment.server, &field)?;
            let contents = client
                .read_resource(&target.upstream, &attachment.uri, context)
                .await
                .map_err(|error| ChatError::Upstream {
                    field: field.clone(),
                    message: format!(
                        "'{}' of '{}' could not be read: {error}",
                        attachment.uri, attachment.server
                    ),
                })?;
            blocks.extend(
                contents
                    .into_iter()
                    .map(|content| resource_block(content, max_chars)),
            );
            refs.push(AttachmentRef {
                server: attachment.server.clone(),
                uri: attachment.uri.clone(),
                name: None,
                refreshed_at: None,
            });
        }
        Ok(MessageContext {
            attachments: refs,
            blocks: ResultBlock::within_budget(blocks, STORED_CONTENT_MAX_BYTES),
            prompt: None,
        })
    }

    /// The prompt's messages, roles kept, each marked with its prompt.
    async fn prompt_messages(
        &self,
        tools: &TurnTools,
        prompt: &PromptRequest,
        context: &CallContext,
    ) -> ChatResult<Vec<NewMessage>> {
        let target = server_target(tools, &prompt.server, "prompt.server")?;
        let arguments = prompt
            .arguments
            .iter()
            .map(|(name, value)| (name.clone(), serde_json::Value::String(value.clone())))
            .collect();
        let result = self
            .engine
            .tools
            .client()
            .get_prompt(&target.upstream, &prompt.name, arguments, context)
            .await
            .map_err(|error| ChatError::Upstream {
                field: "prompt".to_owned(),
                message: format!(
                    "prompt '{}' of '{}' failed: {error}",
                    prompt.name, prompt.server
                ),
            })?;
        let origin = PromptOrigin {
            server: prompt.server.clone(),
            name: prompt.name.clone(),
        };
        let max_chars = self.engine.config.tool_result_max_chars;
        Ok(result
            .messages
            .into_iter()
            .map(|message| prompt_message(message, &origin, max_chars))
            .collect())
    }
}

/// The calls' context: the caller's sessions, as the turn's.
pub(super) fn question_context(
    principal: &Principal,
    conversation_id: Option<&ConversationId>,
) -> CallContext {
    CallContext {
        caller: Caller {
            user_id: principal.user_id.clone(),
            conversation_id: conversation_id.cloned(),
        },
        cancellation: CancellationToken::new(),
        events: None,
        client_link: None,
        detach: None,
    }
}

/// The server named `server` among the turn's, or 422 naming `field`.
pub(super) fn server_target<'a>(
    tools: &'a TurnTools,
    server: &str,
    field: &str,
) -> ChatResult<&'a CallTarget> {
    tools
        .targets()
        .into_iter()
        .find(|target| target.upstream.name == server)
        .ok_or_else(|| {
            ChatError::invalid(
                field,
                format!("'{server}' is not a server this conversation can use"),
            )
        })
}

/// A resource's contents as a block, its text cut to `max_chars`.
pub(super) fn resource_block(content: ResourceContent, max_chars: usize) -> ResultBlock {
    ResultBlock::Resource {
        text: content.text.map(|text| {
            cut_keeping_ends(
                &text,
                max_chars,
                "the resource is longer than an attachment may be",
            )
            .text
        }),
        uri: content.uri,
        mime_type: content.mime_type,
        blob: content.blob,
    }
}

/// One prompt message: its text as the message's content, anything else as a context block.
fn prompt_message(message: PromptMessage, origin: &PromptOrigin, max_chars: usize) -> NewMessage {
    let role = match message.role.as_str() {
        "assistant" => ChatRole::Assistant,
        _ => ChatRole::User,
    };
    let (text, blocks) = match message.content {
        ToolContent::Text { text } => (
            cut_keeping_ends(
                &text,
                max_chars,
                "the prompt message is longer than a message may be",
            )
            .text,
            Vec::new(),
        ),
        ToolContent::Resource { resource } => {
            (String::new(), vec![resource_block(resource, max_chars)])
        }
        other => (String::new(), vec![result_block(&other)]),
    };
    let chat = ChatMessage {
        role,
        ..ChatMessage::user(text)
    };
    let context = MessageContext {
        attachments: Vec::new(),
        blocks: ResultBlock::within_budget(blocks, STORED_CONTENT_MAX_BYTES),
        prompt: Some(origin.clone()),
    };
    with_context(NewMessage::from_chat(chat), &context)
}

/// `message` with `context` in its metadata.
fn with_context(mut message: NewMessage, context: &MessageContext) -> NewMessage {
    if let (Ok(value), serde_json::Value::Object(metadata)) =
        (serde_json::to_value(context), &mut message.metadata)
    {
        metadata.insert(MESSAGE_CONTEXT_KEY.to_owned(), value);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_messages_keep_their_role_and_origin() {
        let origin = PromptOrigin {
            server: "everything".into(),
            name: "simple-prompt".into(),
        };
        let message = prompt_message(
            PromptMessage {
                role: "assistant".into(),
                content: ToolContent::Text {
                    text: "Hello".into(),
                },
            },
            &origin,
            1000,
        );
        assert_eq!(message.role, ChatRole::Assistant);
        assert_eq!(message.content, "Hello");
        let context = MessageContext::from_metadata(&message.metadata).unwrap();
        assert_eq!(context.prompt, Some(origin));
    }

    #[test]
    fn long_resource_text_is_cut_with_a_note() {
        let block = resource_block(
            ResourceContent {
                uri: "demo://long".into(),
                mime_type: Some("text/plain".into()),
                text: Some("x".repeat(5000)),
                blob: None,
            },
            1000,
        );
        let ResultBlock::Resource {
            text: Some(text), ..
        } = block
        else {
            panic!("a text resource stays one");
        };
        assert!(text.chars().count() <= 1000);
        assert!(text.contains("longer than an attachment may be"));
    }
}
