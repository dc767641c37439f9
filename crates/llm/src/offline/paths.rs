//! File-system paths and glob patterns written in a question ("read /tmp/notes.txt", "what's in
//! ~/projects", "files matching *.rs"), for the `path`/`pattern` parameters of file tools.
//!
//! Read from the raw question, not from word tokens: a path's slashes and dots are what make it
//! a path, and the word tokenizer drops them. Knows nothing about tools.

/// Whether a word token of the question is part of a path or pattern (so it is not also read
/// as a name).
pub(crate) fn is_part_of(found: &PathMentions, word: &str) -> bool {
    found.paths.iter().chain(&found.patterns).any(|path| {
        path.split(['/', '\\', '*'])
            .any(|segment| segment == word || segment.trim_start_matches('.') == word)
    })
}

/// Paths and patterns in the order they appear.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PathMentions {
    pub paths: Vec<String>,
    pub patterns: Vec<String>,
}

/// Extensions short enough to tell `notes.txt` from the end of a sentence.
const MAX_EXTENSION_LENGTH: usize = 5;

pub(crate) fn read_paths(question: &str) -> PathMentions {
    let mut found = PathMentions::default();
    for chunk in question.split_whitespace() {
        let chunk = chunk
            .trim_start_matches(['"', '\'', '`', '(', '“', '‘'])
            .trim_end_matches(['"', '\'', '`', ')', '?', '!', ',', ';', ':', '”', '’', '.']);
        if chunk.is_empty() {
            continue;
        }
        if chunk.contains('*') || chunk.contains('?') {
            found.patterns.push(chunk.to_owned());
        } else if is_path(chunk) {
            found.paths.push(chunk.to_owned());
        }
    }
    found
}

/// `/var/log`, `~/notes`, `./src`, `C:\data`, `docs/guide.md`, `README.md`.
fn is_path(chunk: &str) -> bool {
    if chunk.contains("://") || chunk.chars().any(char::is_whitespace) {
        return false;
    }
    let rooted = chunk.starts_with('/')
        || chunk.starts_with("~/")
        || chunk.starts_with("./")
        || chunk.starts_with("../")
        || chunk.get(1..3) == Some(":\\");
    let parts: Vec<&str> = chunk.split('/').filter(|part| !part.is_empty()).collect();
    let nested = parts.len() > 2 || parts.len() == 2 && is_file_name(parts[1]);
    rooted || nested || is_file_name(chunk)
}

/// `notes.txt`, `Cargo.toml`: a name, a dot and a short alphabetic extension (not `v1.2`).
fn is_file_name(chunk: &str) -> bool {
    let Some((stem, extension)) = chunk.rsplit_once('.') else {
        return false;
    };
    !stem.is_empty()
        && stem
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && stem.chars().any(char::is_alphabetic)
        && (1..=MAX_EXTENSION_LENGTH).contains(&extension.len())
        && extension.chars().all(|c| c.is_ascii_alphanumeric())
        && extension.chars().any(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_paths_and_patterns() {
        let found = read_paths("find files matching *.rs in /src, then read 'docs/guide.md'.");
        assert_eq!(found.patterns, ["*.rs"]);
        assert_eq!(found.paths, ["/src", "docs/guide.md"]);
        assert_eq!(read_paths("show me README.md?").paths, ["README.md"]);
        assert_eq!(read_paths("what is in ~/projects").paths, ["~/projects"]);
    }

    #[test]
    fn sentences_versions_and_urls_are_not_paths() {
        for question in [
            "What changed since v1.2?",
            "It is 3.5 out of 5. Really.",
            "see https://example.com/a",
            "how are teams and/or people related?",
        ] {
            assert!(read_paths(question).paths.is_empty(), "{question}");
        }
    }
}
