//! Conversations: create (optionally from a bud, with MCP overrides checked against the
//! workspace's servers, and a provider and model of their own checked like a bud's), list a
//! page at a time, read with messages and tool calls, rename or change overrides and model,
//! delete (cancelling an answer in flight first), and read a tool call's
//! full result in pages.

use super::ChatService;
use crate::error::{ChatError, ChatResult};
use crate::mcp_config::{BudMcpConfig, McpConfigOverrides, resolve_mcp_config};
use crate::providers::effective_choice;
use serde_json::Value;
use std::collections::HashSet;
use std::time::Duration;
use switchboard_core::{
    BudId, ChatRole, ConversationId, Principal, ToolCallId, ToolMessageMetadata, WorkspaceId,
};
use switchboard_mcp_client::ToolResult;
use switchboard_store::{
    ConversationCursor, ConversationPatch, ConversationRecord, MessageRecord, ModelChoice,
    NewConversation, ToolCallRecord,
};

#[derive(Clone, Debug, Default)]
pub struct NewConversationInput {
    pub bud_id: Option<BudId>,
    pub title: Option<String>,
    pub mcp_config_overrides: Option<Value>,
    /// The provider and model this conversation answers with over its bud's.
    pub provider: Option<String>,
    pub model: Option<String>,
}

/// `None` keeps a field; `Some(None)` clears the overrides, the provider or the model.
#[derive(Clone, Debug, Default)]
pub struct ConversationUpdate {
    pub title: Option<String>,
    pub mcp_config_overrides: Option<Option<Value>>,
    pub provider: Option<Option<String>>,
    pub model: Option<Option<String>>,
}

#[derive(Clone, Debug)]
pub struct ConversationPage {
    pub conversations: Vec<ConversationRecord>,
    /// Pass back to get the next page; `None` on the last page.
    pub next_cursor: Option<ConversationCursor>,
    /// The listed conversations with an answer being generated right now, by this process
    /// (follow one with [`ChatService::attach`]) or by another replica on the same database.
    pub answers_in_flight: HashSet<ConversationId>,
}

impl ConversationPage {
    pub fn answer_in_flight(&self, conversation_id: &ConversationId) -> bool {
        self.answers_in_flight.contains(conversation_id)
    }
}

#[derive(Clone, Debug)]
pub struct ConversationDetail {
    pub conversation: ConversationRecord,
    pub messages: Vec<MessageRecord>,
    pub tool_calls: Vec<ToolCallRecord>,
    /// An answer is being generated right now, here (attach to it to follow) or by another
    /// replica.
    pub answer_in_flight: bool,
}

/// A slice of a tool call's full result text (characters `offset..offset+text.len()`).
#[derive(Clone, Debug)]
pub struct ToolResultPage {
    pub tool_call: ToolCallRecord,
    pub offset: usize,
    pub total_chars: usize,
    pub text: String,
    pub next_offset: Option<usize>,
}

/// Most characters returned by one result page.
pub const MAX_RESULT_PAGE_CHARS: usize = 1024 * 1024;

impl ChatService {
    pub async fn create_conversation(
        &self,
        principal: &Principal,
        input: NewConversationInput,
    ) -> ChatResult<ConversationRecord> {
        let store = &self.engine.store;
        let workspace_id = &principal.workspace_id;
        if let Some(overrides) = &input.mcp_config_overrides {
            self.check_overrides(workspace_id, input.bud_id.as_ref(), overrides)
                .await?;
        } else if let Some(bud_id) = &input.bud_id {
            store.get_bud(workspace_id, bud_id).await?;
        }
        let overrides = input
            .mcp_config_overrides
            .filter(|value| !value.is_null())
            .map(|value| McpConfigOverrides::parse(&value).map(|parsed| parsed.to_value()))
            .transpose()?;
        let model_choice = ModelChoice {
            provider: non_blank(input.provider),
            model: non_blank(input.model),
        };
        self.check_model_choice(workspace_id, input.bud_id.as_ref(), &model_choice)
            .await?;
        Ok(store
            .create_conversation(
                workspace_id,
                NewConversation {
                    owner_user_id: principal.user_id.clone(),
                    bud_id: input.bud_id,
                    title: input.title.unwrap_or_default().trim().to_owned(),
                    mcp_config_overrides: overrides,
                    model_choice,
                },
            )
            .await?)
    }

