//! The offline planner's decision for one turn: call a tool (first step, or the next step of a
//! lookup-then-act plan) or answer from the results gathered so far, or — when no tool fits
//! well enough — say plainly what it can do.
//!
//! Questions about objects named without their type go to `object_plan` (look the names up
//! across types first).
//!
//! Deterministic: the same history and tools always give the same decision. Stateless: the
//! plan is re-derived each turn from the question (with names learnt only from results that
//! came *before* the question, so the plan cannot shift under its own results).

use chrono::NaiveDate;
use serde_json::{Map, Value, json};
use switchboard_core::ToolSpec;

use super::arguments::{Binding, bind_arguments};
use super::conversation::{ConversationView, ToolOutcome};
use super::filter_plan;
use super::help;
use super::known_values::{KnownValues, object_display_name};
use super::mentions::{Mentions, ObjectMention};
use super::object_plan;
use super::refusal::is_unsupported_action;
use super::render::{self, RenderContext};
use super::text::{stem, synonyms, words};
use super::tool_index::{QueryTerms, RankedTool, ToolIndex, base_name};
use crate::config::OfflinePlannerConfig;
use crate::provider::{LlmRequest, ToolChoice};

/// What the planner does this turn.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PlannerDecision {
    CallTools(Vec<PlannedCall>),
    Answer(String),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlannedCall {
    pub tool_name: String,
    pub arguments: Map<String, Value>,
}

/// The tool chosen for the question and how its arguments are bound.
#[derive(Clone, Debug)]
pub(crate) struct Intent<'a> {
    pub tool: &'a ToolSpec,
    pub binding: Binding,
    pub confidence: f64,
}

/// Score → confidence in 0..1; a score of about 1.5 (one good name word) reaches 0.3.
const CONFIDENCE_SCALE: f64 = 4.0;
const BOUND_ARGUMENT_BONUS: f64 = 0.8;
/// A bare listing of a named type: enough to act on, never more than a matched tool.
const LISTING_CONFIDENCE: f64 = 0.5;
/// Pages of a lookup read before giving up on finding a name.
const MAX_LOOKUP_PAGES: usize = 4;
pub(crate) const MUTATING_VERBS: &[&str] = &[
    "create", "delete", "remove", "update", "set", "write", "insert", "drop", "put", "patch",
    "modify", "edit", "rename", "upsert", "move",
];

pub(crate) fn decide(
    request: &LlmRequest,
    config: &OfflinePlannerConfig,
    today: NaiveDate,
) -> PlannerDecision {
    let view = ConversationView::read(&request.messages);
    if view.question.trim().is_empty() {
        return PlannerDecision::Answer(help::introduction(&request.tools));
    }
    let tools_usable = !request.tools.is_empty() && request.tool_choice != ToolChoice::None;
    if !tools_usable {
        return PlannerDecision::Answer(if view.this_turn.is_empty() {
            help::without_tools(&request.tools)
        } else {
            render::answer(&view.this_turn, &RenderContext::default(), config)
        });
    }
    let known = KnownValues::gather(&request.tools, view.earlier_results.iter());
    let mentions = Mentions::read(&view.question, &known, today);
    let forced = matches!(request.tool_choice, ToolChoice::Function { .. });
    if !forced && view.this_turn.is_empty() && is_unsupported_action(&mentions, &request.tools) {
        return PlannerDecision::Answer(help::low_confidence(&request.tools));
    }
    let intent = select_intent(request, &mentions, &known, config);
    let listing_fits = intent.as_ref().is_none_or(|intent| {
        filter_plan::filtering_tool(&request.tools)
            .is_some_and(|tool| tool.name == intent.tool.name)
    });
    if !forced
        && let Some(decision) =
            filter_plan::decide(&request.tools, &mentions, &view, listing_fits, config)
    {
        return decision;
    }
    let view = filter_plan::without_schema_lookup(
        &request.tools,
        &view,
        intent.as_ref().map(|intent| intent.tool.name.as_str()),
    );
    if !forced
        && let Some(question) = object_plan::read(&mentions, &known, &request.tools)
        && object_plan_goes_first(intent.as_ref(), &question, &request.tools)
    {
        return object_plan::decide(&question, request, &view, &known, config, today);
    }
    match (intent, view.this_turn.is_empty()) {
        (Some(intent), true) => first_step(&intent, &request.tools, &known),
        (None, true) => PlannerDecision::Answer(help::low_confidence(&request.tools)),
        (Some(intent), false) => next_step(&intent, &request.tools, &view.this_turn, config),
        (None, false) => PlannerDecision::Answer(render::answer(
            &view.this_turn,
            &RenderContext::default(),
            config,
        )),
    }
}

