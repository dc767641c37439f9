//! Questions that pick objects by a property value ("which projects are still active?", "the
//! draft documents", "who are the engineers?"): a listing of a type with a filter on the
//! property whose allowed values include a word of the question.
//!
//! The values come from the schema, never from a word list: enum values of the types'
//! properties as a schema tool (`type_info`) reports them. When the conversation has not seen
//! them yet, the first step asks the schema tool for every type; the next step filters with the
//! listing tool (`find_objects` with a `filter`). A value word also says the type when the
//! question does not ("engineers" is a value of Person's `role`). When no word is a value, the
//! question goes back to the ordinary plan. Stateless like the rest of the planner.

use serde_json::{Map, Value, json};
use switchboard_core::ToolSpec;

use super::conversation::{ConversationView, ToolOutcome};
use super::mentions::Mentions;
use super::parameters::parameters;
use super::render::{self, RenderContext};
use super::text::{is_schema_word, is_stop_word, singular, stem, words};
use super::tool_index::base_name;
use crate::config::OfflinePlannerConfig;

/// One enum property of a type, as the schema reports it.
#[derive(Clone, Debug, PartialEq)]
struct EnumProperty {
    type_name: String,
    property: String,
    values: Vec<String>,
}

/// Words that qualify a question without naming a value.
const QUALIFIERS: &[&str] = &[
    "still",
    "currently",
    "now",
    "only",
    "just",
    "also",
    "every",
    "each",
    "right",
    "yet",
];

/// The step for a filter question, or `None` when the question is not one (or no value fits).
pub(crate) fn decide(
    tools: &[ToolSpec],
    mentions: &Mentions,
    view: &ConversationView,
    listing_fits: bool,
    config: &OfflinePlannerConfig,
) -> Option<super::planner::PlannerDecision> {
    use super::planner::PlannerDecision;
    let names_a_type = !mentions.types.is_empty() || !mentions.guessed_types.is_empty();
    if !listing_fits
        || !names_a_type
        || !mentions.objects.is_empty()
        || !mentions.paths.paths.is_empty()
        || super::planner::MUTATING_VERBS.contains(&mentions.leading_verb.as_str())
    {
        return None;
    }
    let listing = filtering_tool(tools)?;
    let schema = schema_tool(tools)?;
    let candidates = candidate_words(mentions);
    // "tell me a joke": a lone singular guess is a thing asked for, not a value to filter by.
    let only_singular_guess = candidates.iter().all(|word| {
        singular(word) == *word
            && mentions
                .guessed_types
                .iter()
                .any(|guess| guess.eq_ignore_ascii_case(word))
    });
    if candidates.is_empty() || only_singular_guess {
        return None;
    }
    let known = enum_properties(view);
    if known.is_empty() {
        let asked = view.this_turn.iter().any(|o| o.tool_name == schema.name);
        return (!asked).then(|| call(schema, Map::new()));
    }
    let Some((property, value)) = matching_value(&known, &candidates, mentions) else {
        // "tell me a joke": the guessed kind is no type of the schema either.
        let schema_types: Vec<&str> = known.iter().map(|p| p.type_name.as_str()).collect();
        let names_no_type = mentions.types.is_empty()
            && !mentions.guessed_types.iter().any(|guess| {
                schema_types
                    .iter()
                    .any(|name| name.eq_ignore_ascii_case(guess))
            });
        return (names_no_type && !types_listed_without_enums(view, mentions))
            .then(|| PlannerDecision::Answer(super::help::low_confidence(tools)));
    };
    if let Some(outcome) = view.this_turn.iter().find(|o| o.tool_name == listing.name) {
        return Some(PlannerDecision::Answer(render::answer(
            std::slice::from_ref(outcome),
            &RenderContext::default(),
            config,
        )));
    }
    let mut arguments = Map::new();
    arguments.insert("type".into(), json!(property.type_name));
    arguments.insert("filter".into(), json!({ property.property.clone(): value }));
    if let Some(limit) = mentions.numbers.first() {
        arguments.insert("limit".into(), json!(limit));
    }
    Some(call(listing, arguments))
}

/// The view without the schema look-up this plan made, for when no value matched and the
/// question goes back to the ordinary plan (the look-up was a step, not the answer).
pub(crate) fn without_schema_lookup(
    tools: &[ToolSpec],
    view: &ConversationView,
    intended_tool: Option<&str>,
) -> ConversationView {
    let mut view = view.clone();
    if let Some(schema) = schema_tool(tools)
        && intended_tool != Some(schema.name.as_str())
    {
        view.this_turn.retain(|outcome| {
            outcome.tool_name != schema.name
                || !outcome.arguments.as_object().is_some_and(Map::is_empty)
        });
    }
    view
}

fn call(tool: &ToolSpec, arguments: Map<String, Value>) -> super::planner::PlannerDecision {
    super::planner::PlannerDecision::CallTools(vec![super::planner::PlannedCall {
        tool_name: tool.name.clone(),
        arguments,
    }])
}

