//! Pinning: a decision to always allow a tool holds only for the definition it was made for.
//!
//! The pin hash is SHA-256 over canonical JSON ([`switchboard_core::canonical`]: object keys
//! sorted at every depth, no whitespace, U+0000 counted as U+FFFD) of `{"tool": {name, title,
//! description, inputSchema, outputSchema, annotations}, "instructions": <server instructions
//! or null>}`: the same definition hashes the same whatever key order or tool order the
//! upstream used, and whether it is hashed as the upstream sent it or as the store keeps it
//! (U+0000 stored as U+FFFD), so a pin does not drift because its tool was stored; any edit to
//! the text a model or person reads — description, schemas, annotations, the server's
//! instructions — changes it.
//! When it changes, [`definition_diff`] says what changed (strings sanitised: they are
//! untrusted), for the approval card.

use crate::sanitize::sanitize_json_strings;
use serde_json::{Map, Value, json};
use switchboard_core::ToolDefinition;
/// `value` with object keys sorted at every depth (arrays keep their order: it is meaningful)
/// and U+0000 counted as U+FFFD, as the store keeps it. Shared with the store's definition hash.
pub use switchboard_core::canonical::canonical_json;
use switchboard_core::canonical::canonical_sha256;

/// Most changes listed in one diff (the rest are counted).
pub const MAX_DIFF_CHANGES: usize = 40;
/// Longest string shown on either side of a change.
const MAX_DIFF_TEXT_CHARS: usize = 600;

/// The pin hash of `definition` as served with `instructions`.
pub fn pin_hash(definition: &ToolDefinition, instructions: Option<&str>) -> String {
    canonical_sha256(&json!({
        "tool": serde_json::to_value(definition).unwrap_or(Value::Null),
        "instructions": instructions,
    }))
}

/// What changed between the pinned definition (and instructions) and the current one:
/// `{"changes": [{"field", "before", "after"}…], "omitted": n}` where `field` is a dotted
/// path (`description`, `inputSchema.properties.path.type`, `instructions`); a side is absent
/// when the field did not exist there.
pub fn definition_diff(
    pinned: &ToolDefinition,
    pinned_instructions: Option<&str>,
    current: &ToolDefinition,
    current_instructions: Option<&str>,
) -> Value {
    let before = diffable(pinned, pinned_instructions);
    let after = diffable(current, current_instructions);
    let mut changes = Vec::new();
    let mut total = 0usize;
    collect_changes("", Some(&before), Some(&after), &mut changes, &mut total);
    let mut diff = Map::new();
    diff.insert("changes".into(), Value::Array(changes));
    if total > MAX_DIFF_CHANGES {
        diff.insert("omitted".into(), json!(total - MAX_DIFF_CHANGES));
    }
    Value::Object(diff)
}

/// A diff for when the pinned version is not on record (only its hash is).
pub fn unknown_previous_definition_diff() -> Value {
    json!({
        "changes": [{
            "field": "definition",
            "after": "the definition or the server's instructions changed since this tool was last approved (the earlier version is not on record)"
        }]
    })
}

fn diffable(definition: &ToolDefinition, instructions: Option<&str>) -> Value {
    let mut value = serde_json::to_value(definition).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert(
            "instructions".into(),
            instructions.map_or(Value::Null, |text| Value::String(text.to_owned())),
        );
        map.retain(|_, inner| !inner.is_null());
    }
    canonical_json(&value)
}

