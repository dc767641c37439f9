//! Requests the offline planner turns down before it ranks tools: an imperative whose verb no
//! offered tool speaks of ("translate this", "send an email", "book a room"). A rules planner
//! that ranked tools for these would call whichever tool shares a noun with the request, and
//! a wrong call is worse than a plain "I can't do that offline".
//!
//! Judged against the tool catalog (tool and parameter names) and the synonym
//! table, so a server that offers `send_email` makes "send an email" answerable.

use serde_json::Value;
use switchboard_core::ToolSpec;

use super::mentions::Mentions;
use super::text::{is_stop_word, singular, stem, synonyms, words};

/// Verbs that ask to see or find something: any tool that answers fits them.
const READING_VERBS: &[&str] = &[
    "dump", "export", "list", "find", "print", "open", "read", "describe", "explain", "count",
    "search", "look", "fetch", "check", "did", "name", "return", "go", "compare", "who", "whose",
    "whom", "should", "might", "may", "must", "shall", "i", "any", "anything", "no",
];

/// Whether the question starts with an action verb that no offered tool performs.
pub(crate) fn is_unsupported_action(mentions: &Mentions, tools: &[ToolSpec]) -> bool {
    let verb = mentions.leading_verb.as_str();
    let first_word = mentions
        .question
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_lowercase();
    if verb.is_empty()
        || !first_word.chars().all(char::is_alphabetic)
        || is_stop_word(&first_word)
        || READING_VERBS.contains(&first_word.as_str())
        || !synonyms(verb).is_empty()
        || mentions
            .objects
            .iter()
            .any(|object| object.name.to_lowercase().starts_with(&first_word))
        || mentions
            .types
            .iter()
            .chain(&mentions.guessed_types)
            .any(|name| name.eq_ignore_ascii_case(&singular(&first_word)))
    {
        return false;
    }
    !tools
        .iter()
        .any(|tool| tool_terms(tool).any(|term| term == verb))
}

fn tool_terms(tool: &ToolSpec) -> impl Iterator<Item = String> + '_ {
    let parameter_names = tool
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|properties| properties.keys());
    // Names and parameters only: descriptions mention verbs in passing ("… sends …").
    let mut text = tool.name.clone();
    for name in parameter_names {
        text.push(' ');
        text.push_str(name);
    }
    words(&text).into_iter().map(|word| stem(&word))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::fixtures::kg_tools;
    use crate::offline::known_values::KnownValues;

    fn unsupported(question: &str) -> bool {
        let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 25).unwrap();
        let mentions = Mentions::read(question, &KnownValues::default(), today);
        is_unsupported_action(&mentions, &kg_tools())
    }

    #[test]
    fn actions_no_tool_performs_are_turned_down() {
        assert!(unsupported("translate this sentence into French"));
        assert!(unsupported("Send an email to the team"));
        assert!(unsupported("book a meeting room for Friday"));
    }

    #[test]
    fn questions_and_verbs_the_tools_speak_of_are_not() {
        assert!(!unsupported("What types are there?"));
        assert!(!unsupported("list the relationship types"));
        assert!(!unsupported("count the documents"));
        assert!(!unsupported("Traverse from the roadmap"));
        assert!(!unsupported("Ana Silva's projects"));
        assert!(!unsupported("documents grouped by status"));
    }
}
