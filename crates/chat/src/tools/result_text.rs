//! Tool results as the model and the stream see them: text for the model (errors as a small
//! JSON object, so planners and models recognise them), cut to head and tail with a marker
//! when too long, a bounded copy of the MCP result for the `mcp_tool` event, and the result's
//! content blocks as the tool message keeps them (`ToolMessageMetadata::content`).

use serde_json::{Value, json};
use switchboard_core::ResultBlock;
use switchboard_mcp_client::{ToolContent, ToolResult};

/// Bytes of content blocks kept beside one tool message (images and audio included); blocks
/// past it are noted as omitted (the full result stays in the tool call's record).
pub const STORED_CONTENT_MAX_BYTES: usize = 1024 * 1024;

/// Bytes of `structuredContent` kept beside one tool message.
pub const STORED_STRUCTURED_MAX_BYTES: usize = 256 * 1024;

/// Largest serialized result carried whole by an `mcp_tool` event; a larger result is carried
/// as its cut text plus its non-text blocks within [`STORED_CONTENT_MAX_BYTES`] and its
/// structured content within [`STORED_STRUCTURED_MAX_BYTES`] (the same budgets the tool
/// message keeps), so a large image shows live as it does after a reload. The full result
/// stays readable through the API.
pub const EVENT_RESULT_MAX_BYTES: usize = 64 * 1024;

/// Text cut to a budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CutText {
    pub text: String,
    /// Characters of the original.
    pub total_chars: usize,
    pub truncated: bool,
}

/// The text a successful or tool-reported-failure result gives the model.
pub fn result_text_for_model(result: &ToolResult) -> String {
    let text = result.text_for_model();
    if result.is_error {
        error_text_for_model("tool_error", &text)
    } else {
        text
    }
}

/// An error result for the model: `{"error":{"code":…,"message":…}}`.
pub fn error_text_for_model(code: &str, message: &str) -> String {
    json!({"error": {"code": code, "message": message}}).to_string()
}

/// Keeps `text` whole when it has at most `max_chars` characters; otherwise keeps its head and
/// tail (together about `max_chars`) around a marker saying how much was left out.
pub fn cut_for_model(text: &str, max_chars: usize) -> CutText {
    let total_chars = text.chars().count();
    if total_chars <= max_chars {
        return CutText {
            text: text.to_owned(),
            total_chars,
            truncated: false,
        };
    }
    let keep = max_chars.saturating_sub(160);
    let head_chars = keep * 2 / 3;
    let tail_chars = keep - head_chars;
    let omitted = total_chars - head_chars - tail_chars;
    let head: String = text.chars().take(head_chars).collect();
    let tail: String = text.chars().skip(total_chars - tail_chars).collect();
    CutText {
        text: format!(
            "{head}\n…[{omitted} of {total_chars} characters omitted here; the full result is \
             stored with this tool call and can be read in pages through the API]…\n{tail}"
        ),
        total_chars,
        truncated: true,
    }
}

/// The result as an `mcp_tool` event carries it, and whether it was shortened
/// ([`EVENT_RESULT_MAX_BYTES`]); text is cut to `max_chars` at most.
pub fn event_result(result: &ToolResult, max_chars: usize) -> (Value, bool) {
    if json_size(result) <= EVENT_RESULT_MAX_BYTES {
        return (to_json(result), false);
    }
    let cut = cut_for_model(
        &result.text_for_model(),
        max_chars.min(EVENT_RESULT_MAX_BYTES / 4),
    );
    let mut content = vec![ToolContent::Text { text: cut.text }];
    let mut rich_bytes = 0;
    for block in result
        .content
        .iter()
        .filter(|block| !matches!(block, ToolContent::Text { .. }))
    {
        rich_bytes += json_size(block);
        if rich_bytes > STORED_CONTENT_MAX_BYTES {
            break;
        }
        content.push(block.clone());
    }
    let shortened = ToolResult {
        content,
        structured_content: result
            .structured_content
            .clone()
            .filter(|structured| json_size(structured) <= STORED_STRUCTURED_MAX_BYTES),
        is_error: result.is_error,
    };
    (to_json(&shortened), true)
}

fn json_size(value: &impl serde::Serialize) -> usize {
    serde_json::to_vec(value).map_or(0, |bytes| bytes.len())
}

fn to_json(result: &ToolResult) -> Value {
    serde_json::to_value(result).unwrap_or(Value::Null)
}

/// The result's content blocks as the tool message keeps them, within
/// [`STORED_CONTENT_MAX_BYTES`], and its `structuredContent` when it fits
/// [`STORED_STRUCTURED_MAX_BYTES`].
pub fn stored_content(result: &ToolResult) -> (Vec<ResultBlock>, Option<Value>) {
    let blocks = result.content.iter().map(result_block).collect();
    let structured = result.structured_content.clone().filter(|structured| {
        serde_json::to_vec(structured).map_or(0, |bytes| bytes.len()) <= STORED_STRUCTURED_MAX_BYTES
    });
    (
        ResultBlock::within_budget(blocks, STORED_CONTENT_MAX_BYTES),
        structured,
    )
}

