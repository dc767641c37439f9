//! Renderings of the graph's objects: objects reached by a traversal, counts (grouped or
//! not) and lists of objects as tables.

use serde_json::{Map, Value};

use super::{list_under, number, text};
use crate::offline::known_values::{NAME_KEYS, object_display_name};
use crate::offline::render::RenderContext;
use crate::offline::render::generic::capitalised;
use crate::offline::render::markdown::{count_noun, inline, table};

/// A traversal's result: `{start, reached: [{object, depth, via}]}` or a plain list of
/// reached objects.
pub(super) fn reached_objects(
    json: &Value,
    context: &RenderContext,
    rows: usize,
) -> Option<String> {
    let reached = list_under(json, &["reached", "results", "neighbors", "neighbours"])?;
    let has_via = !reached.is_empty() && reached.iter().all(|r| r.get("via").is_some());
    if json.get("reached").is_none() && json.get("start").is_none() && !has_via {
        return None;
    }
    let subject = traversal_subject(json, context);
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
    let asked_type = json.get("target_type").and_then(Value::as_str);
    let noun = match (target_types.as_slice(), asked_type) {
        ([only], _) => only.to_lowercase(),
        ([], Some(asked)) => asked.to_lowercase(),
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
        out.push_str(&reached_line(item, target_types.len() > 1));
    }
    if reached.len() > rows {
        out.push_str(&format!("\n… and {} more.\n", reached.len() - rows));
    }
    if json.get("truncated").and_then(Value::as_bool) == Some(true) {
        out.push_str("\nThe traversal stopped at its result limit; there may be more.\n");
    }
    Some(out)
}

/// "The **Apollo** project": the traversal's start, named from the answer or the lookup.
fn traversal_subject(json: &Value, context: &RenderContext) -> String {
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
    match start_type {
        Some(type_name) => format!("The **{start_name}** {type_name}"),
        None => format!("**{start_name}**"),
    }
}

/// One reached object: its name, then its type (when several were reached), how it was
/// reached and its status.
fn reached_line(item: &Value, show_type: bool) -> String {
    let object = item.get("object").unwrap_or(item);
    let name = object
        .as_object()
        .and_then(object_display_name)
        .unwrap_or_else(|| inline(object.get("id").unwrap_or(&Value::Null)));
    let mut details = Vec::new();
    if show_type && let Some(type_name) = object.get("type").and_then(Value::as_str) {
        details.push(type_name.to_owned());
    }
    if let Some(via) = item.get("via") {
        let relationship = via
            .get("type")
            .or(via.get("relationship_type"))
            .or(via.get("name"))
            .map(inline)
            .unwrap_or_else(|| inline(via));
        let depth = item.get("depth").and_then(Value::as_u64).unwrap_or(1);
        details.push(if depth > 1 {
            format!("{depth} relationships away, the last `{relationship}`")
        } else {
            format!("via `{relationship}`")
        });
    }
    if let Some(status) = object
        .get("properties")
        .and_then(|p| p.get("status"))
        .and_then(Value::as_str)
    {
        details.push(status.to_owned());
    }
    let mut line = format!("- **{name}**");
    if !details.is_empty() {
        line.push_str(&format!(" ({})", details.join(", ")));
    }
    line.push('\n');
    line
}

pub(super) fn counts(arguments: &Value, json: &Value, rows: usize) -> Option<String> {
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

pub(super) fn object_list(
    tool: &str,
    arguments: &Value,
    json: &Value,
    rows: usize,
) -> Option<String> {
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
    crate::offline::render::markdown::is_scalar(value) && !value.is_null()
}