/// Whether a question naming objects is planned as an object question rather than with the
/// ranked tool: yes when no tool fits, or when the best fit is a tool of the graph's own server
/// (a schema tool answering about a type would miss the object) unless a typed lookup fits.
/// A confident tool of another server wins: "Count the zebras in the zoo" is the zoo's tool,
/// not a search for an object called "zoo".
fn object_plan_goes_first(
    intent: Option<&Intent<'_>>,
    question: &object_plan::ObjectQuestion,
    tools: &[ToolSpec],
) -> bool {
    let Some(intent) = intent else {
        return true;
    };
    let server_of = |name: &str| name.rsplit_once("__").map(|(server, _)| server.to_owned());
    let graph_server = object_plan::search_tool(tools).and_then(|tool| server_of(&tool.name));
    !question.typed_lookup_fits && server_of(&intent.tool.name) == graph_server
}

/// Ranks the offered tools and picks the best one whose arguments can be bound, honouring
/// `tool_choice`. `None` when nothing reaches the confidence threshold.
pub(crate) fn select_intent<'a>(
    request: &'a LlmRequest,
    mentions: &Mentions,
    known: &KnownValues,
    config: &OfflinePlannerConfig,
) -> Option<Intent<'a>> {
    let lookup_available = lookup_tool(&request.tools).is_some()
        || mentions
            .objects
            .iter()
            .any(|object| known_object_id(known, object).is_some());
    if let ToolChoice::Function { name } = &request.tool_choice {
        let tool = request.tools.iter().find(|tool| &tool.name == name)?;
        let bound = bind_arguments(tool, mentions, lookup_available);
        let binding = match bound.binding {
            Binding::Unsatisfiable { .. } => Binding::Complete(Map::new()),
            other => other,
        };
        return Some(Intent {
            tool,
            binding,
            confidence: 1.0,
        });
    }
    let excluded: Vec<String> = mentions
        .types
        .iter()
        .chain(&mentions.guessed_types)
        .chain(mentions.objects.iter().map(|object| &object.name))
        .chain(&mentions.paths.paths)
        .chain(&mentions.paths.patterns)
        .flat_map(|name| words(name))
        .map(|word| stem(&word))
        .collect();
    let mut terms = QueryTerms::from_question_excluding(&mentions.question, &excluded);
    add_path_kind_terms(&mut terms, mentions);
    let ranked: Vec<RankedTool<'a>> = ToolIndex::new(&request.tools).rank(&terms);
    let best = best_candidate(request, ranked, mentions, lookup_available)?;
    // "delete the file X" with no delete tool must not read the file instead.
    if MUTATING_VERBS.contains(&mentions.leading_verb.as_str())
        && !(is_mutating(best.tool) && mutation_requested(best.tool, mentions))
    {
        return None;
    }
    let required = request.tool_choice == ToolChoice::Required;
    (required || best.confidence >= config.confidence_threshold).then_some(best)
}

