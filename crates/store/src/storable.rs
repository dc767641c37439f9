//! Text and JSON as every backend can hold them. PostgreSQL refuses U+0000 in `TEXT` columns
//! ("invalid byte sequence") and in JSONB strings ("unsupported Unicode escape sequence");
//! SQLite keeps it. Content that reaches the store from people, models and upstream servers —
//! message text, tool arguments and results, approval requests, audit details, titles — is
//! stored with U+0000 replaced by U+FFFD (the replacement character) on both backends, so a
//! stray NUL never fails a write (a tool answering with one must not break the chat) and both
//! backends return the same text. Names people choose are refused instead
//! ([`crate::validate::display_text`]).

use serde_json::Value;

/// What U+0000 becomes.
const REPLACEMENT: &str = "\u{FFFD}";

/// Replaces U+0000 in `text`.
pub(crate) fn clean_text(text: &mut String) {
    if text.contains('\0') {
        *text = text.replace('\0', REPLACEMENT);
    }
}

pub(crate) fn clean_optional_text(text: &mut Option<String>) {
    if let Some(text) = text {
        clean_text(text);
    }
}

/// Replaces U+0000 in every string and object key of `value`.
pub(crate) fn clean_json(value: &mut Value) {
    match value {
        Value::String(text) => clean_text(text),
        Value::Array(items) => items.iter_mut().for_each(clean_json),
        Value::Object(map) => {
            if map.keys().any(|key| key.contains('\0')) {
                let entries = std::mem::take(map);
                for (mut key, mut item) in entries {
                    clean_text(&mut key);
                    clean_json(&mut item);
                    map.insert(key, item);
                }
            } else {
                map.values_mut().for_each(clean_json);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

pub(crate) fn clean_optional_json(value: &mut Option<Value>) {
    if let Some(value) = value {
        clean_json(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nul_characters_become_replacement_characters_everywhere() {
        let mut text = "a\0b".to_owned();
        clean_text(&mut text);
        assert_eq!(text, "a\u{FFFD}b");
        let mut value = json!({"k\0": ["x\0", {"y": "\0"}, 1, null], "plain": "ok"});
        clean_json(&mut value);
        assert_eq!(
            value,
            json!({"k\u{FFFD}": ["x\u{FFFD}", {"y": "\u{FFFD}"}, 1, null], "plain": "ok"})
        );
    }
}
