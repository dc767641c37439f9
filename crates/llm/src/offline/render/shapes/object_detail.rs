//! Renderings of one object and of a path between two: an object with its properties and its
//! relationships (`{object, outgoing, incoming}`), and a chain of relationships
//! (`{found, steps, summary}`).

use serde_json::{Map, Value};

use super::text;
use crate::offline::known_values::{NAME_KEYS, object_display_name};
use crate::offline::render::markdown::{count_noun, humanize_key, inline, is_scalar};

/// One object: `{object: {id, type, properties}, outgoing: [link], incoming: [link]}`, each
/// link `{type, other_id, other_type, other_label}`.
pub(super) fn one_object(json: &Value, rows: usize) -> Option<String> {
    let object = json.get("object")?.as_object()?;
    let outgoing = json.get("outgoing")?.as_array()?;
    let incoming = json.get("incoming")?.as_array()?;
    let id = text(object, &["id"])?;
    let name = object_display_name(object).unwrap_or_else(|| id.to_owned());
    let mut out = match text(object, &["type"]) {
        Some(type_name) => format!("**{name}** is a {type_name} (`{id}`).\n"),
        None => format!("**{name}** (`{id}`)\n"),
    };
    let properties: Vec<(&String, &Value)> = object
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(key, value)| !NAME_KEYS.contains(&key.as_str()) && is_scalar(value))
        .filter(|(_, value)| !value.is_null())
        .collect();
    if !properties.is_empty() {
        out.push('\n');
        for (key, value) in properties {
            out.push_str(&format!("- **{}**: {}\n", humanize_key(key), inline(value)));
        }
    }
    let total = outgoing.len() + incoming.len();
    if total == 0 {
        out.push_str(&format!("\n**{name}** has no relationships.\n"));
        return Some(out);
    }
    out.push_str(&format!(
        "\nIt has {}:\n\n",
        count_noun(total, "relationship")
    ));
    let links = outgoing
        .iter()
        .map(|link| (true, link))
        .chain(incoming.iter().map(|link| (false, link)));
    for (forward, link) in links.take(rows) {
        let Some(link) = link.as_object() else {
            continue;
        };
        let kind = text(link, &["type", "relationship_type"]).unwrap_or("related");
        let other = other_end(link);
        if forward {
            out.push_str(&format!("- {name} `{kind}` → {other}\n"));
        } else {
            out.push_str(&format!("- {other} `{kind}` → {name}\n"));
        }
    }
    if total > rows {
        out.push_str(&format!("\n… and {} more.\n", total - rows));
    }
    Some(out)
}

/// A path: `{found, steps: [{relationship, forward, object}], summary}`; `from_name` is the
/// start object's name when the planner knows it.
pub(super) fn path(json: &Value, from_name: Option<&str>) -> Option<String> {
    let map = json.as_object()?;
    let found = map.get("found")?.as_bool()?;
    let steps = map.get("steps")?.as_array()?;
    let summary = text(map, &["summary"]);
    if !found {
        return Some(match summary {
            Some(summary) => format!("{}.", summary.trim_end_matches('.')),
            None => "No path connects them.".to_owned(),
        });
    }
    let to_name = steps
        .last()
        .and_then(|step| step.get("object"))
        .and_then(Value::as_object)
        .and_then(object_display_name);
    let subject = match (from_name, to_name) {
        (Some(from), Some(to)) => format!("**{from}** and **{to}** are"),
        _ => "They are".to_owned(),
    };
    let mut out = format!(
        "{subject} connected by {}",
        count_noun(steps.len(), "relationship")
    );
    if let Some(summary) = summary {
        out.push_str(&format!(": {summary}\n"));
        return Some(out);
    }
    out.push_str(":\n\n");
    for step in steps {
        let kind = step
            .get("relationship")
            .and_then(|relationship| relationship.get("type"))
            .map(inline)
            .unwrap_or_default();
        let arrow = if step.get("forward").and_then(Value::as_bool) == Some(false) {
            "←"
        } else {
            "→"
        };
        let object = step
            .get("object")
            .and_then(Value::as_object)
            .map(named_object)
            .unwrap_or_default();
        out.push_str(&format!("- {arrow} `{kind}` {object}\n"));
    }
    Some(out)
}

fn other_end(link: &Map<String, Value>) -> String {
    let label = text(link, &["other_label"]).or(text(link, &["other_id"]));
    let label = label.unwrap_or("an object");
    match text(link, &["other_type"]) {
        Some(type_name) => format!("**{label}** ({type_name})"),
        None => format!("**{label}**"),
    }
}

fn named_object(object: &Map<String, Value>) -> String {
    let name = object_display_name(object)
        .or_else(|| text(object, &["id"]).map(str::to_owned))
        .unwrap_or_default();
    match text(object, &["type"]) {
        Some(type_name) => format!("**{name}** ({type_name})"),
        None => format!("**{name}**"),
    }
}