    /// The caller's own conversations, most recently active first.
    pub async fn list_conversations(
        &self,
        principal: &Principal,
        limit: u32,
        after: Option<ConversationCursor>,
    ) -> ChatResult<ConversationPage> {
        let limit = limit.clamp(1, 200);
        let mut conversations = self
            .engine
            .store
            .list_conversations_page(
                &principal.workspace_id,
                &principal.user_id,
                limit + 1,
                after.as_ref(),
            )
            .await?;
        let next_cursor = if conversations.len() > limit as usize {
            conversations.truncate(limit as usize);
            conversations.last().map(ConversationCursor::after)
        } else {
            None
        };
        let elsewhere = self.answers_elsewhere(&principal.workspace_id).await?;
        let answers_in_flight = conversations
            .iter()
            .filter(|conversation| {
                self.engine.turns.current(&conversation.id).is_some()
                    || elsewhere.contains(&conversation.id)
            })
            .map(|conversation| conversation.id.clone())
            .collect();
        Ok(ConversationPage {
            conversations,
            next_cursor,
            answers_in_flight,
        })
    }

    pub async fn conversation_detail(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
    ) -> ChatResult<ConversationDetail> {
        let conversation = self
            .visible_conversation(principal, conversation_id)
            .await?;
        let store = &self.engine.store;
        let (messages, tool_calls) = futures::try_join!(
            store.list_messages(&principal.workspace_id, &conversation.id),
            store.list_tool_calls(&principal.workspace_id, &conversation.id),
        )?;
        let answer_in_flight = self.engine.turns.current(&conversation.id).is_some()
            || self
                .answers_elsewhere(&principal.workspace_id)
                .await?
                .contains(&conversation.id);
        Ok(ConversationDetail {
            conversation,
            messages: messages.into_iter().map(with_typed_tool_metadata).collect(),
            tool_calls,
            answer_in_flight,
        })
    }

    /// Conversations of the workspace where another live replica is answering (its claim in
    /// the store). This process's own answers are known from its registry, which is exact:
    /// its claim may outlive an answer by the moment the release takes.
    async fn answers_elsewhere(
        &self,
        workspace_id: &WorkspaceId,
    ) -> ChatResult<HashSet<ConversationId>> {
        let store = &self.engine.store;
        let here = store.instance_id();
        Ok(store
            .list_answers_in_flight(workspace_id)
            .await?
            .into_iter()
            .filter(|claim| claim.instance_id.as_ref() != here)
            .map(|claim| claim.conversation_id)
            .collect())
    }

    pub async fn update_conversation(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
        update: ConversationUpdate,
    ) -> ChatResult<ConversationRecord> {
        let conversation = self
            .visible_conversation(principal, conversation_id)
            .await?;
        let overrides = match update.mcp_config_overrides {
            Some(Some(value)) if !value.is_null() => {
                self.check_overrides(
                    &principal.workspace_id,
                    conversation.bud_id.as_ref(),
                    &value,
                )
                .await?;
                Some(Some(McpConfigOverrides::parse(&value)?.to_value()))
            }
            Some(_) => Some(None),
            None => None,
        };
        let model_choice = if update.provider.is_some() || update.model.is_some() {
            let current = &conversation.model_choice;
            let choice = ModelChoice {
                provider: non_blank(update.provider.unwrap_or(current.provider.clone())),
                model: non_blank(update.model.unwrap_or(current.model.clone())),
            };
            self.check_model_choice(
                &principal.workspace_id,
                conversation.bud_id.as_ref(),
                &choice,
            )
            .await?;
            Some(choice)
        } else {
            None
        };
        let patch = ConversationPatch {
            title: update.title.map(|title| title.trim().to_owned()),
            mcp_config_overrides: overrides,
            model_choice,
        };
        Ok(self
            .engine
            .store
            .update_conversation(&principal.workspace_id, &conversation.id, patch)
            .await?)
    }

