//! Reading a question for arguments: type names ("Documents", "the document type"), named
//! objects ("the Product Roadmap document", quoted names), numbers, schema versions, dates
//! (ISO or "last 7 days"), a direction, a group-by property and free text after words like
//! "mention" or "search for".

use chrono::NaiveDate;

use super::dates::read_date;
use super::known_values::KnownValues;
use super::paths::{PathMentions, is_part_of, read_paths};
use super::text::{is_schema_word, is_stop_word, singular, stem, synonyms, type_name_form};
use super::tokens::{Token, tokenize};

/// A named object the question refers to, with the type word next to it if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ObjectMention {
    pub name: String,
    pub type_hint: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Mentions {
    /// The question as asked.
    pub question: String,
    /// Canonical type names in order of appearance, without duplicates.
    pub types: Vec<String>,
    /// Types guessed from plural nouns after "how many", "list", "all"… (weaker).
    pub guessed_types: Vec<String>,
    pub objects: Vec<ObjectMention>,
    pub numbers: Vec<u64>,
    pub version: Option<String>,
    pub date: Option<String>,
    /// Ids written out in the question (`doc-product-roadmap`) or known objects named.
    pub ids: Vec<String>,
    pub direction: Option<&'static str>,
    pub group_by: Option<String>,
    pub free_text: Option<String>,
    /// The first word, stemmed: the verb of an imperative ("echo …", "create …").
    pub leading_verb: String,
    /// The question's text after its first word (for imperatives such as "echo hello").
    pub rest_after_leading_verb: String,
    /// File-system paths and glob patterns written in the question.
    pub paths: PathMentions,
    /// Token positions already read as a date or a path, so they are not read again as a name or number.
    pub consumed: Vec<usize>,
}

/// Words after which a capitalised word is a type rather than an object name.
const TYPE_MARKER_WORDS: &[&str] = &["type", "types", "object", "objects", "kind", "kinds"];
/// Lower-case words that cannot be a type hint for a name next to them.
const NOT_TYPE_HINTS: &[&str] = &[
    "related",
    "relate",
    "linked",
    "connected",
    "is",
    "are",
    "was",
    "has",
    "have",
    "and",
    "or",
    "with",
    "between",
    "from",
    "to",
    "in",
    "of",
    "by",
    "for",
    "that",
    "which",
    "mean",
];
const FREE_TEXT_TRIGGERS: &[&str] = &[
    "mention",
    "mentions",
    "mentioning",
    "containing",
    "contains",
    "contain",
    "matching",
    "match",
    "matches",
    "named",
    "called",
];

impl Mentions {
    pub fn read(question: &str, known: &KnownValues, today: NaiveDate) -> Self {
        let tokens = tokenize(question);
        let mut mentions = Mentions {
            question: question.to_owned(),
            ..Mentions::default()
        };
        if let Some(first) = tokens.first() {
            mentions.leading_verb = stem(&first.text.to_lowercase());
            let rest = question
                .trim_start()
                .split_once(char::is_whitespace)
                .map_or("", |(_, rest)| rest);
            mentions.rest_after_leading_verb = rest.trim().to_owned();
        }
        if let Some(date) = read_date(&tokens, today) {
            mentions.date = Some(date.date.format("%Y-%m-%d").to_string());
            mentions.consumed = date.positions;
        }
        mentions.paths = read_paths(question);
        for (position, token) in tokens.iter().enumerate() {
            if is_part_of(&mentions.paths, &token.text) {
                mentions.consumed.push(position);
            }
        }
        mentions.read_quoted(&tokens, known);
        mentions.read_capitalised_runs(&tokens, known);
        mentions.read_lowercase_types(&tokens, known);
        mentions.read_scalars(&tokens, known);
        mentions.read_free_text(&tokens);
        mentions
    }

    fn add_type(&mut self, name: String) {
        if !self.types.contains(&name) {
            self.types.push(name);
        }
    }

    fn canonical_type(word: &str, known: &KnownValues) -> String {
        known
            .type_named(word)
            .map(str::to_owned)
            .unwrap_or_else(|| type_name_form(word))
    }

