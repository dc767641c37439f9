//! What the fake OpenAI server answers: scripted replies, built from OpenAI-shaped chunks.
//!
//! Builders cover the common cases (streamed text, streamed parallel tool calls, a 429 with
//! `Retry-After`, a mid-stream failure, a hang); `ScriptedReply::Stream` with raw payloads
//! covers server quirks (missing `index`, empty ids, usage-only chunks…).

use std::time::Duration;

use serde_json::{Value, json};

/// One reply, consumed by one request (first in, first out).
#[derive(Clone, Debug)]
pub enum ScriptedReply {
    /// `200 text/event-stream` with these steps, then the ending.
    Stream(ScriptedStream),
    /// Any status with headers and a body (errors, rate limiting).
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// `200 application/json`: a server that ignores `stream: true`.
    Json(Value),
}

#[derive(Clone, Debug)]
pub struct ScriptedStream {
    pub steps: Vec<StreamStep>,
    pub ending: StreamEnding,
}

#[derive(Clone, Debug)]
pub enum StreamStep {
    /// One `data: <payload>` event.
    Data(String),
    /// One `: <text>` comment line (keep-alive).
    Comment(String),
    /// Wait before the next step.
    Pause(Duration),
}

#[derive(Clone, Debug)]
pub enum StreamEnding {
    /// `data: [DONE]`, then a clean close.
    Done,
    /// A clean close without `[DONE]`.
    Close,
    /// The connection is broken mid-body (the client sees an incomplete chunked body).
    Abort,
    /// Nothing more is ever sent; optionally a keep-alive comment at this interval, which
    /// also lets the server notice a client that went away.
    Hang { keepalive_every: Option<Duration> },
}

/// A tool call to stream, with its arguments cut into `fragments` deltas.
#[derive(Clone, Debug)]
pub struct ScriptedToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl ScriptedToolCall {
    pub fn new(id: &str, name: &str, arguments: Value) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_string(),
        }
    }
}

impl ScriptedReply {
    /// Streamed text in these parts, `finish_reason: stop`, a usage-only chunk, `[DONE]`.
    pub fn text(parts: &[&str]) -> Self {
        let mut steps = vec![StreamStep::data(role_chunk())];
        steps.extend(parts.iter().map(|part| StreamStep::data(text_chunk(part))));
        steps.push(StreamStep::data(finish_chunk("stop")));
        steps.push(StreamStep::data(usage_chunk(11, parts.len() as u32)));
        ScriptedReply::Stream(ScriptedStream {
            steps,
            ending: StreamEnding::Done,
        })
    }

    /// Parallel tool calls the OpenAI way: a first delta per call (index, id, name), then
    /// argument fragments interleaved across calls, `finish_reason: tool_calls`, usage, `[DONE]`.
    pub fn tool_calls(calls: &[ScriptedToolCall]) -> Self {
        const FRAGMENTS: usize = 3;
        let mut steps = vec![StreamStep::data(role_chunk())];
        for (index, call) in calls.iter().enumerate() {
            steps.push(StreamStep::data(tool_call_delta_chunk(
                Some(index as u32),
                Some(&call.id),
                Some(&call.name),
                "",
            )));
        }
        let pieces: Vec<Vec<String>> = calls
            .iter()
            .map(|call| split_into(&call.arguments, FRAGMENTS))
            .collect();
        for fragment in 0..FRAGMENTS {
            for (index, call_pieces) in pieces.iter().enumerate() {
                if let Some(piece) = call_pieces.get(fragment).filter(|piece| !piece.is_empty()) {
                    steps.push(StreamStep::data(tool_call_delta_chunk(
                        Some(index as u32),
                        None,
                        None,
                        piece,
                    )));
                }
            }
        }
        steps.push(StreamStep::data(finish_chunk("tool_calls")));
        steps.push(StreamStep::data(usage_chunk(40, 12)));
        ScriptedReply::Stream(ScriptedStream {
            steps,
            ending: StreamEnding::Done,
        })
    }

