//! Reading the chat's Server-Sent Events in tests: events (the JSON of each `data:` line,
//! checked to be one object with a `type`), heartbeat comments, and small filters.

use futures::StreamExt;
use serde_json::Value;
use std::time::Duration;

/// Reads an SSE response: events (the JSON of each `data:` line) and comment lines.
pub struct SseReader {
    stream: futures::stream::BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buffer: String,
    pub comments: Vec<String>,
    pub raw: String,
}

impl SseReader {
    pub fn new(response: reqwest::Response) -> Self {
        Self {
            stream: response
                .bytes_stream()
                .map(|chunk| chunk.map(|bytes| bytes.to_vec()))
                .boxed(),
            buffer: String::new(),
            comments: Vec::new(),
            raw: String::new(),
        }
    }

    /// The next event, or `None` when the stream ends; panics after 30 s of silence.
    pub async fn next_event(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut data = Vec::new();
                for line in block.lines() {
                    if let Some(comment) = line.strip_prefix(':') {
                        self.comments.push(comment.trim().to_owned());
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push(value.trim_start().to_owned());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                assert_eq!(data.len(), 1, "one JSON object per data line: {block:?}");
                let event: Value = serde_json::from_str(&data[0]).expect("event data is JSON");
                assert!(event["type"].is_string(), "every event has a type: {event}");
                return Some(event);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.stream.next())
                .await
                .expect("no SSE bytes for 30 s");
            match chunk {
                Some(Ok(bytes)) => {
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    self.raw.push_str(&text);
                    self.buffer.push_str(&text);
                }
                Some(Err(error)) => panic!("the SSE stream failed: {error}"),
                None => return None,
            }
        }
    }

    /// Every event up to and including `done` (which must come).
    pub async fn until_done(&mut self) -> Vec<Value> {
        let mut events = Vec::new();
        while let Some(event) = self.next_event().await {
            let done = event["type"] == "done";
            events.push(event);
            if done {
                return events;
            }
        }
        panic!("the stream ended without `done`: {events:#?}");
    }

    /// Reads until an event of `kind` arrives; returns every event read.
    pub async fn until(&mut self, kind: &str) -> Vec<Value> {
        let mut events = Vec::new();
        while let Some(event) = self.next_event().await {
            let found = event["type"] == kind;
            events.push(event);
            if found {
                return events;
            }
        }
        panic!("the stream ended before a `{kind}` event: {events:#?}");
    }
}

/// Events of one type.
pub fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|event| event["type"] == kind)
        .collect()
}

/// The answer text: every token joined.
pub fn answer_text(events: &[Value]) -> String {
    of_type(events, "token")
        .iter()
        .map(|event| event["token"].as_str().unwrap_or_default())
        .collect()
}