/// The best-scoring usable tool. One that takes nothing from the question ("list published
/// documents" → a tool named "list …") loses to the best one that does, then to a listing of
/// the type the question names.
fn best_candidate<'a>(
    request: &'a LlmRequest,
    ranked: Vec<RankedTool<'a>>,
    mentions: &Mentions,
    lookup_available: bool,
) -> Option<Intent<'a>> {
    let mut best: Option<(Intent<'a>, f64, bool)> = None;
    let mut best_binding: Option<(Intent<'a>, f64)> = None;
    for candidate in ranked {
        if candidate.score <= 0.0
            || is_mutating(candidate.tool) && !mutation_requested(candidate.tool, mentions)
        {
            continue;
        }
        let bound = bind_arguments(candidate.tool, mentions, lookup_available);
        if matches!(bound.binding, Binding::Unsatisfiable { .. }) {
            continue;
        }
        let score = candidate.score + BOUND_ARGUMENT_BONUS * bound.from_question as f64;
        let intent = Intent {
            tool: candidate.tool,
            binding: bound.binding,
            confidence: 1.0 - (-score / CONFIDENCE_SCALE).exp(),
        };
        if bound.from_question > 0 && best_binding.as_ref().is_none_or(|(_, top)| score > *top) {
            best_binding = Some((intent.clone(), score));
        }
        if best.as_ref().is_none_or(|(_, top, _)| score > *top) {
            best = Some((intent, score, bound.from_question == 0));
        }
    }
    match best {
        Some((best, _, false)) => Some(best),
        other => best_binding
            .map(|(intent, _)| intent)
            .or_else(|| listing_of_a_type(request, mentions, lookup_available))
            .or(other.map(|(intent, _, _)| intent)),
    }
}

/// "show all people", "list the tags", "5 documents": a type and nothing else to go on is a
/// listing of that type with the lookup tool.
fn listing_of_a_type<'a>(
    request: &'a LlmRequest,
    mentions: &Mentions,
    lookup_available: bool,
) -> Option<Intent<'a>> {
    // "tell me a joke" asks for one thing, not a listing of a kind.
    let one_thing = mentions.types.is_empty()
        && mentions.guessed_types.iter().all(|guess| {
            let guess = guess.to_lowercase();
            let question = mentions.question.to_lowercase();
            question.contains(&format!("a {guess}")) || question.contains(&format!("an {guess}"))
        });
    if one_thing {
        return None;
    }
    let tool = lookup_tool(&request.tools)?;
    let bound = bind_arguments(tool, mentions, lookup_available);
    matches!(bound.binding, Binding::Complete(_)).then_some(Intent {
        tool,
        binding: bound.binding,
        confidence: LISTING_CONFIDENCE,
    })
}

/// A path with an extension is about a file, one without about a directory: say so to the
/// ranking ("what files are in /home/ana" lists a directory, it does not read a file).
fn add_path_kind_terms(terms: &mut QueryTerms, mentions: &Mentions) {
    const PATH_KIND_WEIGHT: f64 = 1.0;
    for path in &mentions.paths.paths {
        let last = path
            .trim_end_matches(['/', '\\'])
            .rsplit(['/', '\\'])
            .next();
        let kind = if last.is_some_and(|name| name.contains('.')) {
            "file"
        } else {
            "directory"
        };
        let weight = terms.weights.entry(kind.to_owned()).or_default();
        *weight = weight.max(PATH_KIND_WEIGHT);
    }
}

fn is_mutating(tool: &ToolSpec) -> bool {
    words(base_name(&tool.name))
        .first()
        .is_some_and(|verb| MUTATING_VERBS.contains(&stem(verb).as_str()))
}

/// A write tool is only chosen when the question starts with its verb ("create a …").
fn mutation_requested(tool: &ToolSpec, mentions: &Mentions) -> bool {
    words(base_name(&tool.name)).first().is_some_and(|verb| {
        let verb = stem(verb);
        verb == mentions.leading_verb || synonyms(&mentions.leading_verb).contains(&verb.as_str())
    })
}

