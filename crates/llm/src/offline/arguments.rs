//! Filling a tool's arguments from what the question mentions, guided by the tool's JSON
//! Schema: parameter names say what a value is for (`type_name`, `from_type`, `since`,
//! `limit`, `start_id`…), enums and defaults say what is allowed.
//!
//! An id parameter that the question does not give but whose object it names ("the Product
//! Roadmap document") becomes a lookup: the planner finds the object first.

use serde_json::{Map, Value, json};
use switchboard_core::ToolSpec;

use super::mentions::{Mentions, ObjectMention};
use super::parameters::{Parameter, parameters};
use super::text::stem;

/// What the question can give a tool.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Binding {
    /// Every required argument is known.
    Complete(Map<String, Value>),
    /// Complete but for one id, which a lookup of the named object will give.
    NeedsLookup {
        arguments: Map<String, Value>,
        id_parameter: String,
        object: ObjectMention,
    },
    /// A required argument cannot be filled.
    Unsatisfiable { missing: Vec<String> },
}

/// The binding and how many arguments came from the question itself (not defaults).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BoundArguments {
    pub binding: Binding,
    pub from_question: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ParameterRole {
    Id,
    TypeName,
    FromType,
    ToType,
    TargetType,
    Since,
    Limit,
    Depth,
    GroupBy,
    FreeText,
    Cursor,
    Path,
    SecondPath,
    Pattern,
    FirstLines,
    LastLines,
    Other,
}

fn role_of(name: &str) -> ParameterRole {
    let lower = name.to_lowercase();
    match lower.as_str() {
        "id" | "object_id" | "start_id" | "node_id" => ParameterRole::Id,
        "from_id" | "to_id" | "source_id" | "target_id" => ParameterRole::Id,
        "from_type" | "source_type" => ParameterRole::FromType,
        "to_type" | "target_object_type" => ParameterRole::ToType,
        "target_type" => ParameterRole::TargetType,
        "type" | "type_name" | "object_type" | "typename" | "kind" => ParameterRole::TypeName,
        "since" | "after" | "from_version" | "since_version" | "from_date" => ParameterRole::Since,
        "limit" | "max_results" | "top" | "page_size" | "max" | "n" => ParameterRole::Limit,
        "depth" | "max_depth" | "hops" => ParameterRole::Depth,
        "group_by" | "groupby" => ParameterRole::GroupBy,
        "query" | "q" | "text" | "message" | "search" | "prompt" | "input" | "keyword" | "term" => {
            ParameterRole::FreeText
        }
        "cursor" | "page_token" | "next_cursor" => ParameterRole::Cursor,
        "path" | "file" | "file_path" | "filepath" | "filename" | "file_name" | "dir"
        | "directory" | "folder" | "source" => ParameterRole::Path,
        "destination" | "target" | "target_path" | "new_path" => ParameterRole::SecondPath,
        "pattern" | "glob" | "name_pattern" => ParameterRole::Pattern,
        "head" | "first_lines" => ParameterRole::FirstLines,
        "tail" | "last_lines" => ParameterRole::LastLines,
        other if other.ends_with("_id") => ParameterRole::Id,
        other if other.ends_with("_type") => ParameterRole::TypeName,
        _ => ParameterRole::Other,
    }
}

/// Fills `tool`'s arguments from the question. `lookup_available` says whether an object
/// named in the question can be looked up to get an id.
pub(crate) fn bind_arguments(
    tool: &ToolSpec,
    mentions: &Mentions,
    lookup_available: bool,
) -> BoundArguments {
    let parameters = parameters(tool);
    let lookup_object = mentions.objects.first();
    let mut values = QuestionValues::new(mentions, &parameters);
    let mut arguments = Map::new();
    let mut from_question = 0;
    let mut missing = Vec::new();
    let mut lookup: Option<(String, ObjectMention)> = None;
    for parameter in &parameters {
        let name = &parameter.name;
        let enum_values: Vec<&str> = parameter.enum_values.iter().map(String::as_str).collect();
        match values.value_for(tool, parameter, &enum_values) {
            Some(value) => {
                arguments.insert(name.clone(), value);
                // A path written in the question is the strongest sign of a file tool.
                from_question += if role_of(name) == ParameterRole::Path {
                    2
                } else {
                    1
                };
            }
            None if parameter.required => {
                if let Some(default) = fallback_value(parameter, &enum_values) {
                    arguments.insert(name.clone(), default);
                } else if role_of(name) == ParameterRole::Id
                    && lookup_available
                    && lookup.is_none()
                    && let Some(object) = lookup_object
                {
                    lookup = Some((name.clone(), object.clone()));
                } else {
                    missing.push(name.clone());
                }
            }
            None => {}
        }
    }
    values.read_single_type_as_target(&mut arguments);
    let binding = if !missing.is_empty() {
        Binding::Unsatisfiable { missing }
    } else if let Some((id_parameter, object)) = lookup {
        Binding::NeedsLookup {
            arguments,
            id_parameter,
            object,
        }
    } else {
        Binding::Complete(arguments)
    };
    BoundArguments {
        binding,
        from_question,
    }
}

