//! The metadata of a stored tool message (the result of one tool call, as the model saw it):
//! one typed shape, written by the chat engine, kept by the store as a JSON column, and read
//! back through the same type — so the web UI and API clients meet one name per field.
//!
//! Reading is lenient, because rows outlive code: camelCase keys (`isError`, `durationMs`,
//! `latencyMs`…) that older rows may carry are accepted as aliases, and missing fields take
//! their defaults. Writing always uses the snake_case names.

use crate::{ResultBlock, ServerId, ToolCallId, ToolCallState};
use serde::{Deserialize, Serialize};

/// What the chat engine records beside a tool message.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolMessageMetadata {
    /// Our record of the call (its result pages, its state history).
    #[serde(alias = "toolCallId", skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<ToolCallId>,
    /// The call's final state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<ToolCallState>,
    /// The server's name (empty when the model named a tool that does not exist).
    #[serde(alias = "serverName")]
    pub server: String,
    /// The upstream's own tool name.
    #[serde(alias = "toolName")]
    pub tool: String,
    /// True when the call failed or was refused (the message is an error object).
    #[serde(alias = "isError")]
    pub is_error: bool,
    /// True when the message was shortened for the model (the full result is stored).
    pub truncated: bool,
    /// Length of the full text, in characters.
    #[serde(alias = "resultChars")]
    pub result_chars: usize,
    /// From dispatch to the answer; absent when the call was never dispatched.
    #[serde(
        alias = "durationMs",
        alias = "latency_ms",
        alias = "latencyMs",
        skip_serializing_if = "Option::is_none"
    )]
    pub duration_ms: Option<u64>,
    /// Why it failed, as told to the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Stable code of the failure (`denied`, `timeout`, `tool_error`…).
    #[serde(alias = "errorCode", skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// The MCP App the call is shown with, when its tool declares one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<ToolApp>,
    /// The result's content blocks, in order, within the host's size budget
    /// ([`crate::result_content`]); empty for a call without a result.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ResultBlock>,
    /// The result's `structuredContent` (validated against the tool's `outputSchema`), when
    /// it fit the budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<serde_json::Value>,
}

/// The MCP App (extension `io.modelcontextprotocol/ui`) a tool call is shown with: its tool's
/// `_meta.ui.resourceUri` on a registered server, whose HTML the store kept at the sync.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolApp {
    pub server_id: ServerId,
    /// The `ui://` resource.
    pub resource_uri: String,
    /// SHA-256 of the resource as read at the sync the call's definition came from.
    pub resource_sha256: String,
}

impl ToolApp {
    /// The app of `tool` on the registered server `server_id` (`None` for a tool without one,
    /// or on an ephemeral server, whose resources are not kept).
    pub fn of(server_id: Option<&ServerId>, tool: &crate::ToolDefinition) -> Option<Self> {
        let ui = tool.meta.ui.as_ref()?;
        Some(ToolApp {
            server_id: server_id?.clone(),
            resource_uri: ui.resource_uri.clone()?,
            resource_sha256: ui.resource_sha256.clone()?,
        })
    }
}

impl ToolMessageMetadata {
    /// Reads stored metadata leniently (see the module docs); `None` when it is not an object
    /// of this shape at all (a field of the wrong type).
    pub fn from_stored(metadata: &serde_json::Value) -> Option<Self> {
        Self::deserialize(metadata).ok()
    }

    /// The JSON object to store.
    pub fn to_stored(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn written_with_snake_case_names_and_read_back() {
        let metadata = ToolMessageMetadata {
            tool_call_id: Some(ToolCallId::from_string("tc_1".to_owned())),
            state: Some(ToolCallState::Failed),
            server: "everything".to_owned(),
            tool: "echo".to_owned(),
            is_error: true,
            truncated: false,
            result_chars: 12,
            duration_ms: Some(40),
            error: Some("boom".to_owned()),
            error_code: Some("tool_error".to_owned()),
            app: None,
            content: Vec::new(),
            structured_content: None,
        };
        let stored = metadata.to_stored();
        assert_eq!(
            stored,
            json!({
                "tool_call_id": "tc_1", "state": "failed", "server": "everything",
                "tool": "echo", "is_error": true, "truncated": false, "result_chars": 12,
                "duration_ms": 40, "error": "boom", "error_code": "tool_error"
            })
        );
        assert_eq!(ToolMessageMetadata::from_stored(&stored), Some(metadata));
    }

    #[test]
    fn old_camel_case_rows_still_read() {
        let old = json!({
            "toolCallId": "tc_2", "state": "completed", "server": "kg", "tool": "search",
            "isError": false, "resultChars": 3, "latencyMs": 7, "errorCode": null
        });
        let read = ToolMessageMetadata::from_stored(&old).unwrap();
        assert_eq!(read.tool_call_id.unwrap().as_str(), "tc_2");
        assert_eq!(read.state, Some(ToolCallState::Completed));
        assert!(!read.is_error);
        assert_eq!(read.result_chars, 3);
        assert_eq!(read.duration_ms, Some(7));
        assert_eq!(read.error_code, None);
        assert_eq!(
            ToolMessageMetadata::from_stored(&json!({})),
            Some(ToolMessageMetadata::default())
        );
    }
}