/// A listing tool with `type` and an object `filter` parameter.
pub(crate) fn filtering_tool(tools: &[ToolSpec]) -> Option<&ToolSpec> {
    tools.iter().find(|tool| {
        let names: Vec<String> = parameters(tool).into_iter().map(|p| p.name).collect();
        names.iter().any(|name| name == "type") && names.iter().any(|name| name == "filter")
    })
}

/// The schema tool that describes every type when called without arguments.
fn schema_tool(tools: &[ToolSpec]) -> Option<&ToolSpec> {
    tools.iter().find(|tool| {
        let name_words = words(base_name(&tool.name));
        name_words.iter().any(|word| word == "type")
            && name_words
                .iter()
                .any(|word| word == "info" || word == "describe")
            && parameters(tool).iter().all(|parameter| !parameter.required)
    })
}

/// Words that may be a property value: not a stop word, a schema word or a qualifier.
fn candidate_words(mentions: &Mentions) -> Vec<String> {
    words(&mentions.question)
        .into_iter()
        .filter(|word| {
            word.len() > 2
                && word.chars().all(char::is_alphabetic)
                && !is_stop_word(word)
                && !is_schema_word(word)
                && !QUALIFIERS.contains(&word.as_str())
                && !mentions
                    .types
                    .iter()
                    .any(|name| name.eq_ignore_ascii_case(&singular(word)))
        })
        .collect()
}

/// Whether a guessed type is a schema type that has no enum property (so `known` misses it).
fn types_listed_without_enums(view: &ConversationView, mentions: &Mentions) -> bool {
    let mut names = Vec::new();
    let results = view
        .this_turn
        .iter()
        .filter_map(|outcome| outcome.json.as_ref())
        .chain(view.earlier_results.iter());
    for result in results {
        if let Some(types) = result.get("types").and_then(Value::as_array) {
            names.extend(types.iter().filter_map(|t| t.get("name")?.as_str()));
        }
    }
    mentions
        .guessed_types
        .iter()
        .any(|guess| names.iter().any(|name| name.eq_ignore_ascii_case(guess)))
}

/// The enum properties in schema results of the conversation (this turn's first).
fn enum_properties(view: &ConversationView) -> Vec<EnumProperty> {
    let mut found = Vec::new();
    let results = view
        .this_turn
        .iter()
        .filter_map(|outcome: &ToolOutcome| outcome.json.as_ref())
        .chain(view.earlier_results.iter());
    for result in results {
        collect_enums(result, &mut found);
    }
    found
}

fn collect_enums(value: &Value, found: &mut Vec<EnumProperty>) {
    match value {
        Value::Object(map) => {
            if let (Some(type_name), Some(Value::Array(properties))) = (
                map.get("name").and_then(Value::as_str),
                map.get("properties"),
            ) {
                for property in properties {
                    let Some(name) = property.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let values: Vec<String> = property
                        .get("enum_values")
                        .or_else(|| property.get("enum"))
                        .and_then(Value::as_array)
                        .map(|values| {
                            values
                                .iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
                    let entry = EnumProperty {
                        type_name: type_name.to_owned(),
                        property: name.to_owned(),
                        values,
                    };
                    if !entry.values.is_empty() && !found.contains(&entry) {
                        found.push(entry);
                    }
                }
            }
            map.values().for_each(|inner| collect_enums(inner, found));
        }
        Value::Array(items) => items.iter().for_each(|inner| collect_enums(inner, found)),
        _ => {}
    }
}

/// The property and value a candidate word names, preferring a type the question mentions.
fn matching_value<'k>(
    known: &'k [EnumProperty],
    candidates: &[String],
    mentions: &Mentions,
) -> Option<(&'k EnumProperty, String)> {
    let mentioned = |property: &EnumProperty| {
        mentions
            .types
            .iter()
            .chain(&mentions.guessed_types)
            .any(|name| name.eq_ignore_ascii_case(&property.type_name))
    };
    let matches: Vec<(&EnumProperty, String)> = known
        .iter()
        .flat_map(|property| {
            property
                .values
                .iter()
                .filter(|value| candidates.iter().any(|word| names_value(word, value)))
                .map(move |value| (property, value.clone()))
        })
        .collect();
    let type_given = matches.iter().any(|(property, _)| mentioned(property));
    matches
        .into_iter()
        .find(|(property, _)| !type_given || mentioned(property))
}

/// Whether a question word names an enum value: the same word in any number ("engineers" →
/// `engineer`), or a whole part of a compound value ("review" → `in_review`).
fn names_value(word: &str, value: &str) -> bool {
    let value = value.to_lowercase();
    let word = word.to_lowercase();
    word == value
        || singular(&word) == value
        || stem(&word) == stem(&value)
        || value
            .split(['_', '-', ' '])
            .filter(|part| part.len() > 2)
            .any(|part| part == word && !is_stop_word(part))
}