/// What the question offers, handed out parameter by parameter (each number and id once).
struct QuestionValues<'m> {
    mentions: &'m Mentions,
    /// Types named, then types guessed.
    all_types: Vec<&'m String>,
    /// Types named other than the looked-up object's own type hint.
    types_besides_hint: Vec<&'m String>,
    has_from_and_to: bool,
    numbers: std::slice::Iter<'m, u64>,
    ids: std::slice::Iter<'m, String>,
}

impl<'m> QuestionValues<'m> {
    fn new(mentions: &'m Mentions, parameters: &[Parameter]) -> Self {
        let object_hint = mentions
            .objects
            .first()
            .and_then(|object| object.type_hint.as_ref());
        let has_role = |role| parameters.iter().any(|p| role_of(&p.name) == role);
        Self {
            mentions,
            all_types: mentions
                .types
                .iter()
                .chain(
                    mentions
                        .guessed_types
                        .iter()
                        .filter(|guess| !mentions.types.contains(guess)),
                )
                .collect(),
            types_besides_hint: mentions
                .types
                .iter()
                .filter(|name| Some(*name) != object_hint)
                .collect(),
            has_from_and_to: has_role(ParameterRole::FromType) && has_role(ParameterRole::ToType),
            numbers: mentions.numbers.iter(),
            ids: mentions.ids.iter(),
        }
    }

    fn value_for(
        &mut self,
        tool: &ToolSpec,
        parameter: &Parameter,
        enum_values: &[&str],
    ) -> Option<Value> {
        let mentions = self.mentions;
        let is_number = parameter.is_number;
        match role_of(&parameter.name) {
            _ if !enum_values.is_empty() => enum_from_question(enum_values, mentions),
            ParameterRole::Id => self.ids.next().map(|id| json!(id)),
            ParameterRole::TypeName => mentions
                .types
                .first()
                .or(mentions.guessed_types.first())
                .map(|name| json!(name)),
            ParameterRole::FromType => self.all_types.first().map(|name| json!(name)),
            ParameterRole::ToType => {
                let index = usize::from(self.has_from_and_to);
                self.all_types.get(index).map(|name| json!(name))
            }
            ParameterRole::TargetType => self.types_besides_hint.first().map(|name| json!(name)),
            ParameterRole::Since => mentions
                .version
                .as_ref()
                .or(mentions.date.as_ref())
                .map(|since| json!(since)),
            ParameterRole::Limit if is_number => self.numbers.next().map(|n| json!(n)),
            ParameterRole::GroupBy => mentions.group_by.as_ref().map(|field| json!(field)),
            ParameterRole::FreeText => free_text_for(tool, mentions).map(|text| json!(text)),
            ParameterRole::Path => mentions.paths.paths.first().map(|path| json!(path)),
            ParameterRole::SecondPath => mentions.paths.paths.get(1).map(|path| json!(path)),
            ParameterRole::Pattern => mentions.paths.patterns.first().map(|glob| json!(glob)),
            ParameterRole::FirstLines if asks_for_lines(mentions, &["first", "top", "head"]) => {
                self.numbers.next().map(|n| json!(n))
            }
            ParameterRole::LastLines if asks_for_lines(mentions, &["last", "tail", "final"]) => {
                self.numbers.next().map(|n| json!(n))
            }
            ParameterRole::Other if is_number && parameter.required => {
                self.numbers.next().map(|n| json!(n))
            }
            // A required text the planner knows no role for (`name`, `city`, `title`…): the
            // text the question gives — quoted, after "named"/"called", or after the verb
            // that names the tool ("greet Ada").
            ParameterRole::Other if parameter.is_string && parameter.required => {
                free_text_for(tool, mentions).map(|text| json!(text))
            }
            _ => None,
        }
    }

