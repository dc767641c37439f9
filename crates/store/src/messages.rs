//! Messages of a conversation, in a gap-free order (`seq` 1, 2, 3…) that concurrent appends
//! cannot break: each append locks its conversation row first (and bumps its `updated_at`).
//! A message streamed from the model is appended as `partial` and completed in place, so a
//! crash mid-answer leaves what was said, marked as such.

use crate::backend::{on_backend, write_transaction};
use crate::clock;
use crate::error::{StoreError, StoreResult};
use crate::storable::{clean_json, clean_optional_text, clean_text};
use crate::store::Store;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::types::Json;
use std::fmt;
use std::str::FromStr;
use switchboard_core::{
    ChatMessage, ChatRole, ConversationId, MessageId, ToolCallRequest, WorkspaceId,
};

/// Whether a message is final.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    #[default]
    Complete,
    /// Still streaming, or cut off by a crash or a failed upstream.
    Partial,
    /// The turn producing it failed; `metadata` may say why.
    Failed,
}

impl MessageStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageStatus::Complete => "complete",
            MessageStatus::Partial => "partial",
            MessageStatus::Failed => "failed",
        }
    }
}

impl fmt::Display for MessageStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MessageStatus {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "complete" => Ok(MessageStatus::Complete),
            "partial" => Ok(MessageStatus::Partial),
            "failed" => Ok(MessageStatus::Failed),
            other => Err(format!("unknown message status '{other}'")),
        }
    }
}

/// A message to append.
#[derive(Clone, Debug, PartialEq)]
pub struct NewMessage {
    pub role: ChatRole,
    pub content: String,
    pub tool_calls: Vec<ToolCallRequest>,
    /// For `tool` messages: the model's call id this answers.
    pub tool_call_id: Option<String>,
    /// A JSON object (citations, usage, model name…).
    pub metadata: Value,
    pub status: MessageStatus,
}

impl NewMessage {
    /// A complete message from a [`ChatMessage`], with empty metadata.
    pub fn from_chat(message: ChatMessage) -> Self {
        NewMessage {
            role: message.role,
            content: message.content,
            tool_calls: message.tool_calls,
            tool_call_id: message.tool_call_id,
            metadata: Value::Object(Default::default()),
            status: MessageStatus::Complete,
        }
    }
}

