//! Purpose-made renderings for result shapes the planner recognises — those of our
//! knowledge-graph tools, recognised by their fields rather than by tool name so that any
//! server answering in the same shape benefits: a schema version, changelog entries, object
//! types (all or one), relationship types, objects reached by a traversal, object lists,
//! counts and paths.

use serde_json::{Map, Value};

use super::RenderContext;
use super::generic::capitalised;
use super::markdown::{count_noun, friendly_time, inline, table};
use crate::config::OfflinePlannerConfig;
use crate::offline::known_values::{NAME_KEYS, object_display_name};

pub(crate) fn render_recognised(
    tool: &str,
    arguments: &Value,
    json: &Value,
    context: &RenderContext,
    config: &OfflinePlannerConfig,
) -> Option<String> {
    let rows = config.max_table_rows;
    schema_version(json)
        .or_else(|| changelog(arguments, json, rows))
        .or_else(|| reached_objects(json, context, rows))
        .or_else(|| one_type(arguments, json, rows))
        .or_else(|| type_list(json, rows))
        .or_else(|| relationship_types(arguments, json, rows))
        .or_else(|| counts(arguments, json, rows))
        .or_else(|| object_list(tool, arguments, json, rows))
}

/// The first array of objects under one of `keys`, or the value itself if it is one.
fn list_under<'a>(json: &'a Value, keys: &[&str]) -> Option<&'a Vec<Value>> {
    if let Value::Array(items) = json {
        return Some(items);
    }
    keys.iter()
        .find_map(|key| json.get(*key).and_then(Value::as_array))
}

fn text<'a>(map: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|key| map.get(*key).and_then(Value::as_str))
        .filter(|text| !text.is_empty())
}

fn number(map: &Map<String, Value>, keys: &[&str]) -> Option<u64> {
    keys.iter()
        .find_map(|key| map.get(*key).and_then(Value::as_u64))
}