    /// Deletes the conversation with its messages and tool calls; an answer in flight is
    /// cancelled first (given a few seconds to save before the rows go).
    pub async fn delete_conversation(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
    ) -> ChatResult<()> {
        let conversation = self
            .visible_conversation(principal, conversation_id)
            .await?;
        if let Some(turn) = self.engine.turns.current(&conversation.id) {
            turn.cancellation.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(5), turn.wait_finished()).await;
        }
        Ok(self
            .engine
            .store
            .delete_conversation(&principal.workspace_id, &conversation.id)
            .await?)
    }

    /// Characters `offset..offset+limit` of the full text the tool call returned (what the
    /// model saw may have been cut).
    pub async fn tool_result_page(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
        tool_call_id: &ToolCallId,
        offset: usize,
        limit: usize,
    ) -> ChatResult<ToolResultPage> {
        let conversation = self
            .visible_conversation(principal, conversation_id)
            .await?;
        let tool_call = self
            .engine
            .store
            .get_tool_call(&principal.workspace_id, tool_call_id)
            .await?;
        if tool_call.conversation_id != conversation.id {
            return Err(ChatError::NotFound("tool call"));
        }
        let full_text = match &tool_call.result {
            Some(value) => match serde_json::from_value::<ToolResult>(value.clone()) {
                Ok(result) => result.text_for_model(),
                Err(_) => value.to_string(),
            },
            None => tool_call.error.clone().unwrap_or_default(),
        };
        let limit = limit.clamp(1, MAX_RESULT_PAGE_CHARS);
        let total_chars = full_text.chars().count();
        let text: String = full_text.chars().skip(offset).take(limit).collect();
        let end = offset.saturating_add(text.chars().count());
        Ok(ToolResultPage {
            tool_call,
            offset,
            total_chars,
            text,
            next_offset: (end < total_chars).then_some(end),
        })
    }

    /// Refuses a conversation's provider and model that could not answer (with its bud's, when
    /// the choice names only a model).
    async fn check_model_choice(
        &self,
        workspace_id: &WorkspaceId,
        bud_id: Option<&BudId>,
        choice: &ModelChoice,
    ) -> ChatResult<()> {
        if choice.provider.is_none() && choice.model.is_none() {
            return Ok(());
        }
        let bud = match bud_id {
            Some(bud_id) => Some(self.engine.store.get_bud(workspace_id, bud_id).await?),
            None => None,
        };
        let (provider, model) = effective_choice(bud.as_ref(), choice);
        self.engine
            .providers
            .check_bud_choice(workspace_id, provider, model)
            .await
    }

    /// Checks overrides against the bud's configuration and the workspace's servers.
    async fn check_overrides(
        &self,
        workspace_id: &WorkspaceId,
        bud_id: Option<&BudId>,
        overrides: &Value,
    ) -> ChatResult<()> {
        let store = &self.engine.store;
        let overrides = McpConfigOverrides::parse(overrides)?;
        let bud_config = match bud_id {
            Some(bud_id) => {
                BudMcpConfig::parse(&store.get_bud(workspace_id, bud_id).await?.mcp_config)?
            }
            None => BudMcpConfig::default(),
        };
        let servers = store.list_servers(workspace_id).await?;
        resolve_mcp_config(&bud_config, &overrides, &servers)?;
        Ok(())
    }
}

/// `None` for an absent or blank name.
fn non_blank(name: Option<String>) -> Option<String> {
    name.map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

/// A tool message's metadata as [`ToolMessageMetadata`] writes it, whatever shape its row has
/// (older rows may use camelCase names): clients read one name per field. Metadata that is
/// not of that shape at all is left as stored.
fn with_typed_tool_metadata(mut message: MessageRecord) -> MessageRecord {
    if message.role == ChatRole::Tool
        && let Some(typed) = ToolMessageMetadata::from_stored(&message.metadata)
    {
        message.metadata = typed.to_stored();
    }
    message
}
