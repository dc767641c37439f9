//! What the fake Anthropic server answers: scripted replies built from the Messages API's
//! streamed events exactly as Anthropic documents them (`message_start`,
//! `content_block_start` / `_delta` / `_stop`, `message_delta`, `message_stop`, `ping`,
//! `error`), each sent as `event: <type>` plus `data: <json>`.

use serde_json::{Value, json};

/// One reply, consumed by one request (first in, first out).
#[derive(Clone, Debug)]
pub enum AnthropicReply {
    /// `200 text/event-stream`: these events (each a JSON object with its `type`).
    Stream(Vec<Value>),
    /// Any status with headers and a body (errors, rate limiting, overload).
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
}

/// A `tool_use` block to stream, its input cut into `input_json_delta` fragments.
#[derive(Clone, Debug)]
pub struct ScriptedToolUse {
    pub id: String,
    pub name: String,
    pub input: Value,
}

impl ScriptedToolUse {
    pub fn new(id: &str, name: &str, input: Value) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            input,
        }
    }
}

/// The usage the fake reports: `message_start` carries the input side, `message_delta` the
/// output count.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScriptedUsage {
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub cache_creation_input_tokens: u32,
    pub cache_read_input_tokens: u32,
}

impl AnthropicReply {
    /// Text streamed in these parts, a `ping` between, `stop_reason: end_turn`.
    pub fn text(parts: &[&str]) -> Self {
        Self::text_with(parts, "end_turn", ScriptedUsage::small())
    }

    /// Text in these parts ending with `stop_reason` and reporting `usage`.
    pub fn text_with(parts: &[&str], stop_reason: &str, usage: ScriptedUsage) -> Self {
        let mut events = vec![message_start(usage), text_block_start(0), ping()];
        events.extend(parts.iter().map(|part| text_delta(0, part)));
        events.push(block_stop(0));
        events.extend(message_end(stop_reason, usage));
        AnthropicReply::Stream(events)
    }

    /// Optional leading text, then one `tool_use` block per call (parallel tool use), each
    /// input streamed as three `input_json_delta` fragments; `stop_reason: tool_use`.
    pub fn tool_use(text: Option<&str>, calls: &[ScriptedToolUse]) -> Self {
        let usage = ScriptedUsage::small();
        let mut events = vec![message_start(usage)];
        let mut index = 0;
        if let Some(text) = text {
            events.extend([text_block_start(0), text_delta(0, text), block_stop(0)]);
            index = 1;
        }
        for call in calls {
            events.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}));
            events.push(input_json_delta(index, ""));
            for fragment in split_into(&call.input.to_string(), 3) {
                events.push(input_json_delta(index, &fragment));
            }
            events.push(block_stop(index));
            index += 1;
        }
        events.extend(message_end("tool_use", usage));
        AnthropicReply::Stream(events)
    }

    /// Text in these parts, then an `error` event (the API's mid-stream failure).
    pub fn text_then_error(parts: &[&str], error_type: &str, message: &str) -> Self {
        let mut events = vec![message_start(ScriptedUsage::small()), text_block_start(0)];
        events.extend(parts.iter().map(|part| text_delta(0, part)));
        events.push(json!({"type": "error", "error": {"type": error_type, "message": message}}));
        AnthropicReply::Stream(events)
    }

    /// An error status with the API's error body.
    pub fn error_status(status: u16, error_type: &str, message: &str) -> Self {
        AnthropicReply::Status {
            status,
            headers: Vec::new(),
            body: error_body(error_type, message),
        }
    }

    /// `429` with `retry-after: <seconds>` and a `rate_limit_error` body.
    pub fn rate_limited(retry_after_seconds: u32) -> Self {
        AnthropicReply::Status {
            status: 429,
            headers: vec![("retry-after".to_owned(), retry_after_seconds.to_string())],
            body: error_body(
                "rate_limit_error",
                "Number of request tokens has exceeded your per-minute rate limit",
            ),
        }
    }

    /// `529` with an `overloaded_error` body.
    pub fn overloaded() -> Self {
        Self::error_status(529, "overloaded_error", "Overloaded")
    }
}

impl ScriptedUsage {
    fn small() -> Self {
        Self {
            input_tokens: 25,
            output_tokens: 5,
            ..Self::default()
        }
    }
}

/// `{"type":"error","error":{"type":…,"message":…}}`.
pub fn error_body(error_type: &str, message: &str) -> String {
    json!({"type": "error", "error": {"type": error_type, "message": message}}).to_string()
}

pub fn message_start(usage: ScriptedUsage) -> Value {
    json!({"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "content": [],
        "model": "claude-fake", "stop_reason": null, "stop_sequence": null,
        "usage": {
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "output_tokens": 1,
        }
    }})
}

pub fn text_block_start(index: u32) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
}

pub fn text_delta(index: u32, text: &str) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}})
}

pub fn input_json_delta(index: u32, partial_json: &str) -> Value {
    json!({"type": "content_block_delta", "index": index,
        "delta": {"type": "input_json_delta", "partial_json": partial_json}})
}

pub fn block_stop(index: u32) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

pub fn ping() -> Value {
    json!({"type": "ping"})
}

/// `message_delta` with the stop reason and output count, then `message_stop`.
pub fn message_end(stop_reason: &str, usage: ScriptedUsage) -> [Value; 2] {
    [
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": usage.output_tokens}}),
        json!({"type": "message_stop"}),
    ]
}

fn split_into(text: &str, parts: usize) -> Vec<String> {
    let characters: Vec<char> = text.chars().collect();
    let size = characters.len().div_ceil(parts).max(1);
    characters
        .chunks(size)
        .map(|chunk| chunk.iter().collect())
        .collect()
}
