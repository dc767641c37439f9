//! JSON with comments, as VS Code and Cursor write `mcp.json`: `//` and `/* */` comments and
//! trailing commas are removed (outside strings) before `serde_json` reads the text. Nothing
//! else is relaxed, so positions in serde's error messages still point at the same line.

/// `text` without comments and trailing commas; newlines inside comments are kept so that
/// line numbers stay true.
pub(super) fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(character) = chars.next() {
        if in_string {
            out.push(character);
            match character {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (character, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(character);
            }
            ('/', Some('/')) => {
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut previous = ' ';
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                    }
                    if previous == '*' && skipped == '/' {
                        break;
                    }
                    previous = skipped;
                }
            }
            _ => out.push(character),
        }
    }
    without_trailing_commas(&out)
}

/// Removes a `,` followed (after blanks) by `}` or `]`, outside strings.
fn without_trailing_commas(text: &str) -> String {
    let characters: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut index = 0;
    while index < characters.len() {
        let character = characters[index];
        if in_string {
            out.push(character);
            if character == '\\' {
                if let Some(next) = characters.get(index + 1) {
                    out.push(*next);
                    index += 1;
                }
            } else if character == '"' {
                in_string = false;
            }
        } else if character == '"' {
            in_string = true;
            out.push(character);
        } else if character == ',' {
            let next = characters[index + 1..]
                .iter()
                .find(|candidate| !candidate.is_whitespace());
            if !matches!(next, Some('}' | ']')) {
                out.push(character);
            }
        } else {
            out.push(character);
        }
        index += 1;
    }
    out
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
        assert_eq!(strip(text).lines().count(), text.lines().count());
    }
}
