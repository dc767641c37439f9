//! BM25 ranking of the offered tools against a question.
//!
//! Each tool becomes a small document: its name words (weighted ×3, the namespace prefix ×1),
//! its description and its parameters' names and descriptions. The question's stemmed words
//! count fully; their synonyms count for `SYNONYM_WEIGHT`. A bonus rewards questions that
//! contain every word of a tool's own name ("schema version" → `schema_version`).

use std::collections::HashMap;

use serde_json::Value;
use switchboard_core::ToolSpec;

use super::text::{is_stop_word, stem, synonyms, words};

const K1: f64 = 1.2;
const B: f64 = 0.75;
const NAME_WEIGHT: usize = 3;
const SYNONYM_WEIGHT: f64 = 0.6;
const FULL_NAME_BONUS: f64 = 1.5;
/// "list", "find": nearly every catalog has a tool named with them, so they say little about
/// which tool a question wants when other words are there.
const GENERIC_VERBS: &[&str] = &["list", "find", "get"];
const GENERIC_VERB_WEIGHT: f64 = 0.5;
/// Per question word that is a word of the tool's own name: names are the strongest signal,
/// and BM25 alone undervalues words that many tool descriptions share.
const NAME_WORD_BONUS: f64 = 1.5;

/// The offered tools, indexed for one planning call.
#[derive(Debug)]
pub(crate) struct ToolIndex<'a> {
    documents: Vec<ToolDocument<'a>>,
    document_frequency: HashMap<String, usize>,
    average_length: f64,
}

#[derive(Debug)]
struct ToolDocument<'a> {
    tool: &'a ToolSpec,
    term_counts: HashMap<String, usize>,
    length: usize,
    /// Stemmed words of the tool's own name, without the namespace.
    name_terms: Vec<String>,
}

/// One tool's relevance to the question.
#[derive(Clone, Debug)]
pub(crate) struct RankedTool<'a> {
    pub tool: &'a ToolSpec,
    pub score: f64,
}

/// The question as weighted terms.
#[derive(Clone, Debug, Default)]
pub(crate) struct QueryTerms {
    pub weights: HashMap<String, f64>,
}

impl QueryTerms {
    #[cfg(test)]
    pub fn from_question(question: &str) -> Self {
        Self::from_question_excluding(question, &[])
    }

    /// The question's terms, leaving out `excluded` words (stemmed): names of types and
    /// objects the question mentions are arguments, not intent.
    pub fn from_question_excluding(question: &str, excluded: &[String]) -> Self {
        let mut weights: HashMap<String, f64> = HashMap::new();
        let question_words = words(question);
        for (position, word) in question_words.iter().enumerate() {
            if is_stop_word(word) || modifies_schema_word(&question_words, position) {
                continue;
            }
            let stemmed = stem(word);
            if excluded.contains(&stemmed) {
                continue;
            }
            let weight = if GENERIC_VERBS.contains(&stemmed.as_str()) {
                GENERIC_VERB_WEIGHT
            } else {
                1.0
            };
            let entry = weights.entry(stemmed.clone()).or_default();
            *entry = entry.max(weight);
            for synonym in synonyms(&stemmed) {
                let entry = weights.entry((*synonym).to_owned()).or_default();
                *entry = entry.max(SYNONYM_WEIGHT);
            }
        }
        // A synonym must not raise a generic verb back to full weight.
        for verb in GENERIC_VERBS {
            if let Some(weight) = weights.get_mut(*verb) {
                *weight = weight.min(GENERIC_VERB_WEIGHT);
            }
        }
        Self { weights }
    }
}

/// "relationship types", "kinds of relations", "property types": the `type` word says what
/// sort of relationship or property, so it is not a question about object types.
fn modifies_schema_word(question_words: &[String], position: usize) -> bool {
    const MODIFIED: &[&str] = &[
        "relationship",
        "link",
        "connection",
        "edge",
        "property",
        "field",
        "attribute",
    ];
    let word = stem(&question_words[position]);
    if !["type", "kind", "sort"].contains(&word.as_str()) {
        return false;
    }
    let is_modified = |index: usize| {
        question_words
            .get(index)
            .is_some_and(|word| MODIFIED.contains(&stem(word).as_str()))
    };
    let after_of = question_words
        .get(position + 1)
        .is_some_and(|word| word == "of");
    position > 0 && is_modified(position - 1) || after_of && is_modified(position + 2)
}

/// The tool's name without its `server__` namespace.
pub(crate) fn base_name(tool_name: &str) -> &str {
    tool_name
        .rsplit_once("__")
        .map_or(tool_name, |(_, base)| base)
}

