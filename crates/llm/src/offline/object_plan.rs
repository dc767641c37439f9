//! Questions about particular objects named without their type ("Which team owns the product
//! roadmap?", "How is Ana Silva related to the platform team?", "Show me the product
//! roadmap"). The planner first looks every name up across all types with the name-search
//! tool (`search_objects`), then:
//! - two objects found → the path between them (`find_path`);
//! - one object and a type asked for ("which team …", "who …" → a person type) → a traversal
//!   to that type, one relationship further at a time, up to three;
//! - one object alone → the object with its properties and relationships (`get_object`).
//!
//! A name the search does not find is said plainly and never passed on as a type; names that
//! turn out to be types (the search result lists the schema's types) send the question back
//! to the ordinary tool ranking. Stateless like the rest of the planner: each turn re-reads the
//! question and finds the steps already taken among this turn's results.

use serde_json::{Map, Value, json};
use switchboard_core::ToolSpec;

use super::conversation::{ConversationView, ToolOutcome};
use super::help;
use super::known_values::KnownValues;
use super::mentions::{Mentions, ObjectMention};
use super::planner::{self, PlannedCall, PlannerDecision};
use super::render::{self, RenderContext};
use super::text::{is_stop_word, stem, synonyms, words};
use super::tokens::{Token, tokenize};
use super::tool_index::base_name;
use crate::config::OfflinePlannerConfig;
use crate::provider::LlmRequest;

/// Objects a question can be about at once (two: "how is X related to Y").
const MAX_NAMES: usize = 2;
/// How far a traversal looks for the type asked for.
const MAX_TRAVERSE_DEPTH: u64 = 3;
/// Types "who" asks for, in order of preference.
const PERSON_TYPES: &[&str] = &["Person", "People", "User", "Member", "Employee", "Contact"];

/// The named objects a question is about, in order of appearance.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ObjectQuestion {
    pub names: Vec<ObjectMention>,
    /// One name with its type next to it ("the Product Roadmap document"): the ordinary tool
    /// ranking with a lookup of that type answers it when a tool fits, so it goes first.
    pub typed_lookup_fits: bool,
}

/// An object a name was resolved to.
#[derive(Clone, Debug, PartialEq)]
struct FoundObject {
    id: String,
    label: String,
    type_name: Option<String>,
}

enum Resolution {
    Found(FoundObject),
    NotFound,
}

/// The object question in `mentions`, when the question names objects and the tools include a
/// name search.
pub(crate) fn read(
    mentions: &Mentions,
    known: &KnownValues,
    tools: &[ToolSpec],
) -> Option<ObjectQuestion> {
    search_tool(tools)?;
    if !mentions.ids.is_empty() || planner::MUTATING_VERBS.contains(&mentions.leading_verb.as_str())
    {
        return None;
    }
    let tokens = tokenize(&mentions.question);
    let mut names: Vec<ObjectMention> = mentions.objects.clone();
    for phrase in lowercase_phrases(&tokens, &mentions.consumed, known, tools) {
        let overlaps = names.iter().any(|name| {
            let name = name.name.to_lowercase();
            name.contains(&phrase.name) || phrase.name.contains(&name)
        });
        if !overlaps {
            names.push(phrase);
        }
    }
    names.truncate(MAX_NAMES);
    let typed_lookup_fits = matches!(names.as_slice(), [only] if only.type_hint.is_some())
        && planner::lookup_tool(tools).is_some();
    (!names.is_empty()).then_some(ObjectQuestion {
        names,
        typed_lookup_fits,
    })
}

