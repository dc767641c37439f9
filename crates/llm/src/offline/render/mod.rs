//! The offline planner's answers, built from tool results: a recognised shape (schema
//! version, changelog, type list, one type, relationship types, reached objects, object
//! lists, counts) gets a purpose-made rendering; anything else a generic Markdown rendering
//! of its JSON (bullets for fields, tables for lists of records); failures are said plainly.

mod generic;
mod markdown;
mod shapes;

use serde_json::Value;

use super::conversation::{ToolOutcome, error_message};
use super::mentions::ObjectMention;
use super::tool_index::base_name;
use crate::config::OfflinePlannerConfig;

pub(crate) use markdown::truncate as truncate_text;

/// What the planner knows beyond the results themselves.
#[derive(Clone, Debug, Default)]
pub(crate) struct RenderContext {
    /// The object found by a lookup step, whose neighbourhood the results describe.
    pub looked_up: Option<ObjectMention>,
}

/// The answer for a turn's outcomes.
pub(crate) fn answer(
    outcomes: &[ToolOutcome],
    context: &RenderContext,
    config: &OfflinePlannerConfig,
) -> String {
    if outcomes.is_empty() {
        return "I have no tool results to answer from.".to_owned();
    }
    let sections: Vec<String> = outcomes
        .iter()
        .map(|outcome| render_outcome(outcome, context, config))
        .collect();
    let mut text = sections.join("\n\n");
    while text.ends_with('\n') {
        text.pop();
    }
    text.push('\n');
    text
}

fn render_outcome(
    outcome: &ToolOutcome,
    context: &RenderContext,
    config: &OfflinePlannerConfig,
) -> String {
    if outcome.is_error {
        return format!(
            "I could not get an answer from `{}`: {}",
            outcome.tool_name,
            error_message(outcome).trim_end_matches('.')
        ) + ".";
    }
    let Some(json) = outcome.json.as_ref() else {
        let text = outcome.text.trim();
        return if text.is_empty() {
            format!("`{}` returned nothing.", outcome.tool_name)
        } else {
            markdown::truncate(text, 4_000)
        };
    };
    let tool = base_name(&outcome.tool_name);
    shapes::render_recognised(tool, &outcome.arguments, json, context, config)
        .unwrap_or_else(|| generic::render_json(&outcome.tool_name, json, config))
}

/// True for results that hold nothing: `[]`, `{}`, or an object whose only list is empty.
pub(crate) fn is_empty_result(result: &Value) -> bool {
    match result {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => {
            map.is_empty()
                || (map.values().any(|value| matches!(value, Value::Array(_)))
                    && map.values().all(|value| match value {
                        Value::Array(items) => items.is_empty(),
                        _ => true,
                    }))
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
