//! JSON with comments, as VS Code and Cursor write `mcp.json`: `//` and `/* */` comments and
//! trailing commas are blanked out (outside strings) by `json-strip-comments` before
//! `serde_json` reads the text. They are replaced by spaces, never removed, so the text keeps its
//! length and, outside multi-line block comments, serde's lines and columns still point at the
//! person's file (the crate also blanks shell-style
//! `#` comments, which are never valid JSON, so accepting them changes nothing else).

use json_strip_comments::strip_comments_in_place;

/// `text` with its comments and trailing commas blanked out. Text the stripper cannot read (an
/// unterminated comment) is returned as it came, so serde reports where it breaks.
pub(super) fn strip(text: &str) -> String {
    let mut stripped = text.to_owned();
    match strip_comments_in_place(&mut stripped) {
        Ok(()) => stripped,
        Err(_) => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn comments_and_trailing_commas_go_strings_stay() {
        let text = "{\n  // a comment\n  \"a\": \"http://x/*y*/\", /* b\n c */ \"b\": [1, 2,],\n  \"c\": \"q\\\"//\",\n}";
        let value: serde_json::Value = serde_json::from_str(&strip(text)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"a": "http://x/*y*/", "b": [1, 2], "c": "q\"//"})
        );
        assert_eq!(strip(text).len(), text.len());
    }

    #[test]
    fn positions_are_kept() {
        let text = "{ /* x */ \"a\": 1, }";
        assert_eq!(strip(text).len(), text.len());
    }
}