    /// A single type given for a from/to pair reads "to X" as the target.
    fn read_single_type_as_target(&self, arguments: &mut Map<String, Value>) {
        if self.has_from_and_to
            && self.all_types.len() == 1
            && reads_as_target(self.mentions, self.all_types[0])
            && let Some(from) = arguments.remove("from_type")
        {
            arguments.insert("to_type".into(), from);
        }
    }
}

/// "the first 10 lines", "last 5 lines of …": a line count from the start or the end.
fn asks_for_lines(mentions: &Mentions, ends: &[&str]) -> bool {
    let words = super::text::words(&mentions.question);
    words.iter().any(|word| stem(word) == "line")
        && words.iter().any(|word| ends.contains(&word.as_str()))
}

fn reads_as_target(mentions: &Mentions, type_name: &str) -> bool {
    let question = mentions.rest_after_leading_verb.to_lowercase();
    let type_lower = type_name.to_lowercase();
    [
        "to ",
        "into ",
        "pointing at ",
        "towards ",
        "end at ",
        "ends at ",
        "end at a ",
        "ending at ",
        "end in ",
        "arrive at ",
    ]
    .iter()
    .any(|before| {
        question.contains(&format!("{before}{type_lower}"))
            || question.contains(&format!("{before}the {type_lower}"))
    })
}

/// An enum value the question names (by word or stem), or a direction word.
fn enum_from_question(values: &[&str], mentions: &Mentions) -> Option<Value> {
    if let Some(direction) = mentions.direction
        && values.contains(&direction)
    {
        return Some(json!(direction));
    }
    let question = format!(" {} ", mentions.rest_after_leading_verb.to_lowercase());
    let undirected = ["relat", "connect", "link"]
        .iter()
        .any(|word| question.contains(word));
    if undirected && values.contains(&"both") {
        return Some(json!("both"));
    }
    values
        .iter()
        .find(|value| {
            let lower = value.to_lowercase();
            lower.len() > 2
                && (question.contains(&format!(" {lower} "))
                    || question.contains(&format!(" {} ", stem(&lower))))
        })
        .map(|value| json!(value))
}

/// For a required parameter the question does not fill: the schema's default, a permissive
/// enum value (`both`, `all`, `any`), or the minimum of a number.
fn fallback_value(parameter: &Parameter, enum_values: &[&str]) -> Option<Value> {
    if let Some(default) = &parameter.default {
        return Some(default.clone());
    }
    if !enum_values.is_empty() {
        let permissive = ["both", "all", "any"]
            .iter()
            .find(|value| enum_values.contains(value))
            .copied()
            .unwrap_or(enum_values[0]);
        return Some(json!(permissive));
    }
    parameter.minimum.clone()
}

/// Free text for a `query`/`message` parameter: what follows a trigger word, or for a tool
/// named by the question's first word ("echo hello"), the rest of the question.
fn free_text_for(tool: &ToolSpec, mentions: &Mentions) -> Option<String> {
    if let Some(text) = &mentions.free_text {
        return Some(text.clone());
    }
    let base = super::tool_index::base_name(&tool.name);
    let tool_verb = super::text::words(base).first().map(|word| stem(word));
    // "repeat hello" is `echo`'s text; "list the tags" is not `search`'s query.
    let named_by_verb = tool_verb.as_deref().is_some_and(|verb| {
        verb == mentions.leading_verb
            || !["find", "search", "list", "get"].contains(&verb)
                && super::text::synonyms(&mentions.leading_verb).contains(&verb)
    });
    (named_by_verb && !mentions.rest_after_leading_verb.is_empty())
        .then(|| mentions.rest_after_leading_verb.clone())
}

#[cfg(test)]
#[path = "arguments_tests.rs"]
mod tests;
