//! Ready-made prompts over the graph: explain one object type, summarise recent schema changes,
//! and explore one object's neighbourhood. Each embeds the current facts (as JSON) so the model
//! answers from the graph rather than from memory.

use crate::errors;
use crate::graphs::WorkspaceGraph;
use crate::tools::output::{ChangeOutput, LinkOutput, ObjectOutput, RelationshipOutput};
use rmcp::model::{
    ErrorData, GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::{Value, json};
use switchboard_core::Scope;
use switchboard_kg::{ChangelogSince, Direction, KnowledgeGraph};

const CHANGES_IN_PROMPT: usize = 30;

/// One of our prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KgPrompt {
    ExplainType,
    SummarizeRecentChanges,
    ExploreObject,
}

impl KgPrompt {
    pub const ALL: [KgPrompt; 3] = [
        KgPrompt::ExplainType,
        KgPrompt::SummarizeRecentChanges,
        KgPrompt::ExploreObject,
    ];

    pub fn name(self) -> &'static str {
        match self {
            KgPrompt::ExplainType => "explain_type",
            KgPrompt::SummarizeRecentChanges => "summarize_recent_changes",
            KgPrompt::ExploreObject => "explore_object",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|prompt| prompt.name() == name)
    }

    pub fn required_scope(self) -> Scope {
        match self {
            KgPrompt::ExploreObject => Scope::DataRead,
            _ => Scope::SchemaRead,
        }
    }

    pub fn definition(self) -> Prompt {
        let (title, description, arguments) = match self {
            KgPrompt::ExplainType => (
                "Explain an object type",
                "Explain what one object type means, its properties and how it relates to other types",
                vec![
                    PromptArgument::new("type_name")
                        .with_description("The object type, e.g. Document")
                        .with_required(true),
                ],
            ),
            KgPrompt::SummarizeRecentChanges => (
                "Summarise recent schema changes",
                "Summarise what changed in the schema, optionally since a version or ISO date",
                vec![
                    PromptArgument::new("since")
                        .with_description("A schema version or an ISO date such as 2026-10-15")
                        .with_required(false),
                ],
            ),
            KgPrompt::ExploreObject => (
                "Explore an object",
                "Describe one object and how it connects to the rest of the graph",
                vec![
                    PromptArgument::new("id")
                        .with_description("The object's id")
                        .with_required(true),
                ],
            ),
        };
        Prompt::new(self.name(), Some(description), Some(arguments)).with_title(title)
    }
}

pub fn list() -> Vec<Prompt> {
    KgPrompt::ALL
        .into_iter()
        .map(KgPrompt::definition)
        .collect()
}

fn argument<'a>(
    prompt: KgPrompt,
    arguments: &'a Option<JsonObject>,
    name: &str,
    required: bool,
) -> Result<Option<&'a str>, ErrorData> {
    let missing = || {
        ErrorData::invalid_params(
            format!("Prompt {} needs the argument '{name}'", prompt.name()),
            None,
        )
    };
    match arguments.as_ref().and_then(|map| map.get(name)) {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(Some(text.as_str())),
        Some(Value::String(_)) | None => {
            if required {
                Err(missing())
            } else {
                Ok(None)
            }
        }
        Some(_) => Err(ErrorData::invalid_params(
            format!(
                "Prompt {}: argument '{name}' must be a string",
                prompt.name()
            ),
            None,
        )),
    }
}

fn message(instruction: String, facts: &Value) -> PromptMessage {
    let facts = serde_json::to_string_pretty(facts).expect("prompt facts serialize");
    PromptMessage::new_text(
        Role::User,
        format!("{instruction}\n\nFacts from the knowledge graph (JSON):\n{facts}"),
    )
}