    /// One tool call whose arguments stream slowly: cut into `fragments` deltas with `pause`
    /// before each (a model writing a long input), then `finish_reason: tool_calls`.
    pub fn slow_tool_call(call: &ScriptedToolCall, fragments: usize, pause: Duration) -> Self {
        let mut steps = vec![
            StreamStep::data(role_chunk()),
            StreamStep::data(tool_call_delta_chunk(
                Some(0),
                Some(&call.id),
                Some(&call.name),
                "",
            )),
        ];
        for piece in split_into(&call.arguments, fragments) {
            steps.push(StreamStep::Pause(pause));
            steps.push(StreamStep::data(tool_call_delta_chunk(
                Some(0),
                None,
                None,
                &piece,
            )));
        }
        steps.push(StreamStep::data(finish_chunk("tool_calls")));
        ScriptedReply::Stream(ScriptedStream {
            steps,
            ending: StreamEnding::Done,
        })
    }

    /// `429 Too Many Requests` with `Retry-After: <seconds>` and an OpenAI error body.
    pub fn rate_limited(retry_after_seconds: u32) -> Self {
        ScriptedReply::Status {
            status: 429,
            headers: vec![("retry-after".to_owned(), retry_after_seconds.to_string())],
            body: json!({"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}).to_string(),
        }
    }

    /// Any status with an OpenAI-style error body.
    pub fn error_status(status: u16, message: &str) -> Self {
        ScriptedReply::Status {
            status,
            headers: Vec::new(),
            body: json!({"error": {"message": message, "type": "server_error"}}).to_string(),
        }
    }

    /// Streams these text parts, then breaks the connection.
    pub fn text_then_abort(parts: &[&str]) -> Self {
        let mut steps = vec![StreamStep::data(role_chunk())];
        steps.extend(parts.iter().map(|part| StreamStep::data(text_chunk(part))));
        ScriptedReply::Stream(ScriptedStream {
            steps,
            ending: StreamEnding::Abort,
        })
    }

    /// Streams these text parts, then sends nothing more (keep-alive comments every 50 ms so
    /// the server notices when the client goes away).
    pub fn text_then_hang(parts: &[&str]) -> Self {
        let mut steps = vec![StreamStep::data(role_chunk())];
        steps.extend(parts.iter().map(|part| StreamStep::data(text_chunk(part))));
        ScriptedReply::Stream(ScriptedStream {
            steps,
            ending: StreamEnding::Hang {
                keepalive_every: Some(Duration::from_millis(50)),
            },
        })
    }

    /// A stream of raw `data:` payloads (JSON values) with the given ending.
    pub fn raw_stream(payloads: Vec<Value>, ending: StreamEnding) -> Self {
        ScriptedReply::Stream(ScriptedStream {
            steps: payloads.into_iter().map(StreamStep::data).collect(),
            ending,
        })
    }
}

impl StreamStep {
    pub fn data(payload: impl ToString) -> Self {
        StreamStep::Data(payload.to_string())
    }
}

fn split_into(text: &str, parts: usize) -> Vec<String> {
    let characters: Vec<char> = text.chars().collect();
    let size = characters.len().div_ceil(parts).max(1);
    characters
        .chunks(size)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

/// The first chunk OpenAI sends: the role, empty content.
pub fn role_chunk() -> Value {
    completion_chunk(
        json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]),
    )
}

pub fn text_chunk(content: &str) -> Value {
    completion_chunk(json!([{"index": 0, "delta": {"content": content}, "finish_reason": null}]))
}

pub fn finish_chunk(reason: &str) -> Value {
    completion_chunk(json!([{"index": 0, "delta": {}, "finish_reason": reason}]))
}

/// The usage-only final chunk sent with `stream_options.include_usage`.
pub fn usage_chunk(prompt_tokens: u32, completion_tokens: u32) -> Value {
    let mut chunk = completion_chunk(json!([]));
    chunk["usage"] = json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    });
    chunk
}

/// One tool-call delta; `None` fields are left out (as OpenAI does after the first delta).
pub fn tool_call_delta_chunk(
    index: Option<u32>,
    id: Option<&str>,
    name: Option<&str>,
    arguments: &str,
) -> Value {
    let mut delta = json!({"function": {"arguments": arguments}});
    if let Some(index) = index {
        delta["index"] = json!(index);
    }
    if let Some(id) = id {
        delta["id"] = json!(id);
        delta["type"] = json!("function");
    }
    if let Some(name) = name {
        delta["function"]["name"] = json!(name);
    }
    completion_chunk(json!([{"index": 0, "delta": {"tool_calls": [delta]}, "finish_reason": null}]))
}

fn completion_chunk(choices: Value) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "fake-model",
        "choices": choices,
    })
}
