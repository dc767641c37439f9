//! Generic Markdown for any JSON result: an object's scalar fields as bullets, lists of
//! records as tables (nested `properties` flattened into columns), lists of scalars as
//! bullets, nested objects as indented sub-lists. Used when no shape is recognised.

use serde_json::{Map, Value};

use super::markdown::{humanize_key, inline, is_scalar, table};
use crate::config::OfflinePlannerConfig;

const MAX_COLUMNS: usize = 6;
const MAX_DEPTH: usize = 3;

pub(crate) fn render_json(tool_name: &str, json: &Value, config: &OfflinePlannerConfig) -> String {
    let body = render_value(json, 0, config);
    if body.trim().is_empty() {
        return format!("`{tool_name}` returned an empty result.");
    }
    format!("Here is what `{tool_name}` returned:\n\n{body}")
}

fn render_value(value: &Value, depth: usize, config: &OfflinePlannerConfig) -> String {
    match value {
        Value::Object(map) => render_object(map, depth, config),
        Value::Array(items) if items.is_empty() => "(none)\n".to_owned(),
        Value::Array(items) if items.iter().all(Value::is_object) => {
            records_table(items, config.max_table_rows)
        }
        Value::Array(items) => items
            .iter()
            .take(config.max_table_rows)
            .map(|item| format!("{}- {}\n", indent(depth), inline(item)))
            .collect(),
        scalar => format!("{}\n", inline(scalar)),
    }
}

fn render_object(map: &Map<String, Value>, depth: usize, config: &OfflinePlannerConfig) -> String {
    let mut out = String::new();
    for (key, value) in map {
        if is_scalar(value)
            || value
                .as_array()
                .is_some_and(|items| items.iter().all(is_scalar))
        {
            out.push_str(&format!(
                "{}- **{}**: {}\n",
                indent(depth),
                humanize_key(key),
                inline(value)
            ));
        }
    }
    let objects_first = map
        .iter()
        .filter(|(_, value)| value.is_object())
        .chain(map.iter().filter(|(_, value)| value.is_array()));
    for (key, value) in objects_first {
        let nested = match value {
            Value::Object(inner) if !inner.is_empty() && depth < MAX_DEPTH => {
                render_object(inner, depth + 1, config)
            }
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
                if depth == 0 {
                    format!("\n{}", records_table(items, config.max_table_rows))
                } else {
                    items
                        .iter()
                        .take(config.max_table_rows)
                        .map(|item| format!("{}- {}\n", indent(depth + 1), one_line(item)))
                        .collect()
                }
            }
            _ => continue,
        };
        if depth == 0 && matches!(value, Value::Array(_)) {
            out.push_str(&format!(
                "\n**{}**\n{nested}",
                capitalised(&humanize_key(key))
            ));
        } else {
            out.push_str(&format!(
                "{}- **{}**:\n{nested}",
                indent(depth),
                humanize_key(key)
            ));
        }
    }
    out
}

/// A table of records: columns are the scalar fields in first-seen order, with a nested
/// `properties` object's scalars flattened in.
pub(crate) fn records_table(items: &[Value], max_rows: usize) -> String {
    let flattened: Vec<Map<String, Value>> = items
        .iter()
        .filter_map(Value::as_object)
        .map(flatten_record)
        .collect();
    let mut columns: Vec<String> = Vec::new();
    for record in &flattened {
        for (key, value) in record {
            if !columns.contains(key) && value_fits_a_cell(value) {
                columns.push(key.clone());
            }
        }
    }
    columns.truncate(MAX_COLUMNS);
    if columns.is_empty() {
        return items
            .iter()
            .take(max_rows)
            .map(|item| format!("- {}\n", one_line(item)))
            .collect();
    }
    let headers: Vec<String> = columns
        .iter()
        .map(|c| capitalised(&humanize_key(c)))
        .collect();
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = flattened
        .iter()
        .map(|record| {
            columns
                .iter()
                .map(|column| record.get(column).map(inline).unwrap_or_default())
                .collect()
        })
        .collect();
    table(&header_refs, &rows, max_rows)
}

fn flatten_record(record: &Map<String, Value>) -> Map<String, Value> {
    let mut flat = Map::new();
    for (key, value) in record {
        match value {
            Value::Object(inner) if key == "properties" => {
                for (inner_key, inner_value) in inner {
                    flat.entry(inner_key.clone()).or_insert(inner_value.clone());
                }
            }
            other => {
                flat.insert(key.clone(), other.clone());
            }
        }
    }
    flat
}

fn value_fits_a_cell(value: &Value) -> bool {
    is_scalar(value)
        || value
            .as_array()
            .is_some_and(|items| items.iter().all(is_scalar))
}

/// A record on one line: `name — key: value, key: value`.
fn one_line(item: &Value) -> String {
    match item.as_object() {
        Some(map) => map
            .iter()
            .filter(|(_, value)| value_fits_a_cell(value))
            .map(|(key, value)| format!("{}: {}", humanize_key(key), inline(value)))
            .collect::<Vec<_>>()
            .join(", "),
        None => inline(item),
    }
}

fn indent(depth: usize) -> String {
    "  ".repeat(depth)
}

pub(crate) fn capitalised(text: &str) -> String {
    let mut characters = text.chars();
    match characters.next() {
        Some(first) => first.to_uppercase().chain(characters).collect(),
        None => String::new(),
    }
}