/// This turn's step for an object question. Steps: resolve every name (known, or searched
/// — searches are this step's calls), then answer about what was found.
pub(crate) fn decide(
    question: &ObjectQuestion,
    request: &LlmRequest,
    view: &ConversationView,
    known: &KnownValues,
    config: &OfflinePlannerConfig,
    today: chrono::NaiveDate,
) -> PlannerDecision {
    let tools = &request.tools;
    let Some(search) = search_tool(tools) else {
        return PlannerDecision::Answer(help::low_confidence(tools));
    };
    let resolutions = match resolve_names(question, view, known, search, config) {
        Ok(resolutions) => resolutions,
        Err(decision) => return decision,
    };
    let search_results: Vec<&Value> = view
        .this_turn
        .iter()
        .filter(|outcome| outcome.tool_name == search.name)
        .filter_map(|outcome| outcome.json.as_ref())
        .collect();
    let learned = KnownValues::gather(
        tools,
        view.earlier_results
            .iter()
            .chain(search_results.iter().copied()),
    );
    let later: Vec<ToolOutcome> = view
        .this_turn
        .iter()
        .filter(|outcome| outcome.tool_name != search.name)
        .cloned()
        .collect();
    let found: Vec<&FoundObject> = resolutions
        .iter()
        .filter_map(|resolution| match resolution {
            Resolution::Found(found) => Some(found),
            Resolution::NotFound => None,
        })
        .collect();
    let missing: Vec<&ObjectMention> = question
        .names
        .iter()
        .zip(&resolutions)
        .filter(|(_, resolution)| matches!(resolution, Resolution::NotFound))
        .map(|(name, _)| name)
        .collect();
    if found.is_empty() {
        return nothing_found(request, view, &missing, &later, &learned, config, today);
    }
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|name| name.name.as_str()).collect();
        let found_labels: Vec<String> = found.iter().map(|found| describe(found)).collect();
        return PlannerDecision::Answer(help::names_not_found(&names, &found_labels));
    }
    let step = FoundStep {
        question,
        tools,
        view,
        later: &later,
        learned: &learned,
        config,
        today,
    };
    step.decide(&found)
}

/// Each name, resolved from what is known or from this turn's search results. `Err` carries
/// the step's decision when that is not possible yet: the searches still to make, or the
/// answer to a failed search.
fn resolve_names(
    question: &ObjectQuestion,
    view: &ConversationView,
    known: &KnownValues,
    search: &ToolSpec,
    config: &OfflinePlannerConfig,
) -> Result<Vec<Resolution>, PlannerDecision> {
    let search_outcome = |name: &ObjectMention| {
        view.this_turn.iter().find(|outcome| {
            outcome.tool_name == search.name
                && outcome.arguments.get("query").and_then(Value::as_str) == Some(&name.name)
        })
    };
    let mut searches = Vec::new();
    let mut resolutions = Vec::new();
    for name in &question.names {
        if let Some(found) = known_object(known, name) {
            resolutions.push(Resolution::Found(found));
            continue;
        }
        match search_outcome(name) {
            None => searches.push(PlannedCall {
                tool_name: search.name.clone(),
                arguments: search_arguments(&name.name),
            }),
            Some(outcome) if outcome.is_error => {
                return Err(PlannerDecision::Answer(render::answer(
                    std::slice::from_ref(outcome),
                    &RenderContext::default(),
                    config,
                )));
            }
            Some(outcome) => resolutions.push(match best_hit(outcome, name) {
                Some(found) => Resolution::Found(found),
                None => Resolution::NotFound,
            }),
        }
    }
    if !searches.is_empty() {
        return Err(PlannerDecision::CallTools(searches));
    }
    Ok(resolutions)
}

/// Every name was found: what the step does next.
struct FoundStep<'a> {
    question: &'a ObjectQuestion,
    tools: &'a [ToolSpec],
    view: &'a ConversationView,
    /// This turn's outcomes other than the searches.
    later: &'a [ToolOutcome],
    learned: &'a KnownValues,
    config: &'a OfflinePlannerConfig,
    today: chrono::NaiveDate,
}

impl FoundStep<'_> {
    /// Two objects: the path between them. One: a traversal to the type the question asks
    /// for (deepening while it finds nothing), else the object itself.
    fn decide(&self, found: &[&FoundObject]) -> PlannerDecision {
        let context = RenderContext {
            looked_up: Some(ObjectMention {
                name: found[0].label.clone(),
                type_hint: found[0].type_name.clone(),
            }),
        };
        let answer = |outcome: &ToolOutcome| {
            PlannerDecision::Answer(render::answer(
                std::slice::from_ref(outcome),
                &context,
                self.config,
            ))
        };
        let later = self.later;
        if let [from, to] = found {
            let Some(path_tool) = tool_named(self.tools, "find_path") else {
                return PlannerDecision::Answer(help::no_tool_for(&describe(from), &describe(to)));
            };
            return match later.iter().rfind(|o| o.tool_name == path_tool.name) {
                Some(outcome) => answer(outcome),
                None => call(path_tool, json!({"from_id": from.id, "to_id": to.id})),
            };
        }
        let object = found[0];
        let mentions = Mentions::read(&self.view.question, self.learned, self.today);
        let traverse_tool = tool_named(self.tools, "traverse");
        if let (Some(target_type), Some(traverse_tool)) = (
            target_type(&mentions, self.question, self.learned),
            traverse_tool,
        ) {
            let traversals: Vec<&ToolOutcome> = later
                .iter()
                .filter(|outcome| outcome.tool_name == traverse_tool.name)
                .collect();
            let depth = traversals.len() as u64 + 1;
            let found_nothing = |outcome: &ToolOutcome| {
                !outcome.is_error && outcome.json.as_ref().is_some_and(render::is_empty_result)
            };
            return match traversals.last() {
                Some(last) if !found_nothing(last) || depth > MAX_TRAVERSE_DEPTH => answer(last),
                _ => call(
                    traverse_tool,
                    json!({"start_id": object.id, "direction": "both", "target_type": target_type, "depth": depth}),
                ),
            };
        }
        let Some(get_tool) = tool_named(self.tools, "get_object") else {
            return PlannerDecision::Answer(help::names_not_found(&[], &[describe(object)]));
        };
        match later.iter().rfind(|o| o.tool_name == get_tool.name) {
            Some(outcome) => answer(outcome),
            None => call(get_tool, json!({"id": object.id})),
        }
    }
}