    fn read_quoted(&mut self, tokens: &[Token], known: &KnownValues) {
        for (position, token) in tokens.iter().enumerate() {
            if token.quoted && !self.consumed.contains(&position) {
                let type_hint = type_hint_around(tokens, position, position, known);
                self.objects.push(ObjectMention {
                    name: token.text.clone(),
                    type_hint,
                });
            }
        }
    }

    fn read_capitalised_runs(&mut self, tokens: &[Token], known: &KnownValues) {
        let mut position = 0;
        while position < tokens.len() {
            let token = &tokens[position];
            if token.quoted
                || self.consumed.contains(&position)
                || !is_capitalised(&token.text)
                || is_stop_word(&token.text.to_lowercase())
            {
                position += 1;
                continue;
            }
            let mut end = position;
            while end + 1 < tokens.len()
                && !tokens[end].phrase_end
                && !tokens[end + 1].quoted
                && !tokens[end + 1].sentence_start
                && !self.consumed.contains(&(end + 1))
                && is_capitalised(&tokens[end + 1].text)
            {
                end += 1;
            }
            let run: Vec<&str> = tokens[position..=end]
                .iter()
                .map(|t| t.text.as_str())
                .collect();
            let starts_sentence = token.sentence_start;
            if run.len() == 1 {
                self.read_capitalised_word(tokens, position, known);
            } else {
                let run = if starts_sentence && known.type_named(run[0]).is_none() && run.len() > 2
                {
                    &run[1..]
                } else {
                    &run[..]
                };
                if run.iter().all(|word| known.type_named(word).is_some()) {
                    for word in run {
                        self.add_type(Self::canonical_type(word, known));
                    }
                } else {
                    self.objects.push(ObjectMention {
                        name: run.join(" "),
                        type_hint: type_hint_around(tokens, position, end, known),
                    });
                }
            }
            position = end + 1;
        }
    }

    /// One capitalised word alone: a type ("Projects", "the Team type", "a Team"), a name with
    /// its type next to it, a name ("Alice"), or just the first word of a sentence.
    fn read_capitalised_word(&mut self, tokens: &[Token], position: usize, known: &KnownValues) {
        let word = tokens[position].text.as_str();
        let is_known_type = known.type_named(word).is_some();
        let next_word = tokens
            .get(position + 1)
            .filter(|_| !tokens[position].phrase_end)
            .map(|t| t.text.to_lowercase());
        let previous_word = position
            .checked_sub(1)
            .filter(|before| !tokens[*before].phrase_end)
            .map(|before| tokens[before].text.to_lowercase());
        // "the Team type", "of type Tag", "a Team": a kind, not a name.
        let marked_as_type = next_word
            .as_deref()
            .is_some_and(|w| TYPE_MARKER_WORDS.contains(&w))
            || previous_word
                .as_deref()
                .is_some_and(|w| ["type", "a", "an", "each", "every", "kind"].contains(&w));
        if is_schema_word(&word.to_lowercase()) && !is_known_type {
            // "Relationship types", "Properties of …": schema vocabulary.
        } else if tokens[position].sentence_start && !is_known_type && !marked_as_type {
            // "Show", "What", "Tell": capitalised only because they start the sentence.
        } else if is_known_type || marked_as_type {
            self.add_type(Self::canonical_type(word, known));
        } else if let Some(hint) = type_hint_around(tokens, position, position, known) {
            self.objects.push(ObjectMention {
                name: word.to_owned(),
                type_hint: Some(hint),
            });
        } else if word.chars().count() > 1 && word != "I" {
            // Not a known type (those known may be only the few seen so far): a plural
            // ("Projects") is read as one; a singular ("Alice") is a name.
            if looks_plural(word) {
                self.add_type(Self::canonical_type(word, known));
            } else {
                self.objects.push(ObjectMention {
                    name: word.to_owned(),
                    type_hint: None,
                });
            }
        }
    }

