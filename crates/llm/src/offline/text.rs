//! Words: tokenizing messages and tool text, light stemming, stop words and the synonym table
//! that lets "recent changes" find a `changelog` tool. Shared by the tool index and the
//! message analysis so both sides agree on what a term is.

/// Lower-cased word tokens of free text; identifiers split on `_`, `-`, `.` and camelCase.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut previous_was_lower = false;
    for character in text.chars() {
        if character.is_alphanumeric() {
            if character.is_uppercase() && previous_was_lower && !current.is_empty() {
                tokens.push(std::mem::take(&mut current));
            }
            previous_was_lower = character.is_lowercase() || character.is_ascii_digit();
            current.extend(character.to_lowercase());
        } else {
            previous_was_lower = false;
            if !current.is_empty() {
                tokens.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

/// A crude English stemmer: enough to fold plurals and common verb forms together.
pub(crate) fn stem(word: &str) -> String {
    let word = word.to_lowercase();
    // One word for one idea: "relations" and "relationships" are the same question.
    if word == "relation" || word == "relations" {
        return "relationship".to_owned();
    }
    let length = word.chars().count();
    if length <= 3 {
        return word;
    }
    for (suffix, replacement, min_length) in [
        ("ies", "y", 5),
        ("sses", "ss", 5),
        ("ches", "ch", 5),
        ("shes", "sh", 5),
        ("xes", "x", 4),
        ("ing", "", 6),
        ("ied", "y", 5),
        ("ed", "", 5),
        ("s", "", 4),
    ] {
        if length >= min_length
            && word.ends_with(suffix)
            && !(suffix == "s" && (word.ends_with("ss") || word.ends_with("us")))
        {
            let mut stemmed = word[..word.len() - suffix.len()].to_owned();
            stemmed.push_str(replacement);
            // "changed" → "chang" → "change": restore a dropped silent e for common stems.
            if (suffix == "ed" || suffix == "ing") && needs_silent_e(&stemmed) {
                stemmed.push('e');
            }
            return stemmed;
        }
    }
    word
}

fn needs_silent_e(stem: &str) -> bool {
    [
        "chang", "creat", "relat", "updat", "remov", "renam", "delet", "typ", "describ", "us",
        "stor", "sav",
    ]
    .iter()
    .any(|ending| stem.ends_with(ending))
}

/// Words that carry no intent.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "but",
    "by",
    "can",
    "could",
    "do",
    "does",
    "for",
    "from",
    "give",
    "has",
    "have",
    "hello",
    "hi",
    "how",
    "i",
    "in",
    "into",
    "is",
    "it",
    "its",
    "let",
    "me",
    "my",
    "of",
    "on",
    "or",
    "our",
    "please",
    "s",
    "see",
    "show",
    "so",
    "tell",
    "that",
    "the",
    "their",
    "them",
    "there",
    "these",
    "this",
    "those",
    "to",
    "us",
    "want",
    "was",
    "we",
    "were",
    "what",
    "whats",
    "when",
    "where",
    "which",
    "who",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "know",
    "get",
    "display",
    "every",
    "each",
    "like",
    "some",
    "knowledge",
    "base",
    "kb",
    "graph",
];

/// Whether `word` carries no intent ([`STOP_WORDS`]).
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// Extra terms a (stemmed) message word stands for, so questions find tools named in other
/// words. Expansions count for less than the word itself.
pub(crate) fn synonyms(stemmed_word: &str) -> &'static [&'static str] {
    match stemmed_word {
        "change" | "changelog" | "history" | "modify" | "modification" | "evolve" | "diff" => {
            &["changelog", "change", "history"]
        }
        "recent" | "recently" | "latest" | "lately" | "new" | "last" => {
            &["changelog", "recent", "since"]
        }
        "version" | "revision" | "release" => &["version"],
        "kind" | "category" | "class" | "entity" | "model" => &["type"],
        "type" => &["type", "kind"],
        "relationship" | "relation" | "relate" | "link" | "connect" | "connection" | "edge"
        | "between" | "associate" => &["relationship", "relate", "traverse"],
        "describe" | "explain" | "detail" | "info" | "information" | "definition" | "property"
        | "field" | "attribute" => &["info", "detail", "property", "describe"],
        "find" | "list" | "search" | "lookup" | "look" | "which" | "locate" => {
            &["find", "search", "list"]
        }
        "count" | "many" | "number" | "total" | "tally" => &["count", "number"],
        "group" | "breakdown" | "distribution" => &["count", "group"],
        "path" | "route" | "chain" | "reach" => &["path", "find"],
        "neighbor" | "neighbour" | "around" | "hop" => &["traverse", "relationship"],
        "object" | "item" | "record" | "thing" | "node" | "instance" => &["object"],
        "schema" | "ontology" | "structure" => &["schema", "type"],
        "mention" | "match" | "contain" | "keyword" => &["search", "query"],
        "echo" | "repeat" | "say" => &["echo"],
        "rename" | "move" => &["move", "rename"],
        "dump" | "export" | "whole" | "entire" | "everything" => &["read", "graph", "all"],
        "open" | "view" | "cat" | "print" | "content" | "inside" => {
            &["read", "content", "file", "text"]
        }
        "folder" | "dir" => &["directory"],
        "tree" | "hierarchy" | "recursive" | "nested" => &["tree", "recursive"],
        "big" | "size" | "large" | "metadata" | "permission" => &["info", "size", "metadata"],
        "access" | "allow" => &["allowed", "access"],
        "start" | "run" | "launch" | "begin" | "kick" => &["trigger", "run", "operation"],
        "remember" | "memory" | "recall" | "memorise" | "memorize" => {
            &["memory", "knowledge", "search", "node"]
        }
        "env" | "environment" | "variable" => &["env", "environment"],
        "image" | "picture" | "logo" | "photo" => &["image"],
        "file" => &["file"],
        "add" | "sum" | "plus" => &["add", "sum"],
        _ => &[],
    }
}

/// Words that name parts of a schema or of the tools themselves, never an object type:
/// "list the relationship types" asks for relationships, not for a type `Relationship`.
pub(crate) fn is_schema_word(word: &str) -> bool {
    const SCHEMA_WORDS: &[&str] = &[
        "relationship",
        "relation",
        "link",
        "connection",
        "edge",
        "property",
        "field",
        "attribute",
        "object",
        "type",
        "kind",
        "entity",
        "node",
        "schema",
        "value",
        "enum",
        "change",
        "version",
        "name",
        "thing",
        "item",
        "record",
        "instance",
        "category",
        "class",
        "tool",
        "detail",
        "option",
        "update",
        "modification",
        "line",
        "content",
        "status",
    ];
    SCHEMA_WORDS.contains(&stem(&singular(word)).as_str())
}

/// Singular, capitalised form of a type word: "documents" → "Document".
pub(crate) fn type_name_form(word: &str) -> String {
    let singular = singular(word);
    let mut characters = singular.chars();
    match characters.next() {
        Some(first) => first.to_uppercase().chain(characters).collect(),
        None => String::new(),
    }
}

/// "Projects" → "Projects"[..-1]; "Categories" → "Category"; leaves "Status" alone.
pub(crate) fn singular(word: &str) -> String {
    let lower = word.to_lowercase();
    for (plural, one) in [
        ("people", "person"),
        ("children", "child"),
        ("men", "man"),
        ("women", "woman"),
    ] {
        if lower == plural {
            let mut singular = one.to_owned();
            if word.starts_with(char::is_uppercase) {
                singular[..1].make_ascii_uppercase();
            }
            return singular;
        }
    }
    if lower.len() > 4 && lower.ends_with("ies") {
        return format!("{}y", &word[..word.len() - 3]);
    }
    if lower.len() > 3
        && lower.ends_with('s')
        && !lower.ends_with("ss")
        && !lower.ends_with("us")
        && !lower.ends_with("is")
    {
        return word[..word.len() - 1].to_owned();
    }
    word.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_identifiers_and_prose() {
        assert_eq!(words("kg__schema_changelog"), ["kg", "schema", "changelog"]);
        assert_eq!(
            words("findObjects byType"),
            ["find", "objects", "by", "type"]
        );
        assert_eq!(
            words("What's the schema version?"),
            ["what", "s", "the", "schema", "version"]
        );
    }

    #[test]
    fn stems_fold_plurals_and_verb_forms() {
        assert_eq!(stem("changes"), "change");
        assert_eq!(stem("changed"), "change");
        assert_eq!(stem("relationships"), "relationship");
        assert_eq!(stem("types"), "type");
        assert_eq!(stem("categories"), "category");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("objects"), "object");
        assert_eq!(stem("related"), "relate");
    }

    #[test]
    fn type_name_form_is_singular_and_capitalised() {
        assert_eq!(type_name_form("documents"), "Document");
        assert_eq!(type_name_form("Projects"), "Project");
        assert_eq!(type_name_form("Status"), "Status");
        assert_eq!(type_name_form("Categories"), "Category");
    }
}