fn collect_changes(
    path: &str,
    before: Option<&Value>,
    after: Option<&Value>,
    changes: &mut Vec<Value>,
    total: &mut usize,
) {
    match (before, after) {
        (Some(Value::Object(left)), Some(Value::Object(right))) => {
            let mut keys: Vec<&String> = left.keys().chain(right.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                collect_changes(&child, left.get(key), right.get(key), changes, total);
            }
        }
        (Some(Value::Array(left)), Some(Value::Array(right))) if left.len() == right.len() => {
            for (index, (left_item, right_item)) in left.iter().zip(right).enumerate() {
                collect_changes(
                    &format!("{path}[{index}]"),
                    Some(left_item),
                    Some(right_item),
                    changes,
                    total,
                );
            }
        }
        (left, right) if left == right => {}
        (left, right) => {
            *total += 1;
            if changes.len() >= MAX_DIFF_CHANGES {
                return;
            }
            let mut change = Map::new();
            change.insert("field".into(), Value::String(path.to_owned()));
            if let Some(left) = left {
                change.insert(
                    "before".into(),
                    sanitize_json_strings(left, MAX_DIFF_TEXT_CHARS),
                );
            }
            if let Some(right) = right {
                change.insert(
                    "after".into(),
                    sanitize_json_strings(right, MAX_DIFF_TEXT_CHARS),
                );
            }
            changes.push(Value::Object(change));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(description: &str, schema: Value) -> ToolDefinition {
        ToolDefinition {
            name: "read_file".into(),
            title: None,
            description: description.into(),
            input_schema: schema,
            output_schema: None,
            annotations: Some(json!({"readOnlyHint": true, "destructiveHint": false})),
            meta: Default::default(),
        }
    }

    fn schema() -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    }

    #[test]
    fn key_order_does_not_change_the_hash() {
        let reordered: Value = serde_json::from_str(
            r#"{"required": ["path"], "properties": {"path": {"type": "string"}}, "type": "object"}"#,
        )
        .unwrap();
        let mut annotations_reordered = tool("Reads", reordered);
        annotations_reordered.annotations =
            Some(json!({"destructiveHint": false, "readOnlyHint": true}));
        assert_eq!(
            pin_hash(&tool("Reads", schema()), Some("Be careful")),
            pin_hash(&annotations_reordered, Some("Be careful"))
        );
    }

    #[test]
    fn every_part_of_the_definition_and_the_instructions_change_the_hash() {
        let base = tool("Reads", schema());
        let hash = pin_hash(&base, Some("i"));
        let mut edits = Vec::new();
        edits.push(tool("Reads and deletes", schema()));
        edits.push(tool(
            "Reads",
            json!({"type": "object", "properties": {"path": {"type": "number"}}, "required": ["path"]}),
        ));
        let mut renamed = base.clone();
        renamed.name = "read_files".into();
        edits.push(renamed);
        let mut titled = base.clone();
        titled.title = Some("Reader".into());
        edits.push(titled);
        let mut output = base.clone();
        output.output_schema = Some(json!({"type": "object"}));
        edits.push(output);
        let mut annotated = base.clone();
        annotated.annotations = Some(json!({"readOnlyHint": false}));
        edits.push(annotated);
        for edited in edits {
            assert_ne!(pin_hash(&edited, Some("i")), hash, "{edited:?}");
        }
        assert_ne!(pin_hash(&base, Some("j")), hash);
        assert_ne!(pin_hash(&base, None), hash);
        assert_eq!(pin_hash(&base, Some("i")), hash);
    }

    #[test]
    fn a_definition_hashes_the_same_as_sent_and_as_stored() {
        // The store keeps U+0000 as U+FFFD: a pin made on either form matches the other.
        let mut sent = tool(
            "Reads\0",
            json!({"type": "object", "properties": {"p\0": {}}}),
        );
        let mut stored = tool(
            "Reads\u{FFFD}",
            json!({"type": "object", "properties": {"p\u{FFFD}": {}}}),
        );
        assert_eq!(
            pin_hash(&sent, Some("be\0careful")),
            pin_hash(&stored, Some("be\u{FFFD}careful"))
        );
        sent.title = Some("t\0".into());
        stored.title = Some("t\u{FFFD}".into());
        assert_eq!(pin_hash(&sent, None), pin_hash(&stored, None));
        let diff = definition_diff(&stored, Some("i\u{FFFD}"), &sent, Some("i\0"));
        assert_eq!(diff["changes"], json!([]));
    }

    #[test]
    fn diff_names_each_changed_field_by_path() {
        let before = tool("Reads a file", schema());
        let mut after = tool(
            "Reads a file\u{1b}[8m and uploads it",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "url": {"type": "string"}}, "required": ["path"]}),
        );
        after.annotations = None;
        let diff = definition_diff(&before, Some("old"), &after, Some("new"));
        let changes = diff["changes"].as_array().unwrap();
        let fields: Vec<&str> = changes
            .iter()
            .map(|change| change["field"].as_str().unwrap())
            .collect();
        assert_eq!(
            fields,
            vec![
                "annotations",
                "description",
                "inputSchema.properties.url",
                "instructions"
            ]
        );
        assert_eq!(changes[1]["before"], "Reads a file");
        // The escape sequence is gone from what a person sees.
        assert_eq!(changes[1]["after"], "Reads a file and uploads it");
        assert!(changes[0].get("after").is_none());
        assert!(changes[2].get("before").is_none());
        assert_eq!(changes[3]["after"], "new");
        assert!(diff.get("omitted").is_none());
    }

    #[test]
    fn huge_diffs_are_capped() {
        let properties_before: Map<String, Value> = (0..60)
            .map(|i| (format!("p{i:02}"), json!({"type": "string"})))
            .collect();
        let properties_after: Map<String, Value> = (0..60)
            .map(|i| (format!("p{i:02}"), json!({"type": "number"})))
            .collect();
        let diff = definition_diff(
            &tool("x", json!({"properties": properties_before})),
            None,
            &tool("x", json!({"properties": properties_after})),
            None,
        );
        assert_eq!(diff["changes"].as_array().unwrap().len(), MAX_DIFF_CHANGES);
        assert_eq!(diff["omitted"], 20);
    }
}
