//! MCP Apps' model context (`ui/update-model-context`, issue 12): what the app shown under a
//! tool call last asked the host to give the model, one row per tool call, replaced by each
//! update. The chat engine reads a conversation's rows when it builds the next turn's history.
//! Validation and size limits are the caller's (the chat service); this module only keeps the
//! JSON, scoped by workspace like every other row.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult};
use crate::storable::clean_json;
use crate::store::Store;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use switchboard_core::{ConversationId, ToolCallId, WorkspaceId};

/// The context an app last sent for the tool call it is shown with.
#[derive(Clone, Debug, PartialEq)]
pub struct AppModelContext {
    pub tool_call_id: ToolCallId,
    pub conversation_id: ConversationId,
    /// `{"content": [...], "structuredContent": {...}}`, as validated by the chat service.
    pub context: Value,
    pub updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct AppModelContextRow {
    tool_call_id: String,
    conversation_id: String,
    context: Json<Value>,
    updated_at: DateTime<Utc>,
}

impl From<AppModelContextRow> for AppModelContext {
    fn from(row: AppModelContextRow) -> Self {
        AppModelContext {
            tool_call_id: ToolCallId::from(row.tool_call_id),
            conversation_id: ConversationId::from(row.conversation_id),
            context: row.context.0,
            updated_at: row.updated_at,
        }
    }
}

impl Store {
    /// Replaces the context of the app shown with `tool_call_id` (a call of `conversation_id`
    /// in the workspace; `NotFound` otherwise).
    pub async fn set_app_model_context(
        &self,
        workspace_id: &WorkspaceId,
        conversation_id: &ConversationId,
        tool_call_id: &ToolCallId,
        context: &Value,
    ) -> StoreResult<AppModelContext> {
        let call = self.get_tool_call(workspace_id, tool_call_id).await?;
        if &call.conversation_id != conversation_id {
            return Err(StoreError::not_found("tool call"));
        }
        let mut context = context.clone();
        clean_json(&mut context);
        let now = clock::now();
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO app_model_contexts (tool_call_id, workspace_id, conversation_id, \
             context, updated_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (tool_call_id) DO UPDATE SET context = excluded.context, \
             updated_at = excluded.updated_at"
        )
        .bind(tool_call_id.as_str())
        .bind(workspace_id.as_str())
        .bind(conversation_id.as_str())
        .bind(Json(&context))
        .bind(now)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(AppModelContext {
            tool_call_id: tool_call_id.clone(),
            conversation_id: conversation_id.clone(),
            context,
            updated_at: now,
        })
    }

    /// The app contexts of a conversation's tool calls.
    pub async fn list_app_model_contexts(
        &self,
        workspace_id: &WorkspaceId,
        conversation_id: &ConversationId,
    ) -> StoreResult<Vec<AppModelContext>> {
        let rows: Vec<AppModelContextRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT tool_call_id, conversation_id, context, updated_at FROM app_model_contexts \
             WHERE workspace_id = $1 AND conversation_id = $2 ORDER BY updated_at, tool_call_id"
        )
        .bind(workspace_id.as_str())
        .bind(conversation_id.as_str())
        .fetch_all(pool)
        .await)?;
        Ok(rows.into_iter().map(AppModelContext::from).collect())
    }
}
