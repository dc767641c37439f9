//! Bounded framing for byte streams that carry one JSON-RPC message per line (stdio), and the
//! rescue of an oversized message: the message is never buffered, but the request id at its
//! start is recovered so the waiting caller gets a precise "too large" error at once instead of
//! a timeout.

use crate::error::RESPONSE_TOO_LARGE_CODE;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// How much of an oversized line is kept to find its request id.
const OVERSIZED_PREFIX_BYTES: usize = 4096;

/// One unit read from a line-framed stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line without its terminator.
    Line(Vec<u8>),
    /// A line longer than the cap; only its first bytes were kept.
    Oversized { prefix: Vec<u8> },
}

/// Reads newline-terminated frames, never holding more than `max_line_bytes` of one line.
#[derive(Debug)]
pub struct BoundedLineReader<R> {
    reader: R,
    max_line_bytes: usize,
    line: Vec<u8>,
    /// Inside a line already reported as oversized: its rest is skipped up to its end.
    discarding: bool,
}

impl<R: AsyncBufRead + Unpin> BoundedLineReader<R> {
    pub fn new(reader: R, max_line_bytes: usize) -> Self {
        Self {
            reader,
            max_line_bytes,
            line: Vec::new(),
            discarding: false,
        }
    }

    /// The next frame, or `None` at end of stream (a trailing unterminated line is dropped).
    ///
    /// A line is reported as [`Frame::Oversized`] as soon as it passes the cap, not when it
    /// ends: a server printing a line that never ends gets its caller an answer at once, and
    /// the rest of that line is read and dropped until its end.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(None);
            }
            let newline = available.iter().position(|byte| *byte == b'\n');
            let take = newline.map_or(available.len(), |index| index + 1);
            if self.discarding {
                self.discarding = newline.is_none();
                self.reader.consume(take);
                continue;
            }
            let chunk = &available[..newline.unwrap_or(available.len())];
            if self.line.len() + chunk.len() > self.max_line_bytes {
                let mut prefix = std::mem::take(&mut self.line);
                prefix.truncate(OVERSIZED_PREFIX_BYTES);
                let room = OVERSIZED_PREFIX_BYTES.saturating_sub(prefix.len());
                prefix.extend_from_slice(&chunk[..chunk.len().min(room)]);
                self.discarding = newline.is_none();
                self.reader.consume(take);
                return Ok(Some(Frame::Oversized { prefix }));
            }
            self.line.extend_from_slice(chunk);
            self.reader.consume(take);
            if newline.is_some() {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(Frame::Line(line)));
            }
        }
    }
}

/// Finds the top-level `"id"` of a JSON object from its first bytes (serializers put `id`
/// before `result`, so it is almost always within the kept prefix).
pub fn top_level_id(prefix: &[u8]) -> Option<serde_json::Value> {
    let text = String::from_utf8_lossy(prefix);
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut index = 0usize;
    while index < bytes.len() {
        match bytes[index] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let end = string_end(bytes, index)?;
                let is_id_key = depth == 1 && &bytes[index + 1..end] == b"id";
                index = end + 1;
                if is_id_key {
                    let rest = text[index..].trim_start();
                    let value_text = rest.strip_prefix(':')?.trim_start();
                    return leading_json_scalar(value_text);
                }
                continue;
            }
            _ => {}
        }
        index += 1;
    }
    None
}

fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut index = start + 1;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' => index += 2,
            b'"' => return Some(index),
            _ => index += 1,
        }
    }
    None
}

fn leading_json_scalar(text: &str) -> Option<serde_json::Value> {
    let end = if text.starts_with('"') {
        string_end(text.as_bytes(), 0)? + 1
    } else {
        text.find([',', '}', ' ', '\n']).unwrap_or(text.len())
    };
    match serde_json::from_str::<serde_json::Value>(&text[..end]).ok()? {
        value @ (serde_json::Value::Number(_) | serde_json::Value::String(_)) => Some(value),
        _ => None,
    }
}

/// The error response delivered in place of an oversized answer to request `id`.
pub fn response_too_large_message(id: serde_json::Value, limit: usize) -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": RESPONSE_TOO_LARGE_CODE,
            "message": format!("the response exceeded the {limit} byte limit and was refused"),
        }
    })
}