/// No name was found. If the search taught us that the "names" were types ("Tell me about
/// Document"), the question goes back to the ordinary tool ranking with those types known;
/// otherwise the answer says what was looked for.
fn nothing_found(
    request: &LlmRequest,
    view: &ConversationView,
    missing: &[&ObjectMention],
    later: &[ToolOutcome],
    learned: &KnownValues,
    config: &OfflinePlannerConfig,
    today: chrono::NaiveDate,
) -> PlannerDecision {
    let mentions = Mentions::read(&view.question, learned, today);
    if read(&mentions, learned, &request.tools).is_none()
        && let Some(intent) = planner::select_intent(request, &mentions, learned, config)
    {
        return if later.is_empty() {
            planner::first_step(&intent, &request.tools, learned)
        } else {
            planner::next_step(&intent, &request.tools, later, config)
        };
    }
    let names: Vec<&str> = missing.iter().map(|name| name.name.as_str()).collect();
    PlannerDecision::Answer(format!(
        "{}\n{}",
        help::names_not_found(&names, &[]),
        help::low_confidence(&request.tools)
    ))
}

/// The type the question asks for: a known type it names besides the object's own words, or
/// a person type for "who".
fn target_type(
    mentions: &Mentions,
    question: &ObjectQuestion,
    learned: &KnownValues,
) -> Option<String> {
    let name_words: Vec<String> = question
        .names
        .iter()
        .flat_map(|name| words(&name.name))
        .chain(
            question
                .names
                .iter()
                .filter_map(|name| name.type_hint.as_deref())
                .flat_map(words),
        )
        .map(|word| stem(&word))
        .collect();
    let named = mentions.types.iter().find(|type_name| {
        learned.type_named(type_name).is_some() && !name_words.contains(&stem(type_name))
    });
    if let Some(type_name) = named {
        return Some(type_name.clone());
    }
    let question_words = words(&mentions.question);
    // "who is Gus Lindqvist?" asks about the person named, not for another person.
    let asks_who_is_the_name = matches!(
        question_words.as_slice(),
        [who, verb, ..] if who == "who" && ["is", "s", "was"].contains(&verb.as_str())
    ) && question.names.len() == 1;
    let asks_who = !asks_who_is_the_name
        && question_words
            .iter()
            .any(|word| matches!(word.as_str(), "who" | "whom" | "whose"));
    asks_who
        .then(|| {
            PERSON_TYPES
                .iter()
                .find_map(|candidate| learned.type_named(candidate))
        })
        .flatten()
        .map(str::to_owned)
}

