//! Renderings of the schema's history: the current schema version and changelog entries
//! (grouped by kind). Kept apart from the type renderings because they read versions and
//! changes, not type definitions.

use serde_json::{Map, Value};

use super::{list_under, number, text};
use crate::offline::render::generic::capitalised;
use crate::offline::render::markdown::{count_noun, friendly_time, inline};

pub(super) fn schema_version(json: &Value) -> Option<String> {
    let map = json
        .get("current")
        .and_then(Value::as_object)
        .or(json.as_object())?;
    let version = text(map, &["version", "schema_version", "hash"])?;
    if map
        .values()
        .any(|value| matches!(value, Value::Array(items) if items.iter().any(Value::is_object)))
    {
        return None;
    }
    let mut out = format!("The knowledge-graph schema is at version `{version}`");
    if let Some(created) = text(map, &["created_at", "updated_at", "timestamp", "at"]) {
        out.push_str(&format!(", created {}", friendly_time(created)));
    }
    out.push('.');
    let object_types = number(map, &["object_type_count", "object_types", "type_count"]);
    let relationship_types = number(map, &["relationship_type_count", "relationship_types"]);
    if let (Some(object_types), Some(relationship_types)) = (object_types, relationship_types) {
        out.push_str(&format!(
            " It defines {} and {}",
            count_noun(object_types as usize, "object type"),
            count_noun(relationship_types as usize, "relationship type")
        ));
        if let Some(properties) = number(map, &["property_count"]) {
            out.push_str(&format!(
                " with {} in all",
                count_noun(properties as usize, "property")
            ));
        }
        out.push('.');
    }
    if let Some(types) = map
        .get("object_types")
        .and_then(Value::as_array)
        .filter(|types| !types.is_empty())
    {
        out.push_str(&format!(
            "\n\nObject types: {}.",
            inline(&Value::Array(types.clone()))
        ));
    }
    if let Some(message) = text(map, &["message", "description"]) {
        out.push_str(&format!(
            "\n\nLatest change: {}.",
            message.trim_end_matches('.')
        ));
    }
    if let Some(sequence) = number(map, &["sequence"]).filter(|sequence| *sequence > 0) {
        let history = match number(map, &["version_count"]) {
            Some(count) => format!("This is version {sequence} of {count}"),
            None => format!("This is schema version number {sequence}"),
        };
        out.push_str(&format!(
            "\n\n{history}. Ask \"Show me the recent changes to the schema\" to see what changed."
        ));
    }
    Some(out)
}

pub(super) fn changelog(arguments: &Value, json: &Value, rows: usize) -> Option<String> {
    let entries = list_under(json, &["entries", "changes", "changelog", "items"])?;
    let entry_maps: Vec<&Map<String, Value>> =
        entries.iter().filter_map(Value::as_object).collect();
    let is_changelog = !entry_maps.is_empty()
        && entry_maps.iter().all(|entry| {
            text(entry, &["change", "kind", "action", "change_type"]).is_some()
                && (entry.contains_key("description") || entry.contains_key("type_name"))
        });
    let is_empty_changelog = entries.is_empty() && json.get("entries").is_some();
    if !is_changelog && !is_empty_changelog {
        return None;
    }
    let since = arguments.get("since").and_then(Value::as_str);
    if entry_maps.is_empty() {
        return Some(match since {
            Some(since) => format!("The schema has not changed since {since}."),
            None => "The schema has no recorded changes.".to_owned(),
        });
    }
    let mut out = changelog_heading(entry_maps.len(), since);
    if let Some(total) = json.get("total_matching").and_then(Value::as_u64)
        && total as usize > entry_maps.len()
    {
        out.push_str(&format!(
            "(showing {} of {total}; ask for more, e.g. \"show the last 20 schema changes\")\n",
            entry_maps.len()
        ));
    }
    for kind in ["added", "modified", "removed"] {
        let of_kind: Vec<&&Map<String, Value>> = entry_maps
            .iter()
            .filter(|entry| text(entry, &["change", "kind", "action", "change_type"]) == Some(kind))
            .collect();
        if of_kind.is_empty() {
            continue;
        }
        out.push_str(&format!("\n**{}**\n", capitalised(kind)));
        for entry in of_kind.iter().take(rows) {
            out.push_str(&format!("- {}\n", describe_change(entry)));
        }
    }
    let other: Vec<&&Map<String, Value>> = entry_maps
        .iter()
        .filter(|entry| {
            !matches!(
                text(entry, &["change", "kind", "action", "change_type"]),
                Some("added" | "modified" | "removed")
            )
        })
        .collect();
    if !other.is_empty() {
        out.push_str("\n**Other**\n");
        for entry in other.iter().take(rows) {
            out.push_str(&format!("- {}\n", describe_change(entry)));
        }
    }
    Some(out)
}

/// "Here is the latest change", "Here are the 3 most recent changes", "There is 1 change …
/// since …": the verb and noun agree with the count.
fn changelog_heading(count: usize, since: Option<&str>) -> String {
    let (verb, newest_first) = if count == 1 {
        ("is", "")
    } else {
        ("are", ", newest first")
    };
    match since {
        Some(since) => format!(
            "There {verb} {} to the schema since {since}{newest_first}:\n",
            count_noun(count, "change")
        ),
        None if count == 1 => "Here is the latest change to the schema:\n".to_owned(),
        None => format!("Here are the {count} most recent changes to the schema, newest first:\n"),
    }
}

fn describe_change(entry: &Map<String, Value>) -> String {
    let what = text(entry, &["description", "summary"])
        .map(str::to_owned)
        .unwrap_or_else(|| {
            [
                text(entry, &["subject"]),
                text(entry, &["type_name", "relationship_name"]),
                text(entry, &["property_name"]),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ")
        });
    let mut when = Vec::new();
    if let Some(at) = text(entry, &["at", "created_at", "timestamp", "date"]) {
        when.push(
            friendly_time(at)
                .split(' ')
                .next()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    if let Some(version) = text(entry, &["version"]) {
        when.push(format!("version `{version}`"));
    }
    if when.is_empty() {
        what
    } else {
        format!("{what} ({})", when.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::changelog_heading;

    #[test]
    fn headings_agree_with_the_count() {
        assert_eq!(
            changelog_heading(1, None),
            "Here is the latest change to the schema:\n"
        );
        assert_eq!(
            changelog_heading(3, None),
            "Here are the 3 most recent changes to the schema, newest first:\n"
        );
        assert_eq!(
            changelog_heading(1, Some("2026-11-01")),
            "There is 1 change to the schema since 2026-11-01:\n"
        );
        assert_eq!(
            changelog_heading(2, Some("2026-11-01")),
            "There are 2 changes to the schema since 2026-11-01, newest first:\n"
        );
    }
}