    fn read_lowercase_types(&mut self, tokens: &[Token], known: &KnownValues) {
        for (position, token) in tokens.iter().enumerate() {
            if token.quoted || is_capitalised(&token.text) || self.consumed.contains(&position) {
                continue;
            }
            let lower = token.text.to_lowercase();
            if is_stop_word(&lower) || TYPE_MARKER_WORDS.contains(&lower.as_str()) {
                continue;
            }
            let next = tokens.get(position + 1).map(|t| t.text.to_lowercase());
            let before_marker = next.as_deref().is_some_and(|w| w == "type" || w == "types");
            let already_a_hint = self
                .objects
                .iter()
                .any(|object| object.type_hint.as_deref() == Some(&*type_name_form(&lower)));
            if let Some(name) = known.type_named(&lower) {
                if !already_a_hint {
                    self.add_type(name.to_owned());
                }
            } else if is_schema_word(&lower)
                || known.is_tool_word(&lower)
                || synonyms(&stem(&lower))
                    .iter()
                    .any(|word| known.is_tool_word(word))
            {
                // "relationship types", "the file": words of the tools, not types.
            } else if before_marker {
                self.add_type(type_name_form(&lower));
            } else if noun_slot(tokens, position, &lower) {
                let guess = type_name_form(&lower);
                if !self.guessed_types.contains(&guess) {
                    self.guessed_types.push(guess);
                }
            }
        }
    }

    fn read_scalars(&mut self, tokens: &[Token], known: &KnownValues) {
        for (position, token) in tokens.iter().enumerate() {
            if self.consumed.contains(&position) {
                continue;
            }
            let text = token.text.as_str();
            let lower = text.to_lowercase();
            let after_version_word = position > 0
                && ["version", "revision", "v"]
                    .contains(&tokens[position - 1].text.to_lowercase().as_str());
            if is_version_hash(text) || is_semantic_version(text) {
                self.version.get_or_insert_with(|| text.to_owned());
            } else if let Ok(number) = text.parse::<u64>() {
                if after_version_word {
                    self.version.get_or_insert_with(|| text.to_owned());
                } else {
                    self.numbers.push(number);
                }
            } else if is_id_like(text) || known.objects.iter().any(|object| object.id == text) {
                self.ids.push(text.to_owned());
            }
            match lower.as_str() {
                "incoming" | "inbound" => self.direction = Some("in"),
                "outgoing" | "outbound" => self.direction = Some("out"),
                "by" | "per" | "each" => {
                    if let Some(next) = tokens.get(position + 1)
                        && !is_stop_word(&next.text.to_lowercase())
                    {
                        self.group_by = Some(singular(&next.text.to_lowercase()));
                    }
                }
                _ => {}
            }
        }
    }

    fn read_free_text(&mut self, tokens: &[Token]) {
        if let Some((_, quoted)) = tokens
            .iter()
            .enumerate()
            .find(|(position, token)| token.quoted && !self.consumed.contains(position))
        {
            self.free_text = Some(quoted.text.clone());
            return;
        }
        let trigger = tokens.iter().position(|token| {
            let lower = token.text.to_lowercase();
            FREE_TEXT_TRIGGERS.contains(&lower.as_str())
        });
        let search_for = tokens
            .iter()
            .position(|token| stem(&token.text.to_lowercase()) == "search")
            .and_then(|search| {
                tokens[search..]
                    .iter()
                    .position(|token| token.text.eq_ignore_ascii_case("for"))
                    .map(|offset| search + offset - 1)
            });
        let about = tokens
            .iter()
            .position(|token| token.text.eq_ignore_ascii_case("about"));
        let start = match (trigger, search_for, about) {
            (Some(trigger), _, _) => trigger + 1,
            (None, Some(search), _) => search + 2,
            (None, None, Some(about)) => about + 1,
            (None, None, None) => return,
        };
        let text: Vec<&str> = tokens[start..]
            .iter()
            .enumerate()
            .filter(|(offset, _)| !self.consumed.contains(&(start + offset)))
            .map(|(_, t)| t.text.as_str())
            .filter(|word| !is_stop_word(&word.to_lowercase()))
            .collect();
        if !text.is_empty() {
            self.free_text = Some(text.join(" "));
        }
    }
}

