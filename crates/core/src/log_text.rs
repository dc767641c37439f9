//! Text from the wire, made safe to log: [`LogText`] escapes control characters (newlines, ANSI
//! escapes, NUL…) and cuts the text at [`MAX_LOGGED_CHARS`] characters with a
//! `…(N bytes)` suffix giving its real size.
//!
//! Why: JSON-RPC ids, method names, tool names, arguments and upstream error messages are chosen
//! by whoever is on the other end. Logged as they are, a newline forges a log line, an ANSI
//! sequence repaints a terminal, and a 2 MB argument makes a 4 MB log line. Everything from the
//! wire goes through [`log_text`] (or [`log_json`] for a JSON value) before it reaches `tracing`.

use std::fmt;

/// The most characters of one value a log line carries.
pub const MAX_LOGGED_CHARS: usize = 256;

/// A `Display` of `text` escaped and cut for a log line (see the module doc).
pub fn log_text(text: &str) -> LogText<'_> {
    LogText(text)
}

/// [`log_text`] of a JSON value's compact text; the serialisation itself is cut short, so a
/// huge value costs no more than the part that is logged.
pub fn log_json(value: &serde_json::Value) -> LoggedJson {
    LoggedJson(truncated_json(value))
}

/// See [`log_text`].
#[derive(Clone, Copy)]
pub struct LogText<'a>(&'a str);

impl fmt::Display for LogText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_escaped(f, self.0, self.0.len())
    }
}

impl fmt::Debug for LogText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// See [`log_json`]: the first part of the value's text and its full length in bytes.
pub struct LoggedJson((String, usize));

impl fmt::Display for LoggedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (head, total_bytes) = &self.0;
        write_escaped(f, head, *total_bytes)
    }
}

impl fmt::Debug for LoggedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Writes at most [`MAX_LOGGED_CHARS`] characters of `text`, escaped, then `…(N bytes)` when
/// anything was left out (`total_bytes` is the size of the whole value).
fn write_escaped(f: &mut fmt::Formatter<'_>, text: &str, total_bytes: usize) -> fmt::Result {
    let mut written_bytes = 0;
    for (count, character) in text.chars().enumerate() {
        if count == MAX_LOGGED_CHARS {
            break;
        }
        written_bytes += character.len_utf8();
        if character.is_control() || is_invisible_format(character) {
            write!(f, "{}", character.escape_default())?;
        } else {
            f.write_fmt(format_args!("{character}"))?;
        }
    }
    if written_bytes < total_bytes {
        write!(f, "…({total_bytes} bytes)")?;
    }
    Ok(())
}

/// Bidirectional overrides and zero-width characters can make a log line read differently
/// from what it holds.
fn is_invisible_format(character: char) -> bool {
    matches!(character, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// The compact JSON text of `value`, stopped after enough bytes for [`MAX_LOGGED_CHARS`]
/// characters, and the length of the whole text.
fn truncated_json(value: &serde_json::Value) -> (String, usize) {
    struct Capped {
        head: String,
        total_bytes: usize,
    }
    impl fmt::Write for Capped {
        fn write_str(&mut self, part: &str) -> fmt::Result {
            self.total_bytes += part.len();
            // Four bytes per character at most: enough text for the cut, never the whole value.
            let room = (MAX_LOGGED_CHARS * 4).saturating_sub(self.head.len());
            if room > 0 {
                let mut end = part.len().min(room);
                while !part.is_char_boundary(end) {
                    end -= 1;
                }
                self.head.push_str(&part[..end]);
            }
            Ok(())
        }
    }
    let mut capped = Capped {
        head: String::new(),
        total_bytes: 0,
    };
    // Counting the length means serialising the whole value once, but nothing beyond the head
    // is kept in memory.
    let _ = fmt::write(&mut capped, format_args!("{value}"));
    (capped.head, capped.total_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_ansi_escapes_are_escaped() {
        let logged = log_text("1\nERROR forged\u{1b}[31mred\u{202e}").to_string();
        assert_eq!(logged, "1\\nERROR forged\\u{1b}[31mred\\u{202e}");
        assert!(!logged.contains('\n') && !logged.contains('\u{1b}'));
    }

    #[test]
    fn long_text_is_cut_with_its_size() {
        let long = "é".repeat(1_000_000);
        let logged = log_text(&long).to_string();
        assert!(logged.starts_with(&"é".repeat(MAX_LOGGED_CHARS)));
        assert!(logged.ends_with("…(2000000 bytes)"), "{logged}");
        assert_eq!(
            logged.chars().count(),
            MAX_LOGGED_CHARS + "…(2000000 bytes)".chars().count()
        );
        assert_eq!(log_text("short").to_string(), "short");
    }

    #[test]
    fn json_values_are_cut_without_keeping_the_whole_text() {
        let value = serde_json::json!({ "text": "x".repeat(2 * 1024 * 1024) });
        let logged = log_json(&value).to_string();
        let whole = value.to_string().len();
        assert!(logged.starts_with(r#"{"text":"xxx"#), "{logged}");
        assert!(logged.ends_with(&format!("…({whole} bytes)")), "{logged}");
        assert!(logged.len() < 400);
        assert_eq!(log_json(&serde_json::json!(7)).to_string(), "7");
    }
}
