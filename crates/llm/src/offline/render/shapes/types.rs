//! Renderings of the schema's types: one object type with its properties and relationships,
//! the list of object types, and relationship types.

use serde_json::{Map, Value};

use super::{list_under, number, text};
use crate::offline::render::generic::capitalised;
use crate::offline::render::markdown::{count_noun, inline, table};

fn is_object_type(map: &Map<String, Value>) -> bool {
    map.contains_key("name")
        && !map.contains_key("from_types")
        && !map.contains_key("id")
        && (map.contains_key("properties") || map.contains_key("description"))
}

pub(super) fn one_type(arguments: &Value, json: &Value, rows: usize) -> Option<String> {
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
    out.push_str(&properties_section(properties, rows));
    let lines = |keys: &[&str], arrow: &str, other_key: &str| {
        relationship_lines(map, json, keys, arrow, other_key)
    };
    let outgoing = lines(&["outgoing_relationships", "outgoing"], "→", "to_types");
    let incoming = lines(&["incoming_relationships", "incoming"], "←", "from_types");
    if !outgoing.is_empty() || !incoming.is_empty() {
        out.push_str("\nRelationships:\n");
        for line in outgoing.iter().chain(incoming.iter()) {
            out.push_str(line);
            out.push('\n');
        }
    }
    Some(out)
}

/// The properties of a type: a table, or a sentence when it has none.
fn properties_section(properties: &[Value], rows: usize) -> String {
    if properties.is_empty() {
        return "It has no properties.\n".to_owned();
    }
    let mut out = format!(
        "{}:\n\n",
        capitalised(&count_noun(properties.len(), "property"))
    );
    let property_rows: Vec<Vec<String>> = properties
        .iter()
        .filter_map(Value::as_object)
        .map(property_row)
        .collect();
    out.push_str(&table(
        &["Property", "Type", "Required", "Description"],
        &property_rows,
        rows,
    ));
    out
}

fn property_row(property: &Map<String, Value>) -> Vec<String> {
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
}

/// One line per relationship of the type listed under the first of `keys` (in the type or
/// beside it), described from the answer's `relationships` when it has them.
fn relationship_lines(
    map: &Map<String, Value>,
    json: &Value,
    keys: &[&str],
    arrow: &str,
    other_key: &str,
) -> Vec<String> {
    let described = |name: &str| -> Option<Map<String, Value>> {
        json.get("relationships")?
            .as_array()?
            .iter()
            .filter_map(Value::as_object)
            .find(|relationship| text(relationship, &["name"]) == Some(name))
            .cloned()
    };
    keys.iter()
        .find_map(|key| map.get(*key).or_else(|| json.get(*key)))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|relationship| match relationship {
            Value::String(name) => match described(name) {
                Some(relationship) => {
                    let other_types = relationship.get(other_key).map(inline).unwrap_or_default();
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
}

pub(super) fn relationship_types(arguments: &Value, json: &Value, rows: usize) -> Option<String> {
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

pub(super) fn type_list(json: &Value, rows: usize) -> Option<String> {
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