pub fn get(
    graph: &WorkspaceGraph,
    prompt: KgPrompt,
    arguments: &Option<JsonObject>,
) -> Result<GetPromptResult, ErrorData> {
    let knowledge = graph.read();
    let (description, messages) = match prompt {
        KgPrompt::ExplainType => explain_type(&knowledge, prompt, arguments)?,
        KgPrompt::SummarizeRecentChanges => {
            summarize_recent_changes(&knowledge, prompt, arguments)?
        }
        KgPrompt::ExploreObject => explore_object(&knowledge, prompt, arguments)?,
    };
    Ok(GetPromptResult::new(messages).with_description(description))
}

/// A filled-in prompt: its description and its messages.
type FilledPrompt = (String, Vec<PromptMessage>);

fn kg_error(error: switchboard_kg::KgError) -> ErrorData {
    errors::from_kg(&error)
}

/// `explain_type`: the type's definition, its relationships both ways and its object count.
fn explain_type(
    knowledge: &KnowledgeGraph,
    prompt: KgPrompt,
    arguments: &Option<JsonObject>,
) -> Result<FilledPrompt, ErrorData> {
    let name = argument(prompt, arguments, "type_name", true)?.unwrap_or_default();
    let details = knowledge.schema().type_details(name).map_err(kg_error)?;
    let relationships: Vec<RelationshipOutput> = details
        .outgoing
        .iter()
        .chain(&details.incoming)
        .map(|r| RelationshipOutput::from(*r))
        .collect();
    let facts = json!({
        "type": details.object_type,
        "relationships": relationships,
        "object_count": knowledge.object_count_of_type(name),
    });
    let instruction = format!(
        "Explain the {name} object type of our knowledge graph to a colleague: what it represents, each property (type, whether required, allowed values), and how {name} objects relate to other types. Be concise and use only the facts below."
    );
    Ok((
        format!("Explain the {name} type"),
        vec![message(instruction, &facts)],
    ))
}

/// `summarize_recent_changes`: the schema changes since a version or time (the last
/// `CHANGES_IN_PROMPT` of them).
fn summarize_recent_changes(
    knowledge: &KnowledgeGraph,
    prompt: KgPrompt,
    arguments: &Option<JsonObject>,
) -> Result<FilledPrompt, ErrorData> {
    let since_text = argument(prompt, arguments, "since", false)?;
    let since = since_text
        .map(ChangelogSince::parse)
        .transpose()
        .map_err(kg_error)?;
    let (entries, total) = knowledge
        .history()
        .changes_since(since.as_ref(), CHANGES_IN_PROMPT)
        .map_err(kg_error)?;
    let changes: Vec<ChangeOutput> = entries.into_iter().map(ChangeOutput::from).collect();
    let facts = json!({
        "current_version": knowledge.history().current().map(|v| v.version.clone()),
        "since": since_text,
        "total_changes": total,
        "changes": changes,
    });
    let scope = since_text
        .map(|s| format!(" since {s}"))
        .unwrap_or_default();
    let instruction = format!(
        "Summarise the knowledge-graph schema changes{scope} for a team update: group them into added, modified and removed, name the types and properties involved, mention when each happened, and point out anything that may affect existing data or queries."
    );
    Ok((
        format!("Summarise schema changes{scope}"),
        vec![message(instruction, &facts)],
    ))
}

/// `explore_object`: the object and its links both ways.
fn explore_object(
    knowledge: &KnowledgeGraph,
    prompt: KgPrompt,
    arguments: &Option<JsonObject>,
) -> Result<FilledPrompt, ErrorData> {
    let id = argument(prompt, arguments, "id", true)?.unwrap_or_default();
    let object = knowledge.require_object(id).map_err(kg_error)?;
    let facts = json!({
        "object": ObjectOutput::from(object),
        "outgoing": LinkOutput::all(knowledge, id, Direction::Out),
        "incoming": LinkOutput::all(knowledge, id, Direction::In),
    });
    let instruction = format!(
        "Describe the {} '{}' and how it connects to the rest of the knowledge graph: who and what it is related to, through which relationships, and what a reader should look at next.",
        object.object_type,
        object.label()
    );
    Ok((
        format!("Explore {}", object.label()),
        vec![message(instruction, &facts)],
    ))
}