/// The type word right after (or right before) the tokens `start..=end`, if it can be one.
fn type_hint_around(
    tokens: &[Token],
    start: usize,
    end: usize,
    known: &KnownValues,
) -> Option<String> {
    let candidate = |token: &Token| -> Option<String> {
        let lower = token.text.to_lowercase();
        if token.quoted || is_stop_word(&lower) || NOT_TYPE_HINTS.contains(&lower.as_str()) {
            return None;
        }
        if let Some(name) = known.type_named(&lower) {
            return Some(name.to_owned());
        }
        let plausible =
            !known.has_types() && lower.chars().all(char::is_alphabetic) && lower.len() > 2;
        plausible.then(|| type_name_form(&lower))
    };
    let after = tokens
        .get(end + 1)
        .filter(|_| !tokens[end].phrase_end)
        .and_then(candidate);
    let before = start
        .checked_sub(1)
        .map(|index| &tokens[index])
        .filter(|token| !token.phrase_end)
        .and_then(candidate);
    after.or(before)
}

/// Whether the word at `position` is where a question names a kind of thing: a plural after
/// "all", "list", "which", "the", a number or a participle ("which projects", "5 documents",
/// "published documents"), or one word further when it ends the phrase ("the draft
/// documents?"), an irregular plural anywhere ("people"), a singular after "a", "an", "each",
/// "every" ("properties of a project"). Not any plural: "who leads", "team owns" are verbs.
fn noun_slot(tokens: &[Token], position: usize, word: &str) -> bool {
    const BEFORE_PLURAL: &[&str] = &[
        "many", "all", "list", "find", "count", "show", "which", "every", "the", "on", "of", "for",
        "any", "are", "my", "our", "to", "and", "between", "with", "from", "what", "these",
        "those", "some", "me", "describe", "explain",
    ];
    const BEFORE_SINGULAR: &[&str] = &["a", "an", "each", "every", "one"];
    const AFTER_NOUN: &[&str] = &[
        "that", "which", "who", "are", "were", "with", "in", "from", "by", "of", "for", "whose",
        "have", "has", "grouped", "per",
    ];
    let text_at = |index: Option<usize>| {
        index
            .and_then(|index| tokens.get(index))
            .map(|token| token.text.to_lowercase())
            .unwrap_or_default()
    };
    let previous = text_at(position.checked_sub(1));
    let slot = |before: &str| {
        BEFORE_PLURAL.contains(&before)
            || before.parse::<u64>().is_ok()
            || before.len() > 4 && before.ends_with("ed")
    };
    let ends_phrase = tokens[position].phrase_end
        || position + 1 == tokens.len()
        || AFTER_NOUN.contains(&text_at(Some(position + 1)).as_str());
    let plural_slot =
        position == 0 || slot(&previous) || ends_phrase && slot(&text_at(position.checked_sub(2)));
    let plural = looks_plural(word) && !word.ends_with("us");
    let irregular_plural = singular(word) != word && !word.ends_with('s');
    word.chars().all(char::is_alphabetic)
        && word.len() > 2
        && (irregular_plural
            || plural && plural_slot
            || !plural && BEFORE_SINGULAR.contains(&previous.as_str()))
}

fn looks_plural(word: &str) -> bool {
    let lower = word.to_lowercase();
    lower.chars().count() > 3 && lower.ends_with('s') && !lower.ends_with("ss")
}

fn is_capitalised(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

fn is_version_hash(text: &str) -> bool {
    (7..=64).contains(&text.len())
        && text
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        && text.chars().any(|c| c.is_ascii_digit())
        && text.chars().any(|c| c.is_ascii_alphabetic())
}

fn is_semantic_version(text: &str) -> bool {
    let digits = text.strip_prefix('v').unwrap_or(text);
    digits.split('.').count() >= 2
        && digits
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
}

/// `doc-product-roadmap`, `person-ana-silva`, UUIDs: lower-case words joined by hyphens.
fn is_id_like(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    parts.len() >= 2
        && parts.iter().all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

#[cfg(test)]
#[path = "mentions_tests.rs"]
mod tests;
