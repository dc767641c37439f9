//! Finding objects by name across types: the lookup a caller needs when a question names an
//! object ("the product roadmap", "Ana Silva") without saying what kind of object it is.
//!
//! Only an object's label (its `title` or `name`, else its id) is matched, never other
//! property values: a name lookup, not full-text search. Matching is case-insensitive and
//! ranked: the exact name, then the name containing the query as a phrase, then the name
//! containing every query word (a word may instead name the object's type, so "platform
//! team" finds the Team named Platform).

use crate::data::ObjectRecord;
use crate::error::KgError;
use crate::graph::KnowledgeGraph;

pub const DEFAULT_SEARCH_LIMIT: usize = 10;
pub const MAX_SEARCH_LIMIT: usize = 100;

/// How well an object's label matched (whole words only); the variants are in increasing
/// order of quality.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameMatch {
    /// Every query word is a word of the label or names the object's type.
    AllWords,
    /// The label contains the query as a phrase.
    Phrase,
    /// The label (or the id) is the query.
    Exact,
}

impl NameMatch {
    pub fn as_str(self) -> &'static str {
        match self {
            NameMatch::AllWords => "all_words",
            NameMatch::Phrase => "phrase",
            NameMatch::Exact => "exact",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ObjectSearchHit<'a> {
    pub object: &'a ObjectRecord,
    pub matched: NameMatch,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ObjectSearch<'a> {
    /// Best matches first (then by label and id), at most the limit asked for.
    pub hits: Vec<ObjectSearchHit<'a>>,
    /// How many objects matched in all.
    pub total_matching: usize,
}

impl KnowledgeGraph {
    /// Objects whose label matches `query`, of `type_name` only when given; `limit` 1..=100
    /// (default 10).
    pub fn search_objects(
        &self,
        query: &str,
        type_name: Option<&str>,
        limit: Option<usize>,
    ) -> Result<ObjectSearch<'_>, KgError> {
        let query = query.trim().to_lowercase();
        let query_words = words(&query);
        if query_words.is_empty() {
            return Err(KgError::invalid_argument(
                "query must contain a word or number to look for",
            ));
        }
        if let Some(type_name) = type_name {
            self.schema.require_object_type(type_name)?;
        }
        let limit = limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
        if limit == 0 || limit > MAX_SEARCH_LIMIT {
            return Err(KgError::invalid_argument(format!(
                "limit must be between 1 and {MAX_SEARCH_LIMIT}, got {limit}"
            )));
        }
        let mut hits: Vec<ObjectSearchHit<'_>> = self
            .objects
            .values()
            .filter(|object| type_name.is_none_or(|wanted| wanted == object.object_type))
            .filter_map(|object| {
                name_match(object, &query, &query_words)
                    .map(|matched| ObjectSearchHit { object, matched })
            })
            .collect();
        hits.sort_by(|a, b| {
            b.matched
                .cmp(&a.matched)
                .then_with(|| {
                    a.object
                        .label()
                        .to_lowercase()
                        .cmp(&b.object.label().to_lowercase())
                })
                .then_with(|| a.object.id.cmp(&b.object.id))
        });
        let total_matching = hits.len();
        hits.truncate(limit);
        Ok(ObjectSearch {
            hits,
            total_matching,
        })
    }
}

fn name_match(object: &ObjectRecord, query: &str, query_words: &[String]) -> Option<NameMatch> {
    let label = object.label().to_lowercase();
    if label == query || object.id.to_lowercase() == query {
        return Some(NameMatch::Exact);
    }
    let label_words = words(&label);
    let padded = |words: &[String]| format!(" {} ", words.join(" "));
    if padded(&label_words).contains(&padded(query_words)) {
        return Some(NameMatch::Phrase);
    }
    let type_name = object.object_type.to_lowercase();
    let in_label = |word: &String| label_words.contains(word);
    let names_type = |word: &String| {
        *word == type_name
            || word.strip_suffix('s') == Some(type_name.as_str())
            || word.strip_suffix("es") == Some(type_name.as_str())
    };
    (query_words.iter().any(in_label)
        && query_words
            .iter()
            .all(|word| in_label(word) || names_type(word)))
    .then_some(NameMatch::AllWords)
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}
