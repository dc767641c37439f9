//! A bounded reader of server-sent events for the legacy HTTP+SSE transport. Written here
//! (rather than taken from an SSE crate) because it must refuse an oversized event *while
//! still recovering its JSON-RPC id*, so the waiting caller gets an immediate, precise error.
//!
//! Supports the parts of the SSE format MCP servers use: `event`, `data` (multi-line),
//! comments; `id` and `retry` are ignored (the 2024-11-05 transport does not resume).
//!
//! An oversized event is reported as soon as its data passes the cap, not when the event ends:
//! an upstream sending a 1 GiB (or endless) event gets its caller an answer at once, and the
//! reader never holds more than the cap of one event.

use super::framing::{BoundedLineReader, Frame};
use tokio::io::AsyncBufRead;

const KEPT_PREFIX_BYTES: usize = 4096;

/// One dispatched event.
#[derive(Debug, PartialEq, Eq)]
pub enum SseItem {
    Event {
        event: String,
        data: String,
    },
    /// An event whose data exceeded the cap; `prefix` holds its first bytes.
    Oversized {
        prefix: Vec<u8>,
    },
}

#[derive(Debug)]
pub struct SseEventReader<R> {
    lines: BoundedLineReader<R>,
    max_event_bytes: usize,
    /// Inside an event already reported as oversized: its lines are dropped up to its end.
    skipping: bool,
}

impl<R: AsyncBufRead + Unpin> SseEventReader<R> {
    pub fn new(reader: R, max_event_bytes: usize) -> Self {
        Self {
            lines: BoundedLineReader::new(reader, max_event_bytes + 16),
            max_event_bytes,
            skipping: false,
        }
    }

    pub async fn next_event(&mut self) -> std::io::Result<Option<SseItem>> {
        let mut event_type: Option<String> = None;
        let mut data = String::new();
        let mut has_data = false;
        loop {
            let line = match self.lines.next_frame().await? {
                None => return Ok(None),
                Some(Frame::Oversized { prefix }) => {
                    if !self.skipping && prefix.starts_with(b"data:") {
                        let value = prefix.strip_prefix(b"data:").unwrap_or(&prefix);
                        let value = value.strip_prefix(b" ").unwrap_or(value);
                        return Ok(Some(self.oversized(&data, value)));
                    }
                    continue;
                }
                Some(Frame::Line(line)) => line,
            };
            if self.skipping {
                self.skipping = !line.is_empty();
                continue;
            }
            if line.is_empty() {
                if !has_data && event_type.is_none() {
                    continue;
                }
                return Ok(Some(SseItem::Event {
                    event: event_type.take().unwrap_or_else(|| "message".to_owned()),
                    data: std::mem::take(&mut data),
                }));
            }
            if line.first() == Some(&b':') {
                continue;
            }
            let text = String::from_utf8_lossy(&line);
            let (field, value) = match text.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (text.as_ref(), ""),
            };
            match field {
                "event" => event_type = Some(value.to_owned()),
                "data" => {
                    if data.len() + value.len() + 1 > self.max_event_bytes {
                        return Ok(Some(self.oversized(&data, value.as_bytes())));
                    } else {
                        if has_data {
                            data.push('\n');
                        }
                        data.push_str(value);
                        has_data = true;
                    }
                }
                _ => {}
            }
        }
    }

    /// Reports the current event as oversized (keeping its first bytes for the request id)
    /// and skips the rest of it.
    fn oversized(&mut self, data: &str, value: &[u8]) -> SseItem {
        let mut prefix = data.as_bytes()[..data.len().min(KEPT_PREFIX_BYTES)].to_vec();
        let room = KEPT_PREFIX_BYTES.saturating_sub(prefix.len());
        prefix.extend_from_slice(&value[..value.len().min(room)]);
        self.skipping = true;
        SseItem::Oversized { prefix }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(input: &str, cap: usize) -> Vec<SseItem> {
        let mut reader = SseEventReader::new(
            tokio::io::BufReader::with_capacity(5, input.as_bytes()),
            cap,
        );
        let mut items = Vec::new();
        while let Some(item) = reader.next_event().await.unwrap() {
            items.push(item);
        }
        items
    }

    #[tokio::test]
    async fn parses_events_comments_and_multiline_data() {
        let input = ": keep-alive\n\nevent: endpoint\ndata: /messages?session_id=1\n\ndata: {\"a\":\ndata: 1}\r\n\r\n";
        let items = read_all(input, 1024).await;
        assert_eq!(
            items,
            vec![
                SseItem::Event {
                    event: "endpoint".into(),
                    data: "/messages?session_id=1".into()
                },
                SseItem::Event {
                    event: "message".into(),
                    data: "{\"a\":\n1}".into()
                },
            ]
        );
    }

    #[tokio::test]
    async fn refuses_oversized_events_and_keeps_their_start() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":\"{}\"}}",
            "y".repeat(5000)
        );
        let input = format!("event: message\ndata: {big}\n\ndata: {{\"ok\":true}}\n\n");
        let items = read_all(&input, 1000).await;
        assert_eq!(items.len(), 2);
        let SseItem::Oversized { prefix } = &items[0] else {
            panic!("expected oversized")
        };
        assert_eq!(
            super::super::framing::top_level_id(prefix),
            Some(serde_json::json!(5))
        );
        assert_eq!(
            items[1],
            SseItem::Event {
                event: "message".into(),
                data: "{\"ok\":true}".into()
            }
        );
    }
}
