//! Searching a tool catalog by what a tool is for: the offline planner's BM25 index (tool
//! names weighted highest, then descriptions and argument names and descriptions, stemmed,
//! with synonyms) behind a small public face, so the chat engine's `search_tools` and its
//! choice of the tools offered first rank exactly as the planner does — one ranking, not two.

use switchboard_core::ToolSpec;

use crate::offline::tool_index::{QueryTerms, ToolIndex};

/// A catalog indexed once for any number of searches.
#[derive(Debug)]
pub struct ToolSearch<'a> {
    index: ToolIndex<'a>,
}

impl<'a> ToolSearch<'a> {
    pub fn new(tools: &'a [ToolSpec]) -> Self {
        Self {
            index: ToolIndex::new(tools),
        }
    }

    /// At most `limit` tools that match `query` at all, best first (ties keep catalog order).
    pub fn search(&self, query: &str, limit: usize) -> Vec<&'a ToolSpec> {
        self.index
            .rank(&QueryTerms::from_question_excluding(query, &[]))
            .into_iter()
            .filter(|ranked| ranked.score > 0.0)
            .take(limit)
            .map(|ranked| ranked.tool)
            .collect()
    }

    /// Every tool, best match for `query` first (tools that do not match keep catalog order,
    /// after those that do).
    pub fn rank_all(&self, query: &str) -> Vec<&'a ToolSpec> {
        self.index
            .rank(&QueryTerms::from_question_excluding(query, &[]))
            .into_iter()
            .map(|ranked| ranked.tool)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, argument: &str) -> ToolSpec {
        ToolSpec {
            name: name.to_owned(),
            description: description.to_owned(),
            parameters: json!({"type": "object", "properties": {argument: {"type": "string"}}}),
        }
    }

    #[test]
    fn finds_tools_by_name_description_and_argument_names() {
        let tools = vec![
            tool(
                "crm__list_invoices",
                "Lists the invoices of a customer.",
                "customer",
            ),
            tool(
                "weather__forecast",
                "Tomorrow's weather for a place.",
                "city",
            ),
            tool("files__read_file", "Reads a file from disk.", "path"),
        ];
        let search = ToolSearch::new(&tools);
        let names = |query: &str| -> Vec<&str> {
            search
                .search(query, 5)
                .iter()
                .map(|tool| tool.name.as_str())
                .collect()
        };
        assert_eq!(names("invoices")[0], "crm__list_invoices");
        assert_eq!(names("weather")[0], "weather__forecast");
        assert_eq!(
            names("city")[0],
            "weather__forecast",
            "argument names count"
        );
        assert!(names("zebra").is_empty(), "nothing unrelated is returned");
        assert_eq!(search.rank_all("zebra").len(), 3);
    }
}
