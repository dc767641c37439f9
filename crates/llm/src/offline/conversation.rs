//! The conversation as the planner sees it: the latest question, the tool calls made for it
//! so far (with their results), and earlier results it may learn names from.
//!
//! The planner is stateless: every turn it re-reads the history the chat engine replays.

use serde_json::Value;
use switchboard_core::{ChatMessage, ChatRole};

/// A tool call and what came back.
#[derive(Clone, Debug)]
pub(crate) struct ToolOutcome {
    pub tool_name: String,
    pub arguments: Value,
    /// The result text as the chat engine passed it.
    pub text: String,
    /// The result parsed as JSON, when it is JSON.
    pub json: Option<Value>,
    pub is_error: bool,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct ConversationView {
    /// The latest user message; empty when there is none.
    pub question: String,
    /// Calls made since the latest user message, in order.
    pub this_turn: Vec<ToolOutcome>,
    /// Parsed results from before the latest user message.
    pub earlier_results: Vec<Value>,
}

impl ConversationView {
    pub fn read(messages: &[ChatMessage]) -> Self {
        let last_user = messages
            .iter()
            .rposition(|message| message.role == ChatRole::User);
        let Some(last_user) = last_user else {
            return Self::default();
        };
        let earlier_results = messages[..last_user]
            .iter()
            .filter(|message| message.role == ChatRole::Tool)
            .filter_map(|message| serde_json::from_str(&message.content).ok())
            .collect();
        let mut this_turn = Vec::new();
        for message in &messages[last_user + 1..] {
            if message.role != ChatRole::Assistant {
                continue;
            }
            for call in &message.tool_calls {
                let result = messages[last_user + 1..].iter().find(|candidate| {
                    candidate.role == ChatRole::Tool
                        && candidate.tool_call_id.as_deref() == Some(call.id.as_str())
                });
                let text = result
                    .map(|message| message.content.clone())
                    .unwrap_or_default();
                let json: Option<Value> = serde_json::from_str(&text).ok();
                let is_error = result.is_none() || looks_like_error(&text, json.as_ref());
                this_turn.push(ToolOutcome {
                    tool_name: call.name.clone(),
                    arguments: serde_json::from_str(&call.arguments).unwrap_or(Value::Null),
                    text,
                    json,
                    is_error,
                });
            }
        }
        Self {
            question: messages[last_user].content.clone(),
            this_turn,
            earlier_results,
        }
    }
}

/// Tool errors reach the model as text; recognise the usual shapes.
fn looks_like_error(text: &str, json: Option<&Value>) -> bool {
    if let Some(Value::Object(map)) = json {
        return map.contains_key("error")
            || map.get("isError").and_then(Value::as_bool) == Some(true)
            || map.get("is_error").and_then(Value::as_bool) == Some(true);
    }
    let start: String = text
        .trim_start()
        .chars()
        .take(24)
        .collect::<String>()
        .to_lowercase();
    json.is_none()
        && (start.starts_with("error")
            || start.starts_with("tool error")
            || start.starts_with("the tool failed")
            || start.starts_with("tool call failed"))
}

/// The error message of a failed outcome, for the answer.
pub(crate) fn error_message(outcome: &ToolOutcome) -> String {
    let from_json = outcome.json.as_ref().and_then(|json| {
        let error = json.get("error")?;
        error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| error.as_str().map(str::to_owned))
    });
    from_json.unwrap_or_else(|| {
        if outcome.text.trim().is_empty() {
            "no result came back".to_owned()
        } else {
            outcome.text.trim().to_owned()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::ToolCallRequest;

    #[test]
    fn splits_history_at_the_latest_question() {
        let call = |id: &str, name: &str| ToolCallRequest {
            id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
        };
        let messages = vec![
            ChatMessage::user("first"),
            ChatMessage::assistant("", vec![call("c1", "kg__type_info")]),
            ChatMessage::tool_result("c1", r#"{"types":[{"name":"Document"}]}"#),
            ChatMessage::assistant("answer", vec![]),
            ChatMessage::user("second"),
            ChatMessage::assistant(
                "",
                vec![call("c2", "kg__schema_version"), call("c3", "kg__x")],
            ),
            ChatMessage::tool_result("c2", r#"{"version":"abc"}"#),
            ChatMessage::tool_result("c3", "Error: server unavailable"),
        ];
        let view = ConversationView::read(&messages);
        assert_eq!(view.question, "second");
        assert_eq!(view.earlier_results.len(), 1);
        assert_eq!(view.this_turn.len(), 2);
        assert!(!view.this_turn[0].is_error);
        assert!(view.this_turn[1].is_error);
        assert_eq!(
            error_message(&view.this_turn[1]),
            "Error: server unavailable"
        );
    }
}
