//! Canonical JSON and its SHA-256: the one definition of "the same content" for hashes that
//! name a tool definition (the store's definition hash, the approval gate's pin hash).
//!
//! The canonical form sorts object keys at every depth (arrays keep their order: it is
//! meaningful) and counts U+0000 in strings and keys as U+FFFD, which is how the store keeps
//! it (PostgreSQL cannot hold U+0000). So a definition hashes the same whether it is hashed as
//! an upstream sent it or as it reads back from the store, and whatever key order the upstream
//! used; a pin never looks changed only because its tool was stored.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// What U+0000 counts as (the store's replacement for it).
const NUL_REPLACEMENT: &str = "\u{FFFD}";

/// `value` in canonical form (see the module docs).
pub fn canonical_json(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map
                .iter()
                .map(|(key, item)| (canonical_text(key), canonical_json(item)))
                .collect();
            entries.sort_by(|(left, _), (right, _)| left.cmp(right));
            Value::Object(entries.into_iter().collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical_json).collect()),
        Value::String(text) => Value::String(canonical_text(text)),
        Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
    }
}

/// SHA-256 (lower-case hex) of the compact serialisation of `value`'s canonical form.
pub fn canonical_sha256(value: &Value) -> String {
    let canonical = serde_json::to_vec(&canonical_json(value)).unwrap_or_default();
    hex::encode(Sha256::digest(canonical))
}

fn canonical_text(text: &str) -> String {
    text.replace('\0', NUL_REPLACEMENT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_matter_at_any_depth_but_array_order_does() {
        let first: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[1,2],"x":null}}"#).unwrap();
        let reordered: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(canonical_sha256(&first), canonical_sha256(&reordered));
        assert_eq!(
            serde_json::to_string(&canonical_json(&first)).unwrap(),
            r#"{"a":{"x":null,"y":[1,2]},"b":1}"#
        );
        let swapped = json!({"b": 1, "a": {"x": null, "y": [2, 1]}});
        assert_ne!(canonical_sha256(&first), canonical_sha256(&swapped));
    }

    #[test]
    fn nul_counts_as_the_replacement_character_in_strings_and_keys() {
        let raw = json!({"k\0": ["v\0"], "text": "a\0b"});
        let stored = json!({"k\u{FFFD}": ["v\u{FFFD}"], "text": "a\u{FFFD}b"});
        assert_eq!(canonical_sha256(&raw), canonical_sha256(&stored));
        assert_ne!(
            canonical_sha256(&raw),
            canonical_sha256(&json!({"text": "ab"}))
        );
    }

    #[test]
    fn the_hash_is_sha256_of_the_compact_sorted_text() {
        // Pinned so that a change of form (which would re-pin every approved tool) is noticed.
        assert_eq!(
            canonical_sha256(&json!({"b": "x", "a": 1})),
            hex::encode(Sha256::digest(br#"{"a":1,"b":"x"}"#))
        );
    }
}
