//! The Messages API wire format: the request body we send (serde types, so its shape is
//! checked by the compiler) and the streamed events we accept. Events are parsed leniently —
//! unknown event and block types are kept as `Other` and ignored — because Anthropic adds new
//! ones (citations, server tools, signatures) and documents that clients should skip what
//! they do not know.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The body of a streaming `POST /v1/messages`.
#[derive(Debug, Serialize)]
pub(crate) struct MessagesRequest {
    pub model: String,
    pub max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    pub messages: Vec<Message>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<WireToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    pub stream: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    User,
    Assistant,
}

#[derive(Debug, Serialize)]
pub(crate) struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

/// `{"type": "ephemeral"}`: cache the prompt up to and including the block that carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum CacheControl {
    Ephemeral,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentBlock {
    Text {
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: String,
        name: String,
        /// Always a JSON object, as the API requires.
        input: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// An image of a user message (its attached context).
    Image {
        source: ImageSource,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: String,
        content: ToolResultContent,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

/// A `tool_result`'s content: its text alone, or text and images.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ToolResultContent {
    Text(String),
    Blocks(Vec<ToolResultPart>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ToolResultPart {
    Text { text: String },
    Image { source: ImageSource },
}

/// A base64 image (`{"type": "base64", "media_type": …, "data": …}`).
#[derive(Debug, Serialize)]
pub(crate) struct ImageSource {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub media_type: String,
    pub data: String,
}

impl ContentBlock {
    pub fn set_cache_control(&mut self) {
        let (ContentBlock::Text { cache_control, .. }
        | ContentBlock::ToolUse { cache_control, .. }
        | ContentBlock::Image { cache_control, .. }
        | ContentBlock::ToolResult { cache_control, .. }) = self;
        *cache_control = Some(CacheControl::Ephemeral);
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct Tool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

#[derive(Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum WireToolChoice {
    Auto,
    Any,
    Tool { name: String },
    None,
}

/// One SSE event of the stream (its `data:` payload; the `type` field repeats the event name).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum StreamEvent {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: u32,
        content_block: StartedBlock,
    },
    ContentBlockDelta {
        index: u32,
        delta: BlockDelta,
    },
    ContentBlockStop,
    MessageDelta {
        #[serde(default)]
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: ApiError,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
pub(crate) struct MessageStart {
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum StartedBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        /// Empty (`{}`) when streamed; the arguments arrive as `input_json_delta`s.
        #[serde(default)]
        input: Value,
    },
    /// Extended thinking; its text and signature are not part of the answer.
    Thinking,
    RedactedThinking,
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta,
    SignatureDelta,
    #[serde(other)]
    Other,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct MessageDeltaBody {
    #[serde(default)]
    pub stop_reason: Option<String>,
}

/// Usage as `message_start` (input side) and `message_delta` (cumulative output, and on
/// newer API versions the input side again) report it.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u32>,
    #[serde(default)]
    pub output_tokens: Option<u32>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u32>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u32>,
}

/// `{"type": "overloaded_error", "message": "Overloaded"}`, in an `error` event or body.
#[derive(Debug, Deserialize)]
pub(crate) struct ApiError {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_and_choices_serialize_in_the_documented_shape() {
        let mut block = ContentBlock::ToolResult {
            tool_use_id: "toolu_1".into(),
            content: ToolResultContent::Text("boom".into()),
            is_error: true,
            cache_control: None,
        };
        block.set_cache_control();
        assert_eq!(
            serde_json::to_value(&block).unwrap(),
            json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "boom",
                   "is_error": true, "cache_control": {"type": "ephemeral"}})
        );
        assert_eq!(
            serde_json::to_value(WireToolChoice::Tool { name: "t".into() }).unwrap(),
            json!({"type": "tool", "name": "t"})
        );
        assert_eq!(
            serde_json::to_value(WireToolChoice::Any).unwrap(),
            json!({"type": "any"})
        );
    }

    #[test]
    fn unknown_events_blocks_and_deltas_parse_as_other() {
        let event: StreamEvent = serde_json::from_str(r#"{"type":"future_event","x":1}"#).unwrap();
        assert!(matches!(event, StreamEvent::Other));
        let event: StreamEvent = serde_json::from_str(
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}}"#,
        )
        .unwrap();
        assert!(matches!(
            event,
            StreamEvent::ContentBlockStart {
                content_block: StartedBlock::Other,
                ..
            }
        ));
        let event: StreamEvent = serde_json::from_str(
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}"#,
        )
        .unwrap();
        assert!(matches!(
            event,
            StreamEvent::ContentBlockDelta {
                delta: BlockDelta::Other,
                ..
            }
        ));
    }
}