/// A change to a stored message (completing a streamed answer); `None` keeps a field.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageUpdate {
    pub content: Option<String>,
    pub tool_calls: Option<Vec<ToolCallRequest>>,
    pub metadata: Option<Value>,
    pub status: Option<MessageStatus>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MessageRecord {
    pub id: MessageId,
    pub workspace_id: WorkspaceId,
    pub conversation_id: ConversationId,
    /// 1-based position in the conversation.
    pub seq: i64,
    pub role: ChatRole,
    pub content: String,
    pub tool_calls: Vec<ToolCallRequest>,
    pub tool_call_id: Option<String>,
    pub metadata: Value,
    pub status: MessageStatus,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl MessageRecord {
    /// The message as history for the model.
    pub fn to_chat_message(&self) -> ChatMessage {
        if self.role != ChatRole::Tool
            && let Some(context) = switchboard_core::MessageContext::from_metadata(&self.metadata)
        {
            // Attached resources and a prompt's content follow the text (`message_context`).
            let (content, images) = context.for_model(&self.content);
            return ChatMessage {
                role: self.role,
                content,
                tool_calls: self.tool_calls.clone(),
                tool_call_id: self.tool_call_id.clone(),
                is_error: false,
                images,
            };
        }
        let metadata = (self.role == ChatRole::Tool)
            .then(|| switchboard_core::ToolMessageMetadata::from_stored(&self.metadata))
            .flatten();
        ChatMessage {
            role: self.role,
            content: self.content.clone(),
            tool_calls: self.tool_calls.clone(),
            tool_call_id: self.tool_call_id.clone(),
            is_error: metadata.as_ref().is_some_and(|metadata| metadata.is_error),
            images: metadata
                .map(|metadata| switchboard_core::ImageInput::from_blocks(&metadata.content))
                .unwrap_or_default(),
        }
    }

    /// A tool message whose metadata says the call failed.
    pub fn is_failed_tool_result(&self) -> bool {
        self.role == ChatRole::Tool
            && switchboard_core::ToolMessageMetadata::from_stored(&self.metadata)
                .is_some_and(|metadata| metadata.is_error)
    }
}

#[derive(sqlx::FromRow)]
struct MessageRow {
    id: String,
    workspace_id: String,
    conversation_id: String,
    seq: i64,
    role: String,
    content: String,
    tool_calls: Json<Vec<ToolCallRequest>>,
    tool_call_id: Option<String>,
    metadata: Json<Value>,
    status: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<MessageRow> for MessageRecord {
    type Error = StoreError;

    fn try_from(row: MessageRow) -> Result<Self, Self::Error> {
        Ok(MessageRecord {
            id: MessageId::from_string(row.id),
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            conversation_id: ConversationId::from_string(row.conversation_id),
            seq: row.seq,
            role: row.role.parse().map_err(StoreError::corrupt)?,
            content: row.content,
            tool_calls: row.tool_calls.0,
            tool_call_id: row.tool_call_id,
            metadata: row.metadata.0,
            status: row.status.parse().map_err(StoreError::corrupt)?,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

macro_rules! select_messages {
    ($tail:literal) => {
        concat!(
            "SELECT id, workspace_id, conversation_id, seq, role, content, tool_calls, tool_call_id, ",
            "metadata, status, created_at, updated_at FROM messages ",
            $tail
        )
    };
}

/// The message's text as every backend holds it ([`crate::storable`]).
fn clean_message(message: &mut MessageRecord) {
    clean_text(&mut message.content);
    for call in &mut message.tool_calls {
        clean_text(&mut call.id);
        clean_text(&mut call.name);
        clean_text(&mut call.arguments);
    }
    clean_optional_text(&mut message.tool_call_id);
    clean_json(&mut message.metadata);
}

fn validate_metadata(metadata: &Value) -> StoreResult<()> {
    if !metadata.is_object() {
        return Err(StoreError::invalid("metadata", "must be a JSON object"));
    }
    Ok(())
}

/// The record [`Store::append_message`] writes (its `seq` is given by the insert).
pub(crate) fn new_message_record(
    workspace_id: &WorkspaceId,
    conversation_id: &ConversationId,
    new_message: NewMessage,
) -> StoreResult<MessageRecord> {
    validate_metadata(&new_message.metadata)?;
    let now = clock::now();
    let mut record = MessageRecord {
        id: MessageId::generate(),
        workspace_id: workspace_id.clone(),
        conversation_id: conversation_id.clone(),
        seq: 0,
        role: new_message.role,
        content: new_message.content,
        tool_calls: new_message.tool_calls,
        tool_call_id: new_message.tool_call_id,
        metadata: new_message.metadata,
        status: new_message.status,
        created_at: now,
        updated_at: now,
    };
    clean_message(&mut record);
    Ok(record)
}

/// Appends `$record` (from [`new_message_record`]) at the end of its conversation inside the
/// caller's write transaction; evaluates to `StoreResult<i64>`, the message's `seq`. Writing the
/// conversation row first serialises appends to one conversation.
macro_rules! insert_message {
    ($executor:expr, $record:expr) => {{
        let record: &MessageRecord = $record;
        async {
            let touched = sqlx::query(
                "UPDATE conversations SET updated_at = $3 WHERE workspace_id = $1 AND id = $2",
            )
            .bind(record.workspace_id.as_str())
            .bind(record.conversation_id.as_str())
            .bind(record.created_at)
            .execute(&mut *$executor)
            .await?
            .rows_affected();
            if touched == 0 {
                return Err(StoreError::not_found("conversation"));
            }
            let seq: i64 = sqlx::query_scalar(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = $1",
            )
            .bind(record.conversation_id.as_str())
            .fetch_one(&mut *$executor)
            .await?;
            sqlx::query(
                "INSERT INTO messages (id, workspace_id, conversation_id, seq, role, content, \
                 tool_calls, tool_call_id, metadata, status, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)",
            )
            .bind(record.id.as_str())
            .bind(record.workspace_id.as_str())
            .bind(record.conversation_id.as_str())
            .bind(seq)
            .bind(record.role.as_str())
            .bind(&record.content)
            .bind(Json(&record.tool_calls))
            .bind(&record.tool_call_id)
            .bind(Json(&record.metadata))
            .bind(record.status.as_str())
            .bind(record.created_at)
            .execute(&mut *$executor)
            .await?;
            Ok::<i64, StoreError>(seq)
        }
        .await
    }};
}
pub(crate) use insert_message;

impl Store {
    /// Appends a message at the end of the conversation and returns it with its `seq`.
    pub async fn append_message(
        &self,
        workspace_id: &WorkspaceId,
        conversation_id: &ConversationId,
        new_message: NewMessage,
    ) -> StoreResult<MessageRecord> {
        let mut record = new_message_record(workspace_id, conversation_id, new_message)?;
        record.seq = write_transaction!(self, |tx| insert_message!(&mut *tx, &record)?);
        Ok(record)
    }

    /// Changes a stored message in place (e.g. a streamed answer becoming complete).
    pub async fn update_message(
        &self,
        workspace_id: &WorkspaceId,
        message_id: &MessageId,
        update: MessageUpdate,
    ) -> StoreResult<MessageRecord> {
        let mut message = self.get_message(workspace_id, message_id).await?;
        if let Some(content) = update.content {
            message.content = content;
        }
        if let Some(tool_calls) = update.tool_calls {
            message.tool_calls = tool_calls;
        }
        if let Some(metadata) = update.metadata {
            validate_metadata(&metadata)?;
            message.metadata = metadata;
        }
        if let Some(status) = update.status {
            message.status = status;
        }
        message.updated_at = clock::now();
        clean_message(&mut message);
        let affected = on_backend!(self, |pool| sqlx::query(
            "UPDATE messages SET content = $3, tool_calls = $4, metadata = $5, status = $6, \
             updated_at = $7 WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(message_id.as_str())
        .bind(&message.content)
        .bind(Json(&message.tool_calls))
        .bind(Json(&message.metadata))
        .bind(message.status.as_str())
        .bind(message.updated_at)
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        if affected == 0 {
            return Err(StoreError::not_found("message"));
        }
        Ok(message)
    }

    /// Changes a message's metadata with its row locked: `edit` is given the stored metadata
    /// and answers the new one (`None`: leave it as it is). Writers editing different parts of
    /// one message at once (two watchers refreshing two attachments of one question, on one
    /// replica or two) each keep their change, which reading the message and then calling
    /// [`Self::update_message`] could lose. Answers whether it changed; `NotFound` when the
    /// message is not in the workspace.
    pub async fn edit_message_metadata(
        &self,
        workspace_id: &WorkspaceId,
        message_id: &MessageId,
        edit: impl FnOnce(&Value) -> Option<Value>,
    ) -> StoreResult<bool> {
        let changed = write_transaction!(self, |tx| {
            // A no-op write takes the row's lock on PostgreSQL (SQLite's `BEGIN IMMEDIATE`
            // already holds the database's) and reads the metadata under it.
            let stored: Option<Json<Value>> = sqlx::query_scalar(
                "UPDATE messages SET updated_at = updated_at WHERE workspace_id = $1 AND id = $2 \
                 RETURNING metadata",
            )
            .bind(workspace_id.as_str())
            .bind(message_id.as_str())
            .fetch_optional(&mut *tx)
            .await?;
            let Some(Json(stored)) = stored else {
                return Err(StoreError::not_found("message"));
            };
            match edit(&stored) {
                Some(mut metadata) if metadata != stored => {
                    validate_metadata(&metadata)?;
                    clean_json(&mut metadata);
                    sqlx::query(
                        "UPDATE messages SET metadata = $3, updated_at = $4 \
                         WHERE workspace_id = $1 AND id = $2",
                    )
                    .bind(workspace_id.as_str())
                    .bind(message_id.as_str())
                    .bind(Json(&metadata))
                    .bind(clock::now())
                    .execute(&mut *tx)
                    .await?;
                    true
                }
                _ => false,
            }
        });
        Ok(changed)
    }

    pub async fn get_message(
        &self,
        workspace_id: &WorkspaceId,
        message_id: &MessageId,
    ) -> StoreResult<MessageRecord> {
        let row: Option<MessageRow> = on_backend!(self, |pool| sqlx::query_as(select_messages!(
            "WHERE workspace_id = $1 AND id = $2"
        ))
        .bind(workspace_id.as_str())
        .bind(message_id.as_str())
        .fetch_optional(pool)
        .await)?;
        row.ok_or_else(|| StoreError::not_found("message"))?
            .try_into()
    }

    /// The conversation's messages in order (`NotFound` if the conversation is not here).
    pub async fn list_messages(
        &self,
        workspace_id: &WorkspaceId,
        conversation_id: &ConversationId,
    ) -> StoreResult<Vec<MessageRecord>> {
        let rows: Vec<MessageRow> = on_backend!(self, |pool| sqlx::query_as(select_messages!(
            "WHERE workspace_id = $1 AND conversation_id = $2 ORDER BY seq"
        ))
        .bind(workspace_id.as_str())
        .bind(conversation_id.as_str())
        .fetch_all(pool)
        .await)?;
        if rows.is_empty() {
            self.get_conversation(workspace_id, conversation_id).await?;
        }
        rows.into_iter().map(MessageRecord::try_from).collect()
    }
}