fn schema_version(json: &Value) -> Option<String> {
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

fn changelog(arguments: &Value, json: &Value, rows: usize) -> Option<String> {
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
    let mut out = match since {
        Some(since) => format!("Schema changes since {since} ({}):\n", entry_maps.len()),
        None => format!(
            "Here are the {} to the schema, newest first:\n",
            if entry_maps.len() == 1 {
                "latest change".to_owned()
            } else {
                format!("{} most recent changes", entry_maps.len())
            }
        ),
    };
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

fn is_object_type(map: &Map<String, Value>) -> bool {
    map.contains_key("name")
        && !map.contains_key("from_types")
        && !map.contains_key("id")
        && (map.contains_key("properties") || map.contains_key("description"))
}

fn one_type(arguments: &Value, json: &Value, rows: usize) -> Option<String> {
    let single_in_list = json
        .get("types")
        .and_then(Value::as_array)
        .filter(|types| types.len() == 1 && arguments.get("type_name").is_some())
        .and_then(|types| types[0].as_object());
    let map = single_in_list
        .or_else(|| json.get("type").and_then(Value::as_object))
        .or(json.as_object())?;
    let properties = map.get("properties")?.as_array()?;
    if !is_object_type(map) {
        return None;
    }
    let name = text(map, &["name"])?;
    let mut out = format!("**{name}**");
    if let Some(description) = text(map, &["description"]) {
        out.push_str(&format!(" — {description}"));
    }
    out.push_str("\n\n");
    if properties.is_empty() {
        out.push_str("It has no properties.\n");
    } else {
        out.push_str(&format!(
            "{}:\n\n",
            capitalised(&count_noun(properties.len(), "property"))
        ));
        let property_rows: Vec<Vec<String>> = properties
            .iter()
            .filter_map(Value::as_object)
            .map(|property| {
                let mut description = text(property, &["description"])
                    .unwrap_or_default()
                    .to_owned();
                if let Some(values) = property
                    .get("enum_values")
                    .or(property.get("enum"))
                    .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
                {
                    if !description.is_empty() {
                        description.push_str("; ");
                    }
                    description.push_str(&format!("one of: {}", inline(values)));
                }
                vec![
                    format!("`{}`", text(property, &["name"]).unwrap_or("?")),
                    text(property, &["type"]).unwrap_or_default().to_owned(),
                    if property.get("required").and_then(Value::as_bool) == Some(true) {
                        "yes".into()
                    } else {
                        "no".into()
                    },
                    description,
                ]
            })
            .collect();
        out.push_str(&table(
            &["Property", "Type", "Required", "Description"],
            &property_rows,
            rows,
        ));
    }
    let described = |name: &str| -> Option<Map<String, Value>> {
        json.get("relationships")?
            .as_array()?
            .iter()
            .filter_map(Value::as_object)
            .find(|relationship| text(relationship, &["name"]) == Some(name))
            .cloned()
    };
    let relationship_lines = |keys: &[&str], arrow: &str, other_key: &str| -> Vec<String> {
        keys.iter()
            .find_map(|key| map.get(*key).or_else(|| json.get(*key)))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|relationship| match relationship {
                Value::String(name) => match described(name) {
                    Some(relationship) => {
                        let other_types =
                            relationship.get(other_key).map(inline).unwrap_or_default();
                        let description = text(&relationship, &["description"])
                            .map(|d| format!(" — {d}"))
                            .unwrap_or_default();
                        format!("- `{name}` {arrow} {other_types}{description}")
                    }
                    None => format!("- `{name}`"),
                },
                other => {
                    let relationship = other.as_object().cloned().unwrap_or_default();
                    let other_types = relationship.get(other_key).map(inline).unwrap_or_default();
                    let description = text(&relationship, &["description"])
                        .map(|d| format!(" — {d}"))
                        .unwrap_or_default();
                    format!(
                        "- `{}` {arrow} {other_types}{description}",
                        text(&relationship, &["name"]).unwrap_or("?")
                    )
                }
            })
            .collect()
    };
    let outgoing = relationship_lines(&["outgoing_relationships", "outgoing"], "→", "to_types");
    let incoming = relationship_lines(&["incoming_relationships", "incoming"], "←", "from_types");
    if !outgoing.is_empty() || !incoming.is_empty() {
        out.push_str("\nRelationships:\n");
        for line in outgoing.iter().chain(incoming.iter()) {
            out.push_str(line);
            out.push('\n');
        }
    }
    Some(out)
}

fn relationship_types(arguments: &Value, json: &Value, rows: usize) -> Option<String> {
    let items = list_under(json, &["relationships", "relationship_types", "items"])?;
    let maps: Vec<&Map<String, Value>> = items.iter().filter_map(Value::as_object).collect();
    let is_relationship_list = maps
        .iter()
        .all(|m| m.contains_key("from_types") && m.contains_key("to_types"))
        && (!maps.is_empty()
            || json.get("relationships").is_some()
            || json.get("relationship_types").is_some());
    if !is_relationship_list {
        return None;
    }
    let from = arguments.get("from_type").and_then(Value::as_str);
    let to = arguments.get("to_type").and_then(Value::as_str);
    let scope = match (from, to) {
        (Some(from), Some(to)) => format!(" from {from} to {to}"),
        (Some(from), None) => format!(" from {from}"),
        (None, Some(to)) => format!(" to {to}"),
        (None, None) => String::new(),
    };
    if maps.is_empty() {
        return Some(format!("No relationship types are defined{scope}."));
    }
    let mut out = if scope.is_empty() {
        format!(
            "The schema defines {}:\n\n",
            count_noun(maps.len(), "relationship type")
        )
    } else {
        format!(
            "You can create {}{scope}:\n\n",
            if maps.len() == 1 {
                "one relationship type".to_owned()
            } else {
                count_noun(maps.len(), "relationship type")
            }
        )
    };
    let table_rows: Vec<Vec<String>> = maps
        .iter()
        .map(|m| {
            vec![
                format!("`{}`", text(m, &["name"]).unwrap_or("?")),
                m.get("from_types").map(inline).unwrap_or_default(),
                m.get("to_types").map(inline).unwrap_or_default(),
                text(m, &["description"]).unwrap_or_default().to_owned(),
            ]
        })
        .collect();
    out.push_str(&table(
        &["Relationship", "From", "To", "Description"],
        &table_rows,
        rows,
    ));
    Some(out)
}

fn type_list(json: &Value, rows: usize) -> Option<String> {
    let items = list_under(json, &["types", "object_types"])?;
    let maps: Vec<&Map<String, Value>> = items.iter().filter_map(Value::as_object).collect();
    if maps.is_empty() || !maps.iter().all(|m| is_object_type(m)) {
        return None;
    }
    let mut out = format!(
        "Your knowledge base has {}:\n\n",
        count_noun(maps.len(), "object type")
    );
    let table_rows: Vec<Vec<String>> = maps
        .iter()
        .map(|m| {
            let property_count = m
                .get("properties")
                .and_then(Value::as_array)
                .map(|properties| properties.len().to_string())
                .or_else(|| number(m, &["property_count"]).map(|n| n.to_string()))
                .unwrap_or_default();
            vec![
                format!("**{}**", text(m, &["name"]).unwrap_or("?")),
                text(m, &["description"]).unwrap_or_default().to_owned(),
                property_count,
            ]
        })
        .collect();
    out.push_str(&table(
        &["Type", "Description", "Properties"],
        &table_rows,
        rows,
    ));
    if let Some(relationships) = json
        .get("relationship_types")
        .or(json.get("relationships"))
        .and_then(Value::as_array)
        .filter(|r| !r.is_empty())
    {
        let names: Vec<String> = relationships
            .iter()
            .filter_map(|r| {
                r.get("name")
                    .and_then(Value::as_str)
                    .map(|n| format!("`{n}`"))
            })
            .collect();
        out.push_str(&format!(
            "\nThey are connected by {}: {}.\n",
            count_noun(names.len(), "relationship type"),
            names.join(", ")
        ));
    }
    out.push_str("\nAsk about any of them, e.g. \"Tell me about the ");
    out.push_str(text(maps[0], &["name"]).unwrap_or("Document"));
    out.push_str(" type\".\n");
    Some(out)
}

/// A traversal's result: `{start, reached: [{object, depth, via}]}` or a plain list of
/// reached objects.
fn reached_objects(json: &Value, context: &RenderContext, rows: usize) -> Option<String> {
    let reached = list_under(json, &["reached", "results", "neighbors", "neighbours"])?;
    let has_via = !reached.is_empty() && reached.iter().all(|r| r.get("via").is_some());
    if json.get("reached").is_none() && json.get("start").is_none() && !has_via {
        return None;
    }
    let start_name = json
        .get("start")
        .and_then(Value::as_object)
        .and_then(object_display_name)
        .or_else(|| context.looked_up.as_ref().map(|object| object.name.clone()))
        .unwrap_or_else(|| "The start object".to_owned());
    let start_type = json
        .get("start")
        .and_then(|start| start.get("type"))
        .and_then(Value::as_str)
        .map(str::to_lowercase)
        .or_else(|| {
            context
                .looked_up
                .as_ref()
                .and_then(|o| o.type_hint.as_ref())
                .map(|t| t.to_lowercase())
        });
    let subject = match start_type {
        Some(type_name) => format!("The **{start_name}** {type_name}"),
        None => format!("**{start_name}**"),
    };
    let mut target_types: Vec<String> = reached
        .iter()
        .filter_map(|r| {
            r.get("object")
                .unwrap_or(r)
                .get("type")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    target_types.dedup();
    let noun = match target_types.as_slice() {
        [only] => only.to_lowercase(),
        _ => "object".to_owned(),
    };
    if reached.is_empty() {
        return Some(format!("{subject} is not related to any {noun}."));
    }
    let mut out = format!(
        "{subject} is related to {}:\n\n",
        count_noun(reached.len(), &noun)
    );
    for item in reached.iter().take(rows) {
        let object = item.get("object").unwrap_or(item);
        let name = object
            .as_object()
            .and_then(object_display_name)
            .unwrap_or_else(|| inline(object.get("id").unwrap_or(&Value::Null)));
        let mut details = Vec::new();
        if target_types.len() > 1
            && let Some(type_name) = object.get("type").and_then(Value::as_str)
        {
            details.push(type_name.to_owned());
        }
        if let Some(via) = item.get("via") {
            let relationship = via
                .get("type")
                .or(via.get("relationship_type"))
                .or(via.get("name"))
                .map(inline)
                .unwrap_or_else(|| inline(via));
            details.push(format!("via `{relationship}`"));
        }
        if let Some(status) = object
            .get("properties")
            .and_then(|p| p.get("status"))
            .and_then(Value::as_str)
        {
            details.push(status.to_owned());
        }
        out.push_str(&format!("- **{name}**"));
        if !details.is_empty() {
            out.push_str(&format!(" ({})", details.join(", ")));
        }
        out.push('\n');
    }
    if reached.len() > rows {
        out.push_str(&format!("\n… and {} more.\n", reached.len() - rows));
    }
    if json.get("truncated").and_then(Value::as_bool) == Some(true) {
        out.push_str("\nThe traversal stopped at its result limit; there may be more.\n");
    }
    Some(out)
}

fn counts(arguments: &Value, json: &Value, rows: usize) -> Option<String> {
    let map = json.as_object()?;
    let total = number(map, &["total", "count"])?;
    if map
        .values()
        .any(|v| matches!(v, Value::Array(items) if items.iter().any(|i| i.get("id").is_some())))
    {
        return None;
    }
    let type_name = arguments
        .get("type")
        .and_then(Value::as_str)
        .or(text(map, &["type"]))
        .unwrap_or("matching");
    let mut out = format!(
        "There {} {}.",
        if total == 1 { "is" } else { "are" },
        count_noun(total as usize, &format!("{type_name} object"))
    );
    if let Some(groups) = map
        .get("groups")
        .and_then(Value::as_array)
        .filter(|g| !g.is_empty())
    {
        let group_by = arguments
            .get("group_by")
            .and_then(Value::as_str)
            .unwrap_or("value");
        let table_rows: Vec<Vec<String>> = groups
            .iter()
            .map(|g| {
                vec![
                    g.get("value").map(inline).unwrap_or_default(),
                    g.get("count").map(inline).unwrap_or_default(),
                ]
            })
            .collect();
        let header = capitalised(group_by);
        out.push_str(&format!(
            "\n\nBy {group_by}:\n\n{}",
            table(&[header.as_str(), "Count"], &table_rows, rows)
        ));
    }
    Some(out)
}

fn object_list(tool: &str, arguments: &Value, json: &Value, rows: usize) -> Option<String> {
    let items = list_under(json, &["objects", "items", "results"])?;
    let type_name = arguments.get("type").and_then(Value::as_str);
    if items.is_empty() {
        return (json.get("objects").is_some() || tool.contains("find"))
            .then(|| format!("I found no {} objects.", type_name.unwrap_or("matching")));
    }
    let maps: Vec<&Map<String, Value>> = items.iter().filter_map(Value::as_object).collect();
    if maps.len() != items.len() || !maps.iter().all(|m| m.contains_key("id")) {
        return None;
    }
    // Name first, then the id, then the other scalar properties (timestamps left out).
    let mut columns: Vec<String> = Vec::new();
    for map in &maps {
        let properties = map.get("properties").and_then(Value::as_object);
        for (key, value) in properties.into_iter().flatten() {
            let is_name = NAME_KEYS.contains(&key.as_str());
            if !is_name && !columns.contains(key) && value_is_cell(value) {
                columns.push(key.clone());
            }
        }
    }
    columns.truncate(4);
    let mut headers = vec!["Name".to_owned(), "Id".to_owned()];
    if type_name.is_none() {
        headers.push("Type".to_owned());
    }
    headers.extend(columns.iter().map(|c| capitalised(&c.replace('_', " "))));
    let table_rows: Vec<Vec<String>> = maps
        .iter()
        .map(|map| {
            let properties = map.get("properties").and_then(Value::as_object);
            let mut row = vec![
                object_display_name(map)
                    .map(|name| format!("**{name}**"))
                    .unwrap_or_default(),
                text(map, &["id"]).unwrap_or_default().to_owned(),
            ];
            if type_name.is_none() {
                row.push(text(map, &["type"]).unwrap_or_default().to_owned());
            }
            for column in &columns {
                row.push(
                    properties
                        .and_then(|p| p.get(column))
                        .map(inline)
                        .unwrap_or_default(),
                );
            }
            row
        })
        .collect();
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut out = format!(
        "I found {}:\n\n",
        count_noun(
            items.len(),
            &format!("{} object", type_name.unwrap_or("matching"))
        )
    );
    out.push_str(&table(&header_refs, &table_rows, rows));
    if json
        .get("next_cursor")
        .or(json.get("nextCursor"))
        .is_some_and(|c| !c.is_null())
    {
        out.push_str("\nThere are more; ask for the next page to see them.\n");
    }
    Some(out)
}

fn value_is_cell(value: &Value) -> bool {
    super::markdown::is_scalar(value) && !value.is_null()
}