/// JSON-RPC "parse error": the error response delivered in place of an answer to request `id`
/// that is not a valid JSON-RPC message (wrong types, invalid UTF-8, nesting deeper than the
/// decoder accepts), so the call fails at once instead of waiting for its timeout.
pub const MALFORMED_RESPONSE_CODE: i32 = -32700;

/// The error response delivered in place of a malformed answer to request `id`.
pub fn malformed_response_message(id: serde_json::Value, reason: &str) -> serde_json::Value {
    let reason: String = reason.chars().take(200).collect();
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": MALFORMED_RESPONSE_CODE,
            "message": format!("the upstream's answer is not a valid JSON-RPC message: {reason}"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncWriteExt, BufReader};

    async fn frames(input: &[u8], cap: usize) -> Vec<Frame> {
        let mut reader = BoundedLineReader::new(BufReader::with_capacity(7, input), cap);
        let mut frames = Vec::new();
        while let Some(frame) = reader.next_frame().await.unwrap() {
            frames.push(frame);
        }
        frames
    }

    #[tokio::test]
    async fn splits_lines_and_caps_long_ones_without_buffering_them() {
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":\"{}\"}}",
            "x".repeat(10_000)
        );
        let input = format!("{{\"a\":1}}\r\n{long}\n{{\"b\":2}}\ntrailing-without-newline");
        let frames = frames(input.as_bytes(), 1000).await;
        assert_eq!(frames.len(), 3);
        assert_eq!(frames[0], Frame::Line(b"{\"a\":1}".to_vec()));
        let Frame::Oversized { prefix } = &frames[1] else {
            panic!("expected oversized")
        };
        assert!(prefix.len() <= OVERSIZED_PREFIX_BYTES);
        assert_eq!(top_level_id(prefix), Some(serde_json::json!(42)));
        assert_eq!(frames[2], Frame::Line(b"{\"b\":2}".to_vec()));
    }

    #[tokio::test]
    async fn a_line_that_never_ends_is_reported_once_it_passes_the_cap() {
        let (mut writer, reader) = tokio::io::duplex(64 * 1024);
        let mut reader = BoundedLineReader::new(BufReader::new(reader), 1000);
        writer
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"call-9\",\"result\":\"")
            .await
            .unwrap();
        writer.write_all(&[b'z'; 5000]).await.unwrap();
        // The writer stays open and no line end ever came: the frame arrives anyway.
        let frame = tokio::time::timeout(std::time::Duration::from_secs(5), reader.next_frame())
            .await
            .expect("reported before the line ends")
            .unwrap()
            .unwrap();
        let Frame::Oversized { prefix } = frame else {
            panic!("expected oversized, got {frame:?}")
        };
        assert_eq!(top_level_id(&prefix), Some(serde_json::json!("call-9")));
        // The rest of that line is skipped, whatever its length; the next line is whole.
        writer.write_all(&[b'z'; 20_000]).await.unwrap();
        writer.write_all(b"\"}\n{\"b\":2}\n").await.unwrap();
        drop(writer);
        assert_eq!(
            reader.next_frame().await.unwrap(),
            Some(Frame::Line(b"{\"b\":2}".to_vec()))
        );
        assert_eq!(reader.next_frame().await.unwrap(), None);
    }

    #[test]
    fn finds_only_the_top_level_id() {
        let nested_first =
            br#"{"result":{"content":[{"id":"inner"}]},"id":"outer","jsonrpc":"2.0"}"#;
        assert_eq!(top_level_id(nested_first), Some(serde_json::json!("outer")));
        assert_eq!(
            top_level_id(br#"{"jsonrpc":"2.0", "id" : 7 , "result": {"#),
            Some(serde_json::json!(7))
        );
        assert_eq!(
            top_level_id(br#"{"method":"notifications/progress","params":{"id":3"#),
            None
        );
        assert_eq!(
            top_level_id(br#"{"key":"va\"lue","id":"a\"b"}"#),
            Some(serde_json::json!("a\"b"))
        );
    }
}