pub(crate) fn first_step(
    intent: &Intent<'_>,
    tools: &[ToolSpec],
    known: &KnownValues,
) -> PlannerDecision {
    match &intent.binding {
        Binding::Complete(arguments) => call(intent.tool, arguments.clone()),
        Binding::NeedsLookup {
            arguments,
            id_parameter,
            object,
        } => {
            if let Some(id) = known_object_id(known, object) {
                let mut arguments = arguments.clone();
                arguments.insert(id_parameter.clone(), json!(id));
                return call(intent.tool, arguments);
            }
            match (lookup_tool(tools), &object.type_hint) {
                (Some(lookup), Some(type_name)) => {
                    call(lookup, lookup_arguments(lookup, type_name, None))
                }
                _ => PlannerDecision::Answer(help::which_type_is(&object.name)),
            }
        }
        Binding::Unsatisfiable { .. } => PlannerDecision::Answer(help::low_confidence(tools)),
    }
}

pub(crate) fn next_step(
    intent: &Intent<'_>,
    tools: &[ToolSpec],
    outcomes: &[ToolOutcome],
    config: &OfflinePlannerConfig,
) -> PlannerDecision {
    let main_outcomes: Vec<&ToolOutcome> = outcomes
        .iter()
        .filter(|outcome| outcome.tool_name == intent.tool.name)
        .collect();
    let mut context = RenderContext::default();
    if let Binding::NeedsLookup { object, .. } = &intent.binding {
        context.looked_up = Some(object.clone());
    }
    if outcomes.iter().any(|outcome| outcome.is_error) {
        return PlannerDecision::Answer(render::answer(outcomes, &context, config));
    }
    if let Some(last_main) = main_outcomes.last() {
        if main_outcomes.len() == 1
            && let Some(swapped) = swapped_direction(last_main)
        {
            return call(intent.tool, swapped);
        }
        // After a lookup, or a retry the other way round, only the final answer matters.
        let shown: Vec<ToolOutcome> = outcomes
            .iter()
            .filter(|outcome| context.looked_up.is_none() || outcome.tool_name == intent.tool.name)
            .filter(|outcome| {
                main_outcomes.len() < 2
                    || !outcome.json.as_ref().is_some_and(render::is_empty_result)
            })
            .cloned()
            .collect();
        return PlannerDecision::Answer(render::answer(&shown, &context, config));
    }
    let Binding::NeedsLookup {
        arguments,
        id_parameter,
        object,
    } = &intent.binding
    else {
        return PlannerDecision::Answer(render::answer(outcomes, &context, config));
    };
    let Some(lookup) = lookup_tool(tools) else {
        return PlannerDecision::Answer(render::answer(outcomes, &context, config));
    };
    let lookups: Vec<&ToolOutcome> = outcomes
        .iter()
        .filter(|outcome| outcome.tool_name == lookup.name)
        .collect();
    let Some(last_lookup) = lookups.last() else {
        return PlannerDecision::Answer(render::answer(outcomes, &context, config));
    };
    let candidates = objects_in(last_lookup.json.as_ref());
    if let Some(id) = best_name_match(&candidates, &object.name) {
        let mut arguments = arguments.clone();
        arguments.insert(id_parameter.clone(), json!(id));
        return call(intent.tool, arguments);
    }
    let cursor = last_lookup.json.as_ref().and_then(next_cursor);
    match (cursor, &object.type_hint) {
        (Some(cursor), Some(type_name)) if lookups.len() < MAX_LOOKUP_PAGES => {
            call(lookup, lookup_arguments(lookup, type_name, Some(cursor)))
        }
        _ => {
            let seen: Vec<String> = lookups
                .iter()
                .flat_map(|outcome| objects_in(outcome.json.as_ref()))
                .map(|(_, name)| name)
                .collect();
            PlannerDecision::Answer(help::object_not_found(object, &seen))
        }
    }
}

fn call(tool: &ToolSpec, arguments: Map<String, Value>) -> PlannerDecision {
    PlannerDecision::CallTools(vec![PlannedCall {
        tool_name: tool.name.clone(),
        arguments,
    }])
}

