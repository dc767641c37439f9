//! A bounded reader of server-sent events for the legacy HTTP+SSE transport. Written here
//! (rather than taken from an SSE crate) because it must refuse an oversized event *while
//! still recovering its JSON-RPC id*, so the waiting caller gets an immediate, precise error.
//!
//! Supports the parts of the SSE format MCP servers use: `event`, `data` (multi-line),
//! comments; `id` and `retry` are ignored (the 2024-11-05 transport does not resume).

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
}

impl<R: AsyncBufRead + Unpin> SseEventReader<R> {
    pub fn new(reader: R, max_event_bytes: usize) -> Self {
        Self {
            lines: BoundedLineReader::new(reader, max_event_bytes + 16),
            max_event_bytes,
        }
    }

    pub async fn next_event(&mut self) -> std::io::Result<Option<SseItem>> {
        let mut event_type: Option<String> = None;
        let mut data = String::new();
        let mut has_data = false;
        let mut oversized: Option<Vec<u8>> = None;
        loop {
            let line = match self.lines.next_frame().await? {
                None => return Ok(None),
                Some(Frame::Oversized { prefix }) => {
                    if oversized.is_none() && prefix.starts_with(b"data:") {
                        let value = prefix.strip_prefix(b"data:").unwrap_or(&prefix);
                        let mut kept = data.as_bytes().to_vec();
                        kept.extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
                        kept.truncate(KEPT_PREFIX_BYTES);
                        oversized = Some(kept);
                    }
                    continue;
                }
                Some(Frame::Line(line)) => line,
            };
            if line.is_empty() {
                if let Some(prefix) = oversized.take() {
                    return Ok(Some(SseItem::Oversized { prefix }));
                }
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
                "data" if oversized.is_none() => {
                    if data.len() + value.len() + 1 > self.max_event_bytes {
                        let mut kept = data.as_bytes().to_vec();
                        kept.extend_from_slice(value.as_bytes());
                        kept.truncate(KEPT_PREFIX_BYTES);
                        oversized = Some(kept);
                        data.clear();
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
