//! Large tool catalogs: past `chat.tool_budget` tools, a model is offered the budgeted tools
//! that best match the question plus `search_tools`, and loads more on demand — the way
//! Anthropic's tool search and deferred loading work. Hundreds of definitions on every step
//! cost context and make models choose worse.
//!
//! `search_tools` ranks the whole catalog with the offline planner's index
//! (`switchboard_llm::ToolSearch`: names, descriptions, argument names and descriptions); the
//! tools it names are offered from the next step to the end of the turn. The same index picks
//! the tools offered first (best matches for the question; a tool forced by `tool_choice` is
//! always among them). It is the host's own tool: it reads the turn's catalog and reaches no
//! server, so there is nothing for the approval gate to review.
//!
//! The offline planner is not a language model with a context window: it is always offered
//! the whole catalog and ranks it with the same index itself.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use switchboard_core::ToolSpec;
use switchboard_core::sync::LockUnpoisoned;
use switchboard_llm::ToolSearch;
use switchboard_mcp_client::ToolCatalog;

/// The host's tool that finds and loads tools. Catalog names are always `server__tool`, so
/// this name cannot collide with one.
pub const SEARCH_TOOLS_NAME: &str = "search_tools";
/// Matches returned when the model does not say.
const DEFAULT_MATCHES: usize = 8;
/// Most matches one search returns.
const MAX_MATCHES: usize = 20;

/// The tools offered to the model during one turn.
#[derive(Debug)]
pub struct ToolOffer {
    catalog: Arc<ToolCatalog>,
    /// More tools than the budget: `search_tools` is offered and tools load on demand.
    deferred: bool,
    /// The catalog names offered now (when deferred).
    offered: Mutex<BTreeSet<String>>,
}

/// `search_tools`' arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArguments {
    query: String,
    #[serde(default)]
    limit: Option<usize>,
}

/// `search_tools`' result, as the model reads it.
#[derive(Debug, Serialize)]
pub struct SearchResult {
    /// The matching tools, best first; each can be called from the next step on.
    pub tools: Vec<FoundTool>,
    /// Tools in the conversation's catalog in all.
    pub catalog_size: usize,
    pub note: String,
}

#[derive(Debug, Serialize)]
pub struct FoundTool {
    pub name: String,
    pub description: String,
}

impl ToolOffer {
    /// The offer for a turn over `catalog`: everything when it has at most `budget` tools
    /// (or `budget` is 0), else the `budget` best matches for `question` (and `forced`).
    pub fn new(
        catalog: Arc<ToolCatalog>,
        budget: usize,
        question: &str,
        forced: Option<&str>,
    ) -> Self {
        let deferred = budget > 0 && catalog.specs.len() > budget;
        let mut offered = BTreeSet::new();
        if deferred {
            let search = ToolSearch::new(&catalog.specs);
            offered.extend(
                search
                    .rank_all(question)
                    .into_iter()
                    .take(budget)
                    .map(|tool| tool.name.clone()),
            );
            offered.extend(forced.map(str::to_owned));
        }
        Self {
            catalog,
            deferred,
            offered: Mutex::new(offered),
        }
    }

    /// Whether `search_tools` is offered this turn.
    pub fn is_deferred(&self) -> bool {
        self.deferred
    }

    /// Whether a call by this name is `search_tools`.
    pub fn is_search(&self, name: &str) -> bool {
        self.deferred && name == SEARCH_TOOLS_NAME
    }

    /// The definitions to send a model of `provider_kind`: the whole catalog when nothing is
    /// deferred or for the offline planner; else the tools offered so far and `search_tools`.
    pub fn specs_for(&self, provider_kind: &str) -> Vec<ToolSpec> {
        if !self.deferred || provider_kind == "offline" {
            return self.catalog.specs.clone();
        }
        let mut specs: Vec<ToolSpec> = {
            let offered = self.offered.lock_unpoisoned();
            self.catalog
                .specs
                .iter()
                .filter(|spec| offered.contains(&spec.name))
                .cloned()
                .collect()
        };
        specs.push(self.search_spec(specs.len()));
        specs
    }