fn result_block(content: &ToolContent) -> ResultBlock {
    match content.clone() {
        ToolContent::Text { text } => ResultBlock::Text { text },
        ToolContent::Image { data, mime_type } => ResultBlock::Image { mime_type, data },
        ToolContent::Audio { data, mime_type } => ResultBlock::Audio { mime_type, data },
        ToolContent::Resource { resource } => ResultBlock::Resource {
            uri: resource.uri,
            mime_type: resource.mime_type,
            text: resource.text,
            blob: resource.blob,
        },
        ToolContent::ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
        } => ResultBlock::ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
        },
        ToolContent::Unknown(value) => ResultBlock::Omitted {
            kind: value["type"].as_str().unwrap_or("unknown").to_owned(),
            bytes: value.to_string().len(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_result(text: &str, is_error: bool) -> ToolResult {
        ToolResult {
            content: vec![ToolContent::Text {
                text: text.to_owned(),
            }],
            structured_content: None,
            is_error,
        }
    }

    #[test]
    fn short_text_is_kept_whole() {
        let cut = cut_for_model("hello", 200);
        assert_eq!(cut.text, "hello");
        assert!(!cut.truncated);
    }

    #[test]
    fn long_text_keeps_head_and_tail_with_a_marker() {
        let text: String = (0..5000)
            .map(|index| char::from(b'a' + (index % 26) as u8))
            .collect();
        let cut = cut_for_model(&text, 1000);
        assert!(cut.truncated);
        assert_eq!(cut.total_chars, 5000);
        assert!(cut.text.starts_with(&text[..500]));
        assert!(cut.text.ends_with(&text[text.len() - 200..]));
        assert!(cut.text.contains("characters omitted"), "{}", cut.text);
        assert!(cut.text.chars().count() <= 1000);
    }

    #[test]
    fn cutting_respects_multibyte_characters() {
        let text = "é".repeat(3000);
        let cut = cut_for_model(&text, 500);
        assert!(cut.truncated);
        assert!(cut.text.starts_with("éé"));
    }

    #[test]
    fn tool_errors_reach_the_model_as_an_error_object() {
        let text = result_text_for_model(&text_result("division by zero", true));
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["error"]["code"], "tool_error");
        assert_eq!(value["error"]["message"], "division by zero");
        assert_eq!(
            result_text_for_model(&text_result("{\"a\":1}", false)),
            "{\"a\":1}"
        );
    }

    #[test]
    fn stored_content_keeps_every_kind_in_order_within_the_budget() {
        let result: ToolResult = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "iVBOR", "mimeType": "image/png"},
                {"type": "audio", "data": "x".repeat(STORED_CONTENT_MAX_BYTES), "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "demo://x", "name": "x"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "A"}},
                {"type": "hologram", "data": 1}
            ],
            "structuredContent": {"temperature": 21}
        }))
        .unwrap();
        let (blocks, structured) = stored_content(&result);
        let kinds: Vec<&str> = blocks.iter().map(ResultBlock::kind).collect();
        assert_eq!(
            kinds,
            [
                "text",
                "image",
                "audio",
                "resource_link",
                "resource",
                "hologram"
            ]
        );
        assert!(
            matches!(blocks[2], ResultBlock::Omitted { .. }),
            "{:?}",
            blocks[2]
        );
        assert!(matches!(blocks[5], ResultBlock::Omitted { .. }));
        assert_eq!(
            blocks[1],
            ResultBlock::Image {
                mime_type: "image/png".to_owned(),
                data: "iVBOR".to_owned()
            }
        );
        assert_eq!(structured, Some(json!({"temperature": 21})));
    }

    #[test]
    fn large_results_are_shortened_for_events() {
        let (small, truncated) = event_result(&text_result("ok", false), 1000);
        assert!(!truncated);
        assert_eq!(small["content"][0]["text"], "ok");
        let (large, truncated) = event_result(&text_result(&"x".repeat(200_000), false), 1000);
        assert!(truncated);
        assert!(large["content"][0]["text"].as_str().unwrap().len() < 2000);
    }

    #[test]
    fn a_shortened_event_keeps_images_and_structured_content_within_the_stored_budgets() {
        let image = ToolContent::Image {
            data: "A".repeat(300 * 1024),
            mime_type: "image/png".to_owned(),
        };
        let too_big = ToolContent::Image {
            data: "B".repeat(STORED_CONTENT_MAX_BYTES),
            mime_type: "image/png".to_owned(),
        };
        let result = ToolResult {
            content: vec![
                ToolContent::Text {
                    text: "x".repeat(200_000),
                },
                image,
                too_big,
            ],
            structured_content: Some(json!({"rows": 3})),
            is_error: false,
        };
        let (shown, truncated) = event_result(&result, 1000);
        assert!(truncated);
        let content = shown["content"].as_array().unwrap();
        assert_eq!(content.len(), 2, "the cut text and the image that fits");
        assert!(content[0]["text"].as_str().unwrap().len() < 2000);
        assert_eq!(content[1]["type"], "image");
        assert_eq!(content[1]["data"].as_str().unwrap().len(), 300 * 1024);
        assert_eq!(shown["structuredContent"], json!({"rows": 3}));
    }
}
