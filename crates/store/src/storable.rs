//! Text and JSON as every backend can hold them. PostgreSQL refuses U+0000 in `TEXT` columns
//! ("invalid byte sequence") and in JSONB strings ("unsupported Unicode escape sequence");
//! SQLite keeps it. Content that reaches the store from people, models and upstream servers —
//! message text, tool arguments and results, approval requests, audit details, titles — is
//! stored with U+0000 replaced by U+FFFD (the replacement character) on both backends, so a
//! stray NUL never fails a write (a tool answering with one must not break the chat) and both
//! backends return the same text. Names people choose are refused instead
//! ([`crate::validate::display_text`]).
//!
//! Upstream tool definitions are stored the same way; their hashes
//! ([`switchboard_core::canonical`]) count U+0000 as U+FFFD, so a definition hashes the same
//! before and after it is stored.

use serde_json::{Map, Value};
use std::borrow::Cow;
use switchboard_core::ToolDefinition;

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
        Value::Object(map) => clean_object(map),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Replaces U+0000 in every string and key of a JSON object (keys keep their order).
fn clean_object(map: &mut Map<String, Value>) {
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

pub(crate) fn clean_optional_json(value: &mut Option<Value>) {
    if let Some(value) = value {
        clean_json(value);
    }
}

/// `text` as stored, borrowed when it has no U+0000 (for writes that hold a reference).
pub(crate) fn storable_text(text: &str) -> Cow<'_, str> {
    if text.contains('\0') {
        Cow::Owned(text.replace('\0', REPLACEMENT))
    } else {
        Cow::Borrowed(text)
    }
}

pub(crate) fn storable_optional_text(text: Option<&str>) -> Option<Cow<'_, str>> {
    text.map(storable_text)
}

/// `map` (a JSON object) as stored, borrowed when no string or key in it has U+0000.
pub(crate) fn storable_object(map: &Map<String, Value>) -> Cow<'_, Map<String, Value>> {
    if object_has_nul(map) {
        let mut cleaned = map.clone();
        clean_object(&mut cleaned);
        Cow::Owned(cleaned)
    } else {
        Cow::Borrowed(map)
    }
}

fn has_nul(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains('\0'),
        Value::Array(items) => items.iter().any(has_nul),
        Value::Object(map) => object_has_nul(map),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

fn object_has_nul(map: &Map<String, Value>) -> bool {
    map.iter()
        .any(|(key, item)| key.contains('\0') || has_nul(item))
}

/// Replaces U+0000 in every text of an upstream tool definition.
pub(crate) fn clean_tool_definition(definition: &mut ToolDefinition) {
    clean_text(&mut definition.name);
    clean_optional_text(&mut definition.title);
    clean_text(&mut definition.description);
    clean_json(&mut definition.input_schema);
    clean_optional_json(&mut definition.output_schema);
    clean_optional_json(&mut definition.annotations);
    if let Some(ui) = definition.meta.ui.as_mut() {
        clean_optional_text(&mut ui.resource_uri);
        for entry in ui.visibility.iter_mut().flatten() {
            clean_text(entry);
        }
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

    #[test]
    fn borrowed_forms_copy_only_when_there_is_something_to_replace() {
        assert!(matches!(storable_text("plain"), Cow::Borrowed("plain")));
        assert_eq!(storable_text("a\0"), "a\u{FFFD}");
        let plain = json!({"k": ["v", 1]});
        assert!(matches!(
            storable_object(plain.as_object().unwrap()),
            Cow::Borrowed(_)
        ));
        for nul in [
            json!({"k": ["v\0"]}),
            json!({"k\0": 1}),
            json!({"k": {"j": "\0"}}),
        ] {
            let stored = storable_object(nul.as_object().unwrap());
            assert!(matches!(stored, Cow::Owned(_)), "{nul}");
            let text = serde_json::to_string(&stored).unwrap();
            assert!(
                !text.contains("\\u0000") && text.contains('\u{FFFD}'),
                "{text}"
            );
        }
    }
}
