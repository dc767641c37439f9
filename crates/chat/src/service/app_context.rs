//! MCP Apps' `ui/update-model-context` (issue 12): an app shown under a tool call tells the
//! host what the model should know of its state. The spec leaves when to the host ("typically
//! deferred until the next user message; only the last update is sent"); Switchboard stores the
//! last update with the tool call ([`switchboard_store::app_model_contexts`]) and, on every
//! later turn of the conversation, appends it to that call's result as the model sees it,
//! labelled as coming from the app (not from the person, not from the tool). It never starts a
//! turn by itself.
//!
//! Accepted: text content blocks and a `structuredContent` object (what the host advertises in
//! `hostCapabilities.updateModelContext`), at most [`APP_MODEL_CONTEXT_MAX_BYTES`] of JSON.

use super::ChatService;
use crate::error::{ChatError, ChatResult};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use switchboard_core::{ChatMessage, ChatRole, ConversationId, Principal, ToolCallId};
use switchboard_store::ToolCallRecord;
use switchboard_store::app_model_contexts::AppModelContext;

/// The largest context an app may store, in bytes of its JSON (text and structured content
/// together): what the model gets on every later turn, so it stays small.
pub const APP_MODEL_CONTEXT_MAX_BYTES: usize = 16 * 1024;

/// One `ui/update-model-context`: its text blocks and structured content.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AppContextUpdate {
    pub texts: Vec<String>,
    pub structured_content: Option<Map<String, Value>>,
}

impl AppContextUpdate {
    /// The stored form: MCP-shaped, `{"content": [{"type": "text", …}], "structuredContent"}`.
    fn to_json(&self) -> Value {
        let content: Vec<Value> = self
            .texts
            .iter()
            .map(|text| json!({"type": "text", "text": text}))
            .collect();
        let mut stored = json!({ "content": content });
        if let Some(structured) = &self.structured_content {
            stored["structuredContent"] = Value::Object(structured.clone());
        }
        stored
    }
}

impl ChatService {
    /// Replaces the model context of the app shown with `tool_call_id`. Refused like the app
    /// itself (`NotFound` for someone who may not read the conversation or a call without an
    /// app); too large → `InvalidInput`.
    pub async fn update_app_model_context(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
        tool_call_id: &ToolCallId,
        update: AppContextUpdate,
    ) -> ChatResult<AppModelContext> {
        let shown = self
            .tool_call_app(principal, conversation_id, tool_call_id)
            .await?;
        let stored = update.to_json();
        let size = serde_json::to_vec(&stored).map_or(usize::MAX, |bytes| bytes.len());
        if size > APP_MODEL_CONTEXT_MAX_BYTES {
            return Err(ChatError::invalid(
                "content",
                format!(
                    "the app's model context is {size} bytes of JSON; the limit is \
                     {APP_MODEL_CONTEXT_MAX_BYTES}"
                ),
            ));
        }
        Ok(self
            .engine
            .store
            .set_app_model_context(
                &principal.workspace_id,
                &shown.tool_call.conversation_id,
                tool_call_id,
                &stored,
            )
            .await?)
    }
}

/// Appends each app's context to the result of the call it is shown with, as the model will
/// read it. A context whose call has no result in `history` (cut out by the context window, or
/// never answered) is left out with it.
pub(crate) fn with_app_contexts(
    history: &mut [ChatMessage],
    calls: &[ToolCallRecord],
    contexts: &[AppModelContext],
) {
    if contexts.is_empty() {
        return;
    }
    let calls_by_id: HashMap<&str, &ToolCallRecord> =
        calls.iter().map(|call| (call.id.as_str(), call)).collect();
    for context in contexts {
        let Some(call) = calls_by_id.get(context.tool_call_id.as_str()) else {
            continue;
        };
        let Some(text) = context_text(call, context) else {
            continue;
        };
        let result = history.iter_mut().find(|message| {
            message.role == ChatRole::Tool
                && message.tool_call_id.as_deref() == Some(call.llm_call_id.as_str())
        });
        if let Some(result) = result {
            result.content.push_str("\n\n");
            result.content.push_str(&text);
        }
    }
}

/// The context as the model reads it; `None` when the app sent nothing.
fn context_text(call: &ToolCallRecord, context: &AppModelContext) -> Option<String> {
    let texts: Vec<&str> = context.context["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let structured = context.context.get("structuredContent");
    if texts.iter().all(|text| text.trim().is_empty()) && structured.is_none() {
        return None;
    }
    let mut text = format!(
        "[Context from the MCP App shown with this result ({} · {}), as the app last reported \
         it at {}; it comes from the app, not from the person]",
        call.server_name,
        call.tool_name,
        context.updated_at.format("%Y-%m-%dT%H:%M:%SZ"),
    );
    for block in texts {
        text.push('\n');
        text.push_str(block);
    }
    if let Some(structured) = structured {
        text.push_str("\nStructured: ");
        text.push_str(&structured.to_string());
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::WorkspaceId;

    fn call(id: &str, llm_call_id: &str) -> ToolCallRecord {
        let now = chrono::Utc::now();
        ToolCallRecord {
            id: ToolCallId::from(id.to_owned()),
            workspace_id: WorkspaceId::from("ws".to_owned()),
            conversation_id: ConversationId::from("c".to_owned()),
            message_id: None,
            llm_call_id: llm_call_id.to_owned(),
            server_id: None,
            server_name: "shop".to_owned(),
            tool_name: "cart".to_owned(),
            arguments: "{}".to_owned(),
            state: switchboard_core::ToolCallState::Completed,
            result: None,
            error: None,
            created_at: now,
            decided_at: None,
            dispatched_at: None,
            finished_at: None,
            updated_at: now,
            task_id: None,
            task_status: None,
        }
    }

    fn context(id: &str, stored: Value) -> AppModelContext {
        AppModelContext {
            tool_call_id: ToolCallId::from(id.to_owned()),
            conversation_id: ConversationId::from("c".to_owned()),
            context: stored,
            updated_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn a_context_is_appended_to_its_own_calls_result_only() {
        let mut history = vec![
            ChatMessage::user("what is in my cart?"),
            ChatMessage::tool_result("call_a".to_owned(), "cart shown".to_owned()),
            ChatMessage::tool_result("call_b".to_owned(), "other".to_owned()),
        ];
        let update = AppContextUpdate {
            texts: vec!["3 items selected".to_owned()],
            structured_content: Some(Map::from_iter([("total".to_owned(), json!(42))])),
        };
        with_app_contexts(
            &mut history,
            &[call("tc_a", "call_a"), call("tc_b", "call_b")],
            &[
                context("tc_a", update.to_json()),
                context("tc_unknown", update.to_json()),
                context("tc_b", AppContextUpdate::default().to_json()),
            ],
        );
        let first = &history[1].content;
        assert!(
            first.starts_with(
                "cart shown\n\n[Context from the MCP App shown with this result (shop · cart)"
            ),
            "{first}"
        );
        assert!(
            first.contains("\n3 items selected\nStructured: {\"total\":42}"),
            "{first}"
        );
        assert_eq!(history[2].content, "other", "an empty context adds nothing");
        assert_eq!(history[0].content, "what is in my cart?");
    }
}
