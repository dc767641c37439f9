//! Conversations: a chat thread owned by one user, optionally started from a bud, with
//! per-conversation MCP overrides and its own provider and model choice. Messages live in `messages.rs`, tool calls in
//! `tool_calls.rs`; deleting a conversation deletes both.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::storable::{clean_optional_json, clean_optional_text, clean_text};
use crate::store::Store;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use switchboard_core::{BudId, ConversationId, UserId, WorkspaceId};

const MAX_TITLE_CHARS: usize = 500;

#[derive(Clone, Debug, PartialEq)]
pub struct NewConversation {
    /// Must be a user of the workspace.
    pub owner_user_id: UserId,
    /// Must be a bud of the workspace.
    pub bud_id: Option<BudId>,
    /// May be empty (the UI names it later).
    pub title: String,
    /// A JSON object overriding the bud's `mcp_config` for this conversation.
    pub mcp_config_overrides: Option<Value>,
    /// The provider and model chosen for this conversation over its bud's.
    pub model_choice: ModelChoice,
}

/// A conversation's own provider and model (migration 0012); `None` keeps the bud's (or the
/// workspace default's). The chat engine checks the names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelChoice {
    pub provider: Option<String>,
    pub model: Option<String>,
}

/// A change to a conversation; `None` leaves a field as it is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConversationPatch {
    pub title: Option<String>,
    pub mcp_config_overrides: Option<Option<Value>>,
    /// Replaces the provider and model choice as a whole.
    pub model_choice: Option<ModelChoice>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConversationRecord {
    pub id: ConversationId,
    pub workspace_id: WorkspaceId,
    pub owner_user_id: UserId,
    /// `None` if started without a bud or the bud was deleted since.
    pub bud_id: Option<BudId>,
    pub title: String,
    pub mcp_config_overrides: Option<Value>,
    pub model_choice: ModelChoice,
    pub created_at: DateTime<Utc>,
    /// Moves with every change, including each appended message.
    pub updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
pub(crate) struct ConversationRow {
    id: String,
    workspace_id: String,
    owner_user_id: String,
    bud_id: Option<String>,
    title: String,
    mcp_config_overrides: Option<Json<Value>>,
    llm_provider: Option<String>,
    llm_model: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<ConversationRow> for ConversationRecord {
    fn from(row: ConversationRow) -> Self {
        ConversationRecord {
            id: ConversationId::from_string(row.id),
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            owner_user_id: UserId::from_string(row.owner_user_id),
            bud_id: row.bud_id.map(BudId::from_string),
            title: row.title,
            mcp_config_overrides: row.mcp_config_overrides.map(|json| json.0),
            model_choice: ModelChoice {
                provider: row.llm_provider,
                model: row.llm_model,
            },
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

macro_rules! select_conversations {
    ($tail:literal) => {
        concat!(
            "SELECT id, workspace_id, owner_user_id, bud_id, title, mcp_config_overrides, ",
            "llm_provider, llm_model, created_at, updated_at FROM conversations ",
            $tail
        )
    };
}
pub(crate) use select_conversations;

/// The title (often the first question) and overrides as every backend holds them
/// ([`crate::storable`]).
fn clean_conversation(conversation: &mut ConversationRecord) {
    clean_text(&mut conversation.title);
    clean_optional_json(&mut conversation.mcp_config_overrides);
    clean_optional_text(&mut conversation.model_choice.provider);
    clean_optional_text(&mut conversation.model_choice.model);
}

fn validate_conversation(title: &str, overrides: Option<&Value>) -> StoreResult<()> {
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(StoreError::invalid(
            "title",
            format!("must be at most {MAX_TITLE_CHARS} characters long"),
        ));
    }
    if overrides.is_some_and(|value| !value.is_object()) {
        return Err(StoreError::invalid(
            "mcp_config_overrides",
            "must be a JSON object",
        ));
    }
    Ok(())
}

impl Store {
    /// Starts a conversation. `NotFound { entity: "user" }` / `"bud"` when the owner or bud is
    /// not in the workspace.
    pub async fn create_conversation(
        &self,
        workspace_id: &WorkspaceId,
        new_conversation: NewConversation,
    ) -> StoreResult<ConversationRecord> {
        validate_conversation(
            &new_conversation.title,
            new_conversation.mcp_config_overrides.as_ref(),
        )?;
        let now = clock::now();
        let mut record = ConversationRecord {
            id: ConversationId::generate(),
            workspace_id: workspace_id.clone(),
            owner_user_id: new_conversation.owner_user_id,
            bud_id: new_conversation.bud_id,
            title: new_conversation.title,
            mcp_config_overrides: new_conversation.mcp_config_overrides,
            model_choice: new_conversation.model_choice,
            created_at: now,
            updated_at: now,
        };
        clean_conversation(&mut record);
        // The bud check and the insert are one statement: the bud must be in this workspace.
        let inserted = on_backend!(self, |pool| sqlx::query(
            "INSERT INTO conversations (id, workspace_id, owner_user_id, bud_id, title, \
             mcp_config_overrides, created_at, updated_at, llm_provider, llm_model) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $7, $8, $9 \
             WHERE $4 IS NULL OR EXISTS (SELECT 1 FROM buds WHERE workspace_id = $2 AND id = $4)"
        )
        .bind(record.id.as_str())
        .bind(record.workspace_id.as_str())
        .bind(record.owner_user_id.as_str())
        .bind(record.bud_id.as_ref().map(BudId::as_str))
        .bind(&record.title)
        .bind(record.mcp_config_overrides.as_ref().map(Json))
        .bind(record.created_at)
        .bind(&record.model_choice.provider)
        .bind(&record.model_choice.model)
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))
        .map_err(insert_error("conversation", "id", "user"))?;
        if inserted == 0 {
            return Err(StoreError::not_found("bud"));
        }
        Ok(record)
    }

    pub async fn get_conversation(
        &self,
        workspace_id: &WorkspaceId,
        conversation_id: &ConversationId,
    ) -> StoreResult<ConversationRecord> {
        let row: Option<ConversationRow> = on_backend!(self, |pool| sqlx::query_as(
            select_conversations!("WHERE workspace_id = $1 AND id = $2")
        )
        .bind(workspace_id.as_str())
        .bind(conversation_id.as_str())
        .fetch_optional(pool)
        .await)?;
        row.map(ConversationRecord::from)
            .ok_or_else(|| StoreError::not_found("conversation"))
    }

    /// The workspace's conversations (only `owner`'s when given), most recently active first.
    pub async fn list_conversations(
        &self,
        workspace_id: &WorkspaceId,
        owner: Option<&UserId>,
    ) -> StoreResult<Vec<ConversationRecord>> {
        let rows: Vec<ConversationRow> =
            on_backend!(self, |pool| sqlx::query_as(select_conversations!(
                "WHERE workspace_id = $1 AND ($2 IS NULL OR owner_user_id = $2) \
                 ORDER BY updated_at DESC, id DESC"
            ))
            .bind(workspace_id.as_str())
            .bind(owner.map(UserId::as_str))
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(ConversationRecord::from).collect())
    }

    pub async fn update_conversation(
        &self,
        workspace_id: &WorkspaceId,
        conversation_id: &ConversationId,
        patch: ConversationPatch,
    ) -> StoreResult<ConversationRecord> {
        let mut conversation = self.get_conversation(workspace_id, conversation_id).await?;
        if let Some(title) = patch.title {
            conversation.title = title;
        }
        if let Some(overrides) = patch.mcp_config_overrides {
            conversation.mcp_config_overrides = overrides;
        }
        if let Some(model_choice) = patch.model_choice {
            conversation.model_choice = model_choice;
        }
        validate_conversation(
            &conversation.title,
            conversation.mcp_config_overrides.as_ref(),
        )?;
        conversation.updated_at = clock::now();
        clean_conversation(&mut conversation);
        let affected = on_backend!(self, |pool| sqlx::query(
            "UPDATE conversations SET title = $3, mcp_config_overrides = $4, updated_at = $5, \
             llm_provider = $6, llm_model = $7 WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(conversation_id.as_str())
        .bind(&conversation.title)
        .bind(conversation.mcp_config_overrides.as_ref().map(Json))
        .bind(conversation.updated_at)
        .bind(&conversation.model_choice.provider)
        .bind(&conversation.model_choice.model)
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        if affected == 0 {
            return Err(StoreError::not_found("conversation"));
        }
        Ok(conversation)
    }

    /// Deletes a conversation with its messages and tool calls.
    pub async fn delete_conversation(
        &self,
        workspace_id: &WorkspaceId,
        conversation_id: &ConversationId,
    ) -> StoreResult<()> {
        let affected = on_backend!(self, |pool| sqlx::query(
            "DELETE FROM conversations WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(conversation_id.as_str())
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        if affected == 0 {
            return Err(StoreError::not_found("conversation"));
        }
        Ok(())
    }
}
