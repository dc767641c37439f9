//! Structured logs: `tracing` to stderr, as text for people or JSON for collectors, filtered by
//! `[log] filter`. Standard output is kept for what the operator must read (the one-time admin
//! token, the ready line) so it never mixes with logs.
//!
//! Every line passes [`GuardedStderr`]: much of what is logged comes from the wire (JSON-RPC
//! ids, method names, upstream errors — ours through `core::log_text`, but also whatever our
//! dependencies such as rmcp log), so control characters inside a line are escaped (a newline
//! cannot forge a second line, an ANSI sequence cannot repaint the terminal) and a line is cut
//! at [`MAX_LOG_LINE_BYTES`]. Colours are therefore off: their escapes would be escaped too.

use crate::config::sections::{DEFAULT_LOG_FILTER, LogFormat, LogSection};
use std::io::Write;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// The longest log line written; a longer one is cut and ends with `…(N bytes)`.
pub const MAX_LOG_LINE_BYTES: usize = 8 * 1024;

pub fn init(log: &LogSection) {
    let filter =
        EnvFilter::try_new(&log.filter).unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(GuardedStderr {
            json: log.format == LogFormat::Json,
        })
        .with_ansi(false);
    let result = match log.format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
    // Only fails if a subscriber is already set (never in the binary).
    drop(result);
}

/// Makes [`GuardedLine`]s on stderr (see the module doc).
#[derive(Clone, Copy)]
struct GuardedStderr {
    /// JSON lines are already escaped; a long one is replaced by a short JSON object.
    json: bool,
}

impl<'a> MakeWriter<'a> for GuardedStderr {
    type Writer = GuardedLine;

    fn make_writer(&'a self) -> Self::Writer {
        GuardedLine {
            json: self.json,
            buffer: Vec::new(),
        }
    }
}

/// Collects one event's bytes (the formatter writes an event, then drops its writer) and
/// writes them guarded on drop.
struct GuardedLine {
    json: bool,
    buffer: Vec<u8>,
}

impl Write for GuardedLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for GuardedLine {
    fn drop(&mut self) {
        if self.buffer.is_empty() {
            return;
        }
        let line = guard_line(&String::from_utf8_lossy(&self.buffer), self.json);
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

/// One event's text, made safe: see the module doc.
fn guard_line(event: &str, json: bool) -> String {
    let body = event.strip_suffix('\n').unwrap_or(event);
    if json {
        if body.len() <= MAX_LOG_LINE_BYTES {
            return format!("{body}\n");
        }
        let head = switchboard_core::log_text(body).to_string();
        let replacement = serde_json::json!({
            "level": "WARN",
            "message": "log line too long; its start follows",
            "line_bytes": body.len(),
            "line_start": head,
        });
        return format!("{replacement}\n");
    }
    let mut guarded = String::with_capacity(body.len().min(MAX_LOG_LINE_BYTES) + 32);
    for character in body.chars() {
        if guarded.len() >= MAX_LOG_LINE_BYTES {
            guarded.push_str(&format!("…({} bytes)", body.len()));
            break;
        }
        if character.is_control() && character != '\t' {
            guarded.extend(character.escape_default());
        } else {
            guarded.push(character);
        }
    }
    guarded.push('\n');
    guarded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forged_line_and_escapes_stay_inside_one_line() {
        let guarded = guard_line("WARN id=1\nERROR forged \u{1b}[31mred\n", false);
        assert_eq!(guarded, "WARN id=1\\nERROR forged \\u{1b}[31mred\n");
    }

    #[test]
    fn long_lines_are_cut() {
        let long = format!("INFO {}\n", "x".repeat(3 * MAX_LOG_LINE_BYTES));
        let guarded = guard_line(&long, false);
        assert!(guarded.len() < MAX_LOG_LINE_BYTES + 64);
        assert!(guarded.ends_with(&format!("…({} bytes)\n", long.len() - 1)));
        let json = format!(
            "{{\"message\":\"{}\"}}\n",
            "x".repeat(3 * MAX_LOG_LINE_BYTES)
        );
        let guarded = guard_line(&json, true);
        let parsed: serde_json::Value = serde_json::from_str(guarded.trim_end()).unwrap();
        assert_eq!(parsed["line_bytes"], json.len() - 1);
    }
}
