//! Token usage totals: per conversation (its owner or an admin), per person (their own, or
//! anyone's for an admin) and for the workspace (admins), summed by the store from the usage
//! each assistant message recorded, optionally from an instant on.

use super::ChatService;
use crate::error::{ChatError, ChatResult};
use chrono::{DateTime, Utc};
use switchboard_core::{ConversationId, Principal, UserId};
use switchboard_store::{UsageFilter, UsageRow};

/// Whose usage to total.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UsageScope {
    Conversation(ConversationId),
    /// A person's conversations; another person's only for an admin.
    User(UserId),
    /// Every conversation of the workspace (admins).
    Workspace,
}

/// Totals, overall and by provider and model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UsageReport {
    pub total: UsageRow,
    /// By named provider and model, sorted by both.
    pub by_model: Vec<UsageRow>,
}

impl ChatService {
    /// The totals of `scope` since `since` (all time when `None`).
    pub async fn usage(
        &self,
        principal: &Principal,
        scope: UsageScope,
        since: Option<DateTime<Utc>>,
    ) -> ChatResult<UsageReport> {
        let mut filter = UsageFilter {
            since,
            ..UsageFilter::default()
        };
        match scope {
            UsageScope::Conversation(conversation_id) => {
                let conversation = self
                    .visible_conversation(principal, &conversation_id)
                    .await?;
                filter.conversation_id = Some(conversation.id);
            }
            UsageScope::User(user_id) => {
                if user_id != principal.user_id && !principal.is_admin() {
                    return Err(ChatError::Forbidden(
                        "only an admin sees another person's usage".to_owned(),
                    ));
                }
                filter.owner_user_id = Some(user_id);
            }
            UsageScope::Workspace => {
                if !principal.is_admin() {
                    return Err(ChatError::Forbidden(
                        "only an admin sees the workspace's usage".to_owned(),
                    ));
                }
            }
        }
        let by_model = self
            .engine
            .store
            .usage_totals(&principal.workspace_id, &filter)
            .await?;
        Ok(UsageReport {
            total: total_of(&by_model),
            by_model,
        })
    }
}

/// The rows summed (provider and model left empty).
fn total_of(rows: &[UsageRow]) -> UsageRow {
    rows.iter().fold(UsageRow::default(), |mut total, row| {
        total.steps += row.steps;
        total.input_tokens += row.input_tokens;
        total.output_tokens += row.output_tokens;
        total.cache_read_tokens += row.cache_read_tokens;
        total.cache_write_tokens += row.cache_write_tokens;
        total
    })
}