/// A tool that lists objects of a type: `find_objects`, or any `find`/`search`/`list` tool
/// with a type parameter.
pub(crate) fn lookup_tool(tools: &[ToolSpec]) -> Option<&ToolSpec> {
    let has_type_parameter = |tool: &ToolSpec| {
        tool.parameters
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|properties| properties.contains_key("type"))
    };
    tools
        .iter()
        .find(|tool| base_name(&tool.name) == "find_objects")
        .or_else(|| {
            tools.iter().find(|tool| {
                let name_words = words(base_name(&tool.name));
                has_type_parameter(tool)
                    && name_words
                        .iter()
                        .any(|word| ["find", "search", "list"].contains(&word.as_str()))
            })
        })
}

fn lookup_arguments(
    lookup: &ToolSpec,
    type_name: &str,
    cursor: Option<String>,
) -> Map<String, Value> {
    let mut arguments = Map::new();
    arguments.insert("type".into(), json!(type_name));
    if let Some(limit) = super::parameters::parameters(lookup)
        .into_iter()
        .find(|parameter| parameter.name == "limit")
    {
        let maximum = limit
            .maximum
            .as_ref()
            .and_then(Value::as_u64)
            .unwrap_or(100);
        arguments.insert("limit".into(), json!(maximum.min(100)));
    }
    if let Some(cursor) = cursor {
        arguments.insert("cursor".into(), json!(cursor));
    }
    arguments
}

fn known_object_id<'k>(known: &'k KnownValues, object: &ObjectMention) -> Option<&'k str> {
    known
        .objects
        .iter()
        .find(|candidate| {
            candidate.name.eq_ignore_ascii_case(&object.name)
                && object.type_hint.as_ref().is_none_or(|hint| {
                    candidate
                        .type_name
                        .as_ref()
                        .is_none_or(|type_name| type_name.eq_ignore_ascii_case(hint))
                })
        })
        .map(|candidate| candidate.id.as_str())
}

/// `(id, display name)` of every object in a result (any depth).
pub(crate) fn objects_in(result: Option<&Value>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    fn walk(value: &Value, found: &mut Vec<(String, String)>) {
        match value {
            Value::Object(map) => {
                if let Some(id) = map.get("id").and_then(Value::as_str)
                    && let Some(name) = object_display_name(map)
                {
                    found.push((id.to_owned(), name));
                }
                map.values().for_each(|inner| walk(inner, found));
            }
            Value::Array(items) => items.iter().for_each(|inner| walk(inner, found)),
            _ => {}
        }
    }
    if let Some(result) = result {
        walk(result, &mut found);
    }
    found
}

/// Exact (case-insensitive) name first, then a name containing the wanted one.
fn best_name_match(candidates: &[(String, String)], wanted: &str) -> Option<String> {
    let wanted = wanted.to_lowercase();
    candidates
        .iter()
        .find(|(_, name)| name.to_lowercase() == wanted)
        .or_else(|| {
            candidates
                .iter()
                .find(|(_, name)| name.to_lowercase().contains(&wanted))
        })
        .map(|(id, _)| id.clone())
}

fn next_cursor(result: &Value) -> Option<String> {
    ["next_cursor", "nextCursor", "cursor"]
        .iter()
        .find_map(|key| result.get(*key).and_then(Value::as_str))
        .filter(|cursor| !cursor.is_empty())
        .map(str::to_owned)
}

/// A from/to query that found nothing is worth one try the other way round: "between
/// Projects and Documents" when the schema only allows Document → Project.
fn swapped_direction(outcome: &ToolOutcome) -> Option<Map<String, Value>> {
    let arguments = outcome.arguments.as_object()?;
    let from = arguments.get("from_type")?;
    let to = arguments.get("to_type")?;
    if from == to || !render::is_empty_result(outcome.json.as_ref()?) {
        return None;
    }
    let mut swapped = arguments.clone();
    swapped.insert("from_type".into(), to.clone());
    swapped.insert("to_type".into(), from.clone());
    Some(swapped)
}

#[cfg(test)]
#[path = "planner_tests.rs"]
mod tests;