impl<'a> ToolIndex<'a> {
    pub fn new(tools: &'a [ToolSpec]) -> Self {
        let documents: Vec<ToolDocument<'a>> = tools.iter().map(ToolDocument::new).collect();
        let mut document_frequency: HashMap<String, usize> = HashMap::new();
        for document in &documents {
            for term in document.term_counts.keys() {
                *document_frequency.entry(term.clone()).or_default() += 1;
            }
        }
        let average_length = if documents.is_empty() {
            1.0
        } else {
            documents.iter().map(|d| d.length).sum::<usize>() as f64 / documents.len() as f64
        };
        Self {
            documents,
            document_frequency,
            average_length: average_length.max(1.0),
        }
    }

    /// Every tool with its score, best first (ties keep catalog order).
    pub fn rank(&self, query: &QueryTerms) -> Vec<RankedTool<'a>> {
        let total = self.documents.len() as f64;
        let mut ranked: Vec<RankedTool<'a>> = self
            .documents
            .iter()
            .map(|document| {
                let mut score = 0.0;
                for (term, weight) in &query.weights {
                    let Some(&count) = document.term_counts.get(term) else {
                        continue;
                    };
                    let frequency = self.document_frequency.get(term).copied().unwrap_or(0) as f64;
                    let idf = ((total - frequency + 0.5) / (frequency + 0.5) + 1.0).ln();
                    let count = count as f64;
                    let normalization =
                        K1 * (1.0 - B + B * document.length as f64 / self.average_length);
                    score += weight * idf * count * (K1 + 1.0) / (count + normalization);
                }
                for term in &document.name_terms {
                    if let Some(weight) = query.weights.get(term) {
                        score += NAME_WORD_BONUS * weight;
                    }
                }
                let name_words_present = document
                    .name_terms
                    .iter()
                    .filter(|term| query.weights.get(*term).is_some_and(|w| *w >= 1.0))
                    .count();
                if !document.name_terms.is_empty()
                    && name_words_present == document.name_terms.len()
                {
                    score += FULL_NAME_BONUS * document.name_terms.len() as f64;
                }
                RankedTool {
                    tool: document.tool,
                    score,
                }
            })
            .collect();
        ranked.sort_by(|left, right| right.score.total_cmp(&left.score));
        ranked
    }
}

impl<'a> ToolDocument<'a> {
    fn new(tool: &'a ToolSpec) -> Self {
        let mut terms: Vec<String> = Vec::new();
        let base = base_name(&tool.name);
        let name_terms: Vec<String> = words(base).iter().map(|word| stem(word)).collect();
        for _ in 0..NAME_WEIGHT {
            terms.extend(name_terms.iter().cloned());
        }
        if base.len() < tool.name.len() {
            let namespace = &tool.name[..tool.name.len() - base.len()];
            terms.extend(words(namespace).iter().map(|word| stem(word)));
        }
        let mut prose = tool.description.clone();
        if let Some(properties) = tool.parameters.get("properties").and_then(Value::as_object) {
            for (name, schema) in properties {
                prose.push(' ');
                prose.push_str(name);
                if let Some(description) = schema.get("description").and_then(Value::as_str) {
                    prose.push(' ');
                    prose.push_str(description);
                }
            }
        }
        terms.extend(
            words(&prose)
                .into_iter()
                .filter(|word| !is_stop_word(word))
                .map(|word| stem(&word)),
        );
        let mut term_counts: HashMap<String, usize> = HashMap::new();
        for term in &terms {
            *term_counts.entry(term.clone()).or_default() += 1;
        }
        Self {
            tool,
            length: terms.len(),
            term_counts,
            name_terms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::fixtures::kg_tools;

    fn best(question: &str) -> String {
        let tools = kg_tools();
        let index = ToolIndex::new(&tools);
        index.rank(&QueryTerms::from_question(question))[0]
            .tool
            .name
            .clone()
    }

    #[test]
    fn ranks_the_obvious_tool_first() {
        assert_eq!(best("What's the schema version?"), "kg__schema_version");
        assert_eq!(
            best("Show me the recent changes to the schema"),
            "kg__schema_changelog"
        );
        assert_eq!(best("How many documents are there?"), "kg__count_objects");
        assert_eq!(best("shortest path between two objects"), "kg__find_path");
    }

    #[test]
    fn unrelated_questions_score_zero() {
        let tools = kg_tools();
        let index = ToolIndex::new(&tools);
        let ranked = index.rank(&QueryTerms::from_question("hello, how are you?"));
        assert!(
            ranked.iter().all(|ranked| ranked.score == 0.0),
            "{ranked:?}"
        );
    }

    #[test]
    fn base_name_strips_the_namespace() {
        assert_eq!(base_name("kg__type_info"), "type_info");
        assert_eq!(base_name("echo"), "echo");
    }
}
