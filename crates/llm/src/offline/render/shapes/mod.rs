//! Purpose-made renderings for result shapes the planner recognises — those of our
//! knowledge-graph tools, recognised by their fields rather than by tool name so that any
//! server answering in the same shape benefits: a schema version, changelog entries, object
//! types (all or one), relationship types, one object with its relationships, a path between
//! two, objects reached by a traversal, object lists and counts.
//!
//! One module per family of shapes: the schema's history (`schema_history`), its types
//! (`types`), the graph's objects (`objects`) and one object or path (`object_detail`); this module tries the shapes in a fixed order,
//! most specific first, and holds the field readers they share.

mod object_detail;
mod objects;
mod schema_history;
mod types;

use serde_json::{Map, Value};

use super::RenderContext;
use crate::config::OfflinePlannerConfig;
use object_detail::{one_object, path};
use objects::{counts, object_list, reached_objects};
use schema_history::{changelog, schema_version};
use types::{one_type, relationship_types, type_list};

/// The purpose-made rendering of the first family that recognises `json`, or `None` (the
/// caller then renders it generically).
pub(crate) fn render_recognised(
    tool: &str,
    arguments: &Value,
    json: &Value,
    context: &RenderContext,
    config: &OfflinePlannerConfig,
) -> Option<String> {
    let rows = config.max_table_rows;
    let from_name = context
        .looked_up
        .as_ref()
        .map(|object| object.name.as_str());
    schema_version(json)
        .or_else(|| changelog(arguments, json, rows))
        .or_else(|| one_object(json, rows))
        .or_else(|| path(json, from_name))
        .or_else(|| reached_objects(json, context, rows))
        .or_else(|| one_type(arguments, json, rows))
        .or_else(|| type_list(json, rows))
        .or_else(|| relationship_types(arguments, json, rows))
        .or_else(|| counts(arguments, json, rows))
        .or_else(|| object_list(tool, arguments, json, rows))
}

/// The first array of objects under one of `keys`, or the value itself if it is one.
pub(super) fn list_under<'a>(json: &'a Value, keys: &[&str]) -> Option<&'a Vec<Value>> {
    if let Value::Array(items) = json {
        return Some(items);
    }
    keys.iter()
        .find_map(|key| json.get(*key).and_then(Value::as_array))
}

pub(super) fn text<'a>(map: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|key| map.get(*key).and_then(Value::as_str))
        .filter(|text| !text.is_empty())
}

pub(super) fn number(map: &Map<String, Value>, keys: &[&str]) -> Option<u64> {
    keys.iter()
        .find_map(|key| map.get(*key).and_then(Value::as_u64))
}
