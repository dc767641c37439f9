//! Normalised, rmcp-free shapes of what upstreams return: tool results (text, image, audio,
//! embedded resource, resource link, `structuredContent`, `isError`), resource contents and
//! prompt messages. They serialize with the MCP field names, so they can be stored and shown
//! as-is; content kinds a later protocol adds are kept as raw JSON rather than failing a call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The outcome of `tools/call`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    #[serde(default)]
    pub content: Vec<ToolContent>,
    #[serde(
        rename = "structuredContent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    /// The tool itself reported a failure (the call still completed).
    #[serde(rename = "isError", default)]
    pub is_error: bool,
}

/// One block of tool (or prompt) content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolContent {
    Text {
        text: String,
    },
    Image {
        /// Base64.
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    Audio {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// An embedded resource (`type: "resource"`).
    Resource {
        resource: ResourceContent,
    },
    ResourceLink {
        uri: String,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// A content kind this version does not know, kept verbatim.
    #[serde(untagged)]
    Unknown(Value),
}

/// The contents of a resource: text or base64 blob.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceContent {
    pub uri: String,
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// The outcome of `prompts/get`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub messages: Vec<PromptMessage>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    pub role: String,
    pub content: ToolContent,
}

impl ToolResult {
    /// A plain-text rendering for an LLM: text blocks verbatim, other blocks described, and
    /// `structuredContent` as JSON after them — alone when there is no content, under a
    /// `[structuredContent]` line otherwise — unless a text block already says it (the spec's
    /// backwards-compatible form), which is not repeated.
    pub fn text_for_model(&self) -> String {
        let mut parts: Vec<String> = self.content.iter().map(ToolContent::describe).collect();
        if let Some(structured) = &self.structured_content
            && !self
                .content
                .iter()
                .any(|block| block.already_says(structured))
        {
            if parts.is_empty() {
                parts.push(structured.to_string());
            } else {
                parts.push(format!("[structuredContent]\n{structured}"));
            }
        }
        parts.join("\n")
    }

    /// An error result produced on our side (e.g. invalid arguments), shaped like an upstream one.
    pub fn error_text(message: impl Into<String>) -> Self {
        Self {
            content: vec![ToolContent::Text {
                text: message.into(),
            }],
            structured_content: None,
            is_error: true,
        }
    }
}

impl ToolContent {
    /// A text block that already says `value`: `value` as JSON, or — for the wrapped form the
    /// Python SDK and FastMCP give a tool that returns a plain value, `{"result": v}` — `v`
    /// (its text, or its JSON). Repeating it would double what the model reads.
    fn already_says(&self, value: &Value) -> bool {
        let ToolContent::Text { text } = self else {
            return false;
        };
        let parsed = serde_json::from_str::<Value>(text).ok();
        if parsed.as_ref() == Some(value) {
            return true;
        }
        match value.as_object().and_then(|object| object.get("result")) {
            Some(wrapped) if value.as_object().is_some_and(|object| object.len() == 1) => {
                wrapped.as_str() == Some(text.as_str()) || parsed.as_ref() == Some(wrapped)
            }
            _ => false,
        }
    }

    fn describe(&self) -> String {
        match self {
            ToolContent::Text { text } => text.clone(),
            ToolContent::Image { mime_type, data } => {
                format!("[image {mime_type}, {} bytes base64]", data.len())
            }
            ToolContent::Audio { mime_type, data } => {
                format!("[audio {mime_type}, {} bytes base64]", data.len())
            }
            ToolContent::Resource { resource } => match &resource.text {
                Some(text) => format!("[resource {}]\n{text}", resource.uri),
                None => format!("[binary resource {}]", resource.uri),
            },
            ToolContent::ResourceLink { uri, name, .. } => format!("[resource link {name}: {uri}]"),
            ToolContent::Unknown(value) => value.to_string(),
        }
    }
}

/// Converts any serializable rmcp value into our shape through its wire JSON (one place that
/// knows both; rmcp's field-level churn stays out of our types).
pub(crate) fn from_wire<T: serde::de::DeserializeOwned>(
    value: &impl Serialize,
) -> Result<T, String> {
    let json = serde_json::to_value(value).map_err(|error| error.to_string())?;
    serde_json::from_value(json).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_content_kind_and_keeps_unknown_ones() {
        let wire = json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "iVBOR", "mimeType": "image/png"},
                {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}},
                {"type": "resource_link", "uri": "demo://x", "name": "x"},
                {"type": "hologram", "data": 1}
            ],
            "structuredContent": {"temperature": 21},
            "isError": false
        });
        let result: ToolResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(result.content.len(), 6);
        assert!(matches!(result.content[5], ToolContent::Unknown(_)));
        assert_eq!(result.structured_content, Some(json!({"temperature": 21})));
        assert_eq!(serde_json::to_value(&result).unwrap(), wire);
        let text = result.text_for_model();
        assert!(text.starts_with("hello\n[image image/png"));
    }

    #[test]
    fn structured_content_reaches_the_model_once() {
        let structured = json!({"temperature": 21});
        let with = |content: Value| -> String {
            serde_json::from_value::<ToolResult>(
                json!({"content": content, "structuredContent": structured}),
            )
            .unwrap()
            .text_for_model()
        };
        assert_eq!(with(json!([])), r#"{"temperature":21}"#);
        assert_eq!(
            with(json!([{"type": "text", "text": "{ \"temperature\": 21 }"}])),
            "{ \"temperature\": 21 }"
        );
        assert_eq!(
            with(json!([{"type": "text", "text": "It is warm."}])),
            "It is warm.\n[structuredContent]\n{\"temperature\":21}"
        );
    }

    #[test]
    fn a_wrapped_plain_value_is_not_repeated() {
        let text_for_model = |text: &str, structured: Value| -> String {
            serde_json::from_value::<ToolResult>(json!({
                "content": [{"type": "text", "text": text}],
                "structuredContent": structured,
            }))
            .unwrap()
            .text_for_model()
        };
        assert_eq!(text_for_model("4.0", json!({"result": 4.0})), "4.0");
        assert_eq!(
            text_for_model("Hello, Ada", json!({"result": "Hello, Ada"})),
            "Hello, Ada"
        );
        assert_eq!(
            text_for_model("4.0", json!({"result": 5.0})),
            "4.0\n[structuredContent]\n{\"result\":5.0}"
        );
        assert_eq!(
            text_for_model("4.0", json!({"result": 4.0, "unit": "m"})),
            "4.0\n[structuredContent]\n{\"result\":4.0,\"unit\":\"m\"}"
        );
    }

    #[test]
    fn missing_is_error_means_success() {
        let result: ToolResult = serde_json::from_value(json!({"content": []})).unwrap();
        assert!(!result.is_error);
    }
}
