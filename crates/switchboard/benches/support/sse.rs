//! The chat's answer stream (`POST /chat/stream`) read as the benches read it: bytes as they
//! arrive, split at blank lines into events, each event's `data:` line parsed as JSON. One
//! splitter, so every bench counts the same events the same way.

use serde_json::Value;

/// Collects a stream's chunks and gives back the events each one completes.
#[derive(Debug, Default)]
pub struct SseEvents {
    buffer: String,
}

impl SseEvents {
    /// The events completed by `chunk`, in order; a block without `data:` (a comment, a
    /// keep-alive) or whose data is not JSON is skipped.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Value> {
        self.buffer.push_str(&String::from_utf8_lossy(chunk));
        let mut events = Vec::new();
        while let Some(end) = self.buffer.find("\n\n") {
            let block: String = self.buffer.drain(..end + 2).collect();
            let data = block.lines().find_map(|line| line.strip_prefix("data: "));
            if let Some(event) = data.and_then(|data| serde_json::from_str(data).ok()) {
                events.push(event);
            }
        }
        events
    }
}