/// Lower-case phrases after "the" that may be names ("the product roadmap", "the platform
/// team"): words that are not stop words, type words on their own, or the vocabulary of the
/// tools ("the schema version", "the recent changes").
fn lowercase_phrases(
    tokens: &[Token],
    consumed: &[usize],
    known: &KnownValues,
    tools: &[ToolSpec],
) -> Vec<ObjectMention> {
    let vocabulary: Vec<String> = tools
        .iter()
        .flat_map(|tool| {
            let parameter_names: Vec<String> = super::parameters::parameters(tool)
                .into_iter()
                .map(|parameter| parameter.name)
                .collect();
            std::iter::once(base_name(&tool.name).to_owned()).chain(parameter_names)
        })
        .flat_map(|name| words(&name))
        .map(|word| stem(&word))
        .collect();
    let is_name_word = |token: &Token| {
        let lower = token.text.to_lowercase();
        !token.quoted
            && token.text == lower
            && lower.chars().all(char::is_alphanumeric)
            && !is_stop_word(&lower)
    };
    let mut phrases = Vec::new();
    for (position, token) in tokens.iter().enumerate() {
        if !token.text.eq_ignore_ascii_case("the") || token.phrase_end {
            continue;
        }
        let mut phrase: Vec<String> = Vec::new();
        for (offset, next) in tokens[position + 1..].iter().enumerate() {
            if !is_name_word(next) || consumed.contains(&(position + 1 + offset)) {
                break;
            }
            phrase.push(next.text.clone());
            if next.phrase_end {
                break;
            }
        }
        let in_vocabulary = phrase.iter().any(|word| {
            let stemmed = stem(word);
            !synonyms(&stemmed).is_empty() || vocabulary.contains(&stemmed)
        });
        let only_a_type = phrase.len() == 1 && known.type_named(&phrase[0]).is_some();
        if phrase.is_empty() || in_vocabulary || only_a_type {
            continue;
        }
        let type_hint = phrase
            .last()
            .filter(|_| phrase.len() > 1)
            .and_then(|last| known.type_named(last))
            .map(str::to_owned);
        phrases.push(ObjectMention {
            name: phrase.join(" "),
            type_hint,
        });
    }
    phrases
}

/// The name-search tool: `search_objects` (a `query` over objects of every type).
pub(crate) fn search_tool(tools: &[ToolSpec]) -> Option<&ToolSpec> {
    tool_named(tools, "search_objects")
}

fn tool_named<'a>(tools: &'a [ToolSpec], base: &str) -> Option<&'a ToolSpec> {
    tools.iter().find(|tool| base_name(&tool.name) == base)
}

fn search_arguments(name: &str) -> Map<String, Value> {
    let mut arguments = Map::new();
    arguments.insert("query".into(), json!(name));
    arguments
}

fn call(tool: &ToolSpec, arguments: Value) -> PlannerDecision {
    let Value::Object(arguments) = arguments else {
        unreachable!("arguments are built as objects")
    };
    PlannerDecision::CallTools(vec![PlannedCall {
        tool_name: tool.name.clone(),
        arguments,
    }])
}

/// An object seen in an earlier result under this name (no search needed).
fn known_object(known: &KnownValues, name: &ObjectMention) -> Option<FoundObject> {
    known
        .objects
        .iter()
        .find(|candidate| {
            candidate.name.eq_ignore_ascii_case(&name.name)
                && name.type_hint.as_ref().is_none_or(|hint| {
                    candidate
                        .type_name
                        .as_ref()
                        .is_none_or(|type_name| type_name.eq_ignore_ascii_case(hint))
                })
        })
        .map(|candidate| FoundObject {
            id: candidate.id.clone(),
            label: candidate.name.clone(),
            type_name: candidate.type_name.clone(),
        })
}

/// The search's best hit for `name` (the server ranks them), preferring the hinted type.
fn best_hit(outcome: &ToolOutcome, name: &ObjectMention) -> Option<FoundObject> {
    let hits: Vec<FoundObject> = planner::objects_in(outcome.json.as_ref())
        .into_iter()
        .map(|(id, label)| {
            let type_name = outcome_object_type(outcome.json.as_ref(), &id);
            FoundObject {
                id,
                label,
                type_name,
            }
        })
        .collect();
    let hinted = name.type_hint.as_ref().and_then(|hint| {
        hits.iter().find(|hit| {
            hit.type_name
                .as_ref()
                .is_some_and(|type_name| type_name.eq_ignore_ascii_case(hint))
        })
    });
    hinted.or(hits.first()).cloned()
}

/// The `type` of the object with `id` anywhere in a result.
fn outcome_object_type(result: Option<&Value>, id: &str) -> Option<String> {
    match result? {
        Value::Object(map) => {
            if map.get("id").and_then(Value::as_str) == Some(id)
                && let Some(type_name) = map.get("type").and_then(Value::as_str)
            {
                return Some(type_name.to_owned());
            }
            map.values()
                .find_map(|inner| outcome_object_type(Some(inner), id))
        }
        Value::Array(items) => items
            .iter()
            .find_map(|inner| outcome_object_type(Some(inner), id)),
        _ => None,
    }
}

fn describe(found: &FoundObject) -> String {
    match &found.type_name {
        Some(type_name) => format!("the {} \"{}\"", type_name.to_lowercase(), found.label),
        None => format!("\"{}\"", found.label),
    }
}

#[cfg(test)]
#[path = "object_plan_tests.rs"]
mod tests;