    /// `search_tools`' definition, when `offered` tools are offered beside it.
    fn search_spec(&self, offered: usize) -> ToolSpec {
        let hidden = self.catalog.specs.len().saturating_sub(offered);
        ToolSpec {
            name: SEARCH_TOOLS_NAME.to_owned(),
            description: format!(
                "Finds tools of this conversation by what they do. {hidden} more tools are \
                 available than are listed; search by the task's words (names, descriptions \
                 and argument names are searched) and the tools found can be called from the \
                 next step on."
            ),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the tool should do, in a few words"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_MATCHES,
                              "description": "Most tools to return (default 8)"}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        }
    }

    /// Runs `search_tools` with the model's `arguments`: the result for the model, the found
    /// tools now offered. An error message when the arguments are not valid.
    pub fn search(&self, arguments: &Value) -> Result<SearchResult, String> {
        let arguments: SearchArguments = serde_json::from_value(arguments.clone())
            .map_err(|error| format!("invalid arguments for {SEARCH_TOOLS_NAME}: {error}"))?;
        let limit = arguments
            .limit
            .unwrap_or(DEFAULT_MATCHES)
            .clamp(1, MAX_MATCHES);
        let search = ToolSearch::new(&self.catalog.specs);
        let found = search.search(&arguments.query, limit);
        self.offered
            .lock_unpoisoned()
            .extend(found.iter().map(|tool| tool.name.clone()));
        let note = if found.is_empty() {
            "no tool matches; try other words".to_owned()
        } else {
            "these tools can be called from the next step on".to_owned()
        };
        Ok(SearchResult {
            tools: found
                .into_iter()
                .map(|tool| FoundTool {
                    name: tool.name.clone(),
                    description: tool.description.clone(),
                })
                .collect(),
            catalog_size: self.catalog.specs.len(),
            note,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog(size: usize) -> Arc<ToolCatalog> {
        let specs: Vec<ToolSpec> = (0..size)
            .map(|index| ToolSpec {
                name: format!("tool_{index}"),
                description: format!("Handles gadget number {index}"),
                parameters: json!({"type": "object", "properties": {format!("gadget{index}_id"): {"type": "string"}}}),
            })
            .collect();
        Arc::new(ToolCatalog::build(&[], &specs))
    }

    fn names(specs: &[ToolSpec]) -> Vec<&str> {
        specs.iter().map(|spec| spec.name.as_str()).collect()
    }

    #[test]
    fn a_catalog_within_the_budget_is_offered_whole() {
        let offer = ToolOffer::new(catalog(10), 40, "anything", None);
        assert!(!offer.is_deferred() && !offer.is_search(SEARCH_TOOLS_NAME));
        assert_eq!(offer.specs_for("openai").len(), 10);
        assert_eq!(
            ToolOffer::new(catalog(100), 0, "x", None)
                .specs_for("openai")
                .len(),
            100
        );
    }

    #[test]
    fn past_the_budget_the_best_matches_and_search_tools_are_offered_and_searches_load_more() {
        let offer = ToolOffer::new(catalog(100), 5, "gadget7_id please", Some("tool_99"));
        assert!(offer.is_deferred());
        let first = offer.specs_for("anthropic");
        let first_names = names(&first);
        assert_eq!(
            first.len(),
            7,
            "5 matches, the forced tool, search_tools: {first_names:?}"
        );
        assert!(first_names.contains(&"tool_7") && first_names.contains(&"tool_99"));
        assert!(first_names.contains(&SEARCH_TOOLS_NAME));
        assert_eq!(
            offer.specs_for("offline").len(),
            100,
            "the planner sees everything"
        );

        let found = offer
            .search(&json!({"query": "gadget42_id", "limit": 3}))
            .unwrap();
        assert_eq!(found.tools[0].name, "tool_42");
        assert!(found.tools.len() <= 3);
        assert_eq!(found.catalog_size, 100);
        assert!(names(&offer.specs_for("openai")).contains(&"tool_42"));
        let error = offer.search(&json!({"limit": 3})).unwrap_err();
        assert!(error.contains("query"), "{error}");
    }
}
