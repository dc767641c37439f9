//! The object a JSON text is becoming, from a prefix of it: what a model has written of a
//! tool call's arguments so far, completed as little as possible into valid JSON — an open
//! string value is closed where it stands, a member or element cut short is left out, open
//! objects and arrays are closed. Used to show an MCP App the input its call is about to get
//! (`ui/notifications/tool-input-partial`); never used for a call itself.

use serde_json::{Map, Value};

/// The object `prefix` is the beginning of, as far as it can be told; `None` when the prefix
/// does not start an object (or is not JSON at all).
pub(crate) fn partial_object(prefix: &str) -> Option<Map<String, Value>> {
    if let Ok(value) = serde_json::from_str::<Value>(prefix) {
        return value.as_object().cloned();
    }
    let scan = Scan::of(prefix);
    let mut candidates = Vec::with_capacity(2);
    if let Some(open) = &scan.open_value {
        candidates.push(format!("{}\"{}", &prefix[..open.cut], open.closers));
    }
    if let Some(safe) = &scan.last_safe {
        candidates.push(format!("{}{}", &prefix[..safe.cut], safe.closers));
    }
    candidates
        .iter()
        .find_map(|candidate| match serde_json::from_str(candidate) {
            Ok(Value::Object(object)) => Some(object),
            _ => None,
        })
}

/// A place `prefix` can be cut, and what closes everything open there.
#[derive(Debug)]
struct Cut {
    cut: usize,
    closers: String,
}

#[derive(Clone, Copy, Debug)]
enum Open {
    /// An object, expecting a key next (or a value after its `:`).
    Object {
        expect_key: bool,
    },
    Array,
}

/// One pass over the prefix: the last place where a whole value ended, and the string value
/// left open at the end, if any.
#[derive(Debug, Default)]
struct Scan {
    last_safe: Option<Cut>,
    open_value: Option<Cut>,
}

impl Scan {
    fn of(prefix: &str) -> Scan {
        let mut scan = Scan::default();
        let mut stack: Vec<Open> = Vec::new();
        let mut string: Option<StringState> = None;
        for (at, character) in prefix.char_indices() {
            if let Some(state) = &mut string {
                if state.escaped {
                    state.escaped = false;
                } else if character == '\\' {
                    state.escaped = true;
                    state.last_escape = at;
                } else if character == '"' {
                    if !state.is_key {
                        scan.safe_at(at + 1, &stack);
                    }
                    string = None;
                }
                continue;
            }
            match character {
                '"' => {
                    let is_key = matches!(stack.last(), Some(Open::Object { expect_key: true }));
                    string = Some(StringState {
                        is_key,
                        escaped: false,
                        start: at,
                        last_escape: at,
                    });
                }
                '{' => {
                    stack.push(Open::Object { expect_key: true });
                    scan.safe_at(at + 1, &stack);
                }
                '[' => {
                    stack.push(Open::Array);
                    scan.safe_at(at + 1, &stack);
                }
                '}' | ']' => {
                    stack.pop();
                    scan.safe_at(at + 1, &stack);
                }
                ':' => set_expect_key(&mut stack, false),
                ',' => {
                    scan.safe_at(at, &stack);
                    set_expect_key(&mut stack, true);
                }
                _ => {}
            }
        }
        if let Some(state) = string.filter(|state| !state.is_key) {
            scan.open_value = Some(Cut {
                cut: state.open_cut(prefix),
                closers: closers(&stack),
            });
        }
        scan
    }

    fn safe_at(&mut self, cut: usize, stack: &[Open]) {
        self.last_safe = Some(Cut {
            cut,
            closers: closers(stack),
        });
    }
}

/// A string being read: a key or a value, and where an escape sequence began.
struct StringState {
    is_key: bool,
    escaped: bool,
    start: usize,
    last_escape: usize,
}

impl StringState {
    /// Where to cut an open string value so that closing it is valid: before an escape
    /// sequence cut short (`\`, or `\u` with fewer than four hex digits).
    fn open_cut(&self, prefix: &str) -> usize {
        if self.escaped {
            return self.last_escape;
        }
        let after_escape = &prefix[self.last_escape..];
        let unfinished_unicode = self.last_escape > self.start
            && after_escape.starts_with("\\u")
            && after_escape.len() < 6;
        if unfinished_unicode {
            self.last_escape
        } else {
            prefix.len()
        }
    }
}

fn set_expect_key(stack: &mut [Open], expect: bool) {
    if let Some(Open::Object { expect_key }) = stack.last_mut() {
        *expect_key = expect;
    }
}

fn closers(stack: &[Open]) -> String {
    stack
        .iter()
        .rev()
        .map(|open| match open {
            Open::Object { .. } => '}',
            Open::Array => ']',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(prefix: &str, expected: Option<Value>) {
        assert_eq!(
            partial_object(prefix).map(Value::Object),
            expected,
            "prefix {prefix:?}"
        );
    }

    #[test]
    fn every_prefix_of_an_object_reads_as_what_it_has_so_far() {
        check("", None);
        check("{", Some(json!({})));
        check("{\"ti", Some(json!({})));
        check("{\"title\"", Some(json!({})));
        check("{\"title\": ", Some(json!({})));
        check(
            "{\"title\": \"Quarterly re",
            Some(json!({"title": "Quarterly re"})),
        );
        check(
            "{\"title\": \"Q\", \"rows\": [1, 2",
            Some(json!({"title": "Q", "rows": [1]})),
        );
        check(
            "{\"title\": \"Q\", \"rows\": [1, 2]",
            Some(json!({"title": "Q", "rows": [1, 2]})),
        );
        check(
            "{\"a\": {\"b\": [{\"c\": \"d",
            Some(json!({"a": {"b": [{"c": "d"}]}})),
        );
        check("{\"n\": tru", Some(json!({})));
        check("{\"n\": true, \"m\": 12", Some(json!({"n": true})));
        check("{\"n\": 1}", Some(json!({"n": 1})));
    }

    #[test]
    fn escapes_cut_short_are_left_out_and_braces_in_strings_are_text() {
        check("{\"s\": \"a\\", Some(json!({"s": "a"})));
        check("{\"s\": \"a\\u00", Some(json!({"s": "a"})));
        check("{\"s\": \"a\\u00e9", Some(json!({"s": "aé"})));
        check("{\"s\": \"a\\\"b", Some(json!({"s": "a\"b"})));
        check("{\"s\": \"{[,", Some(json!({"s": "{[,"})));
        check("{\"k\\\"ey\": \"v", Some(json!({"k\"ey": "v"})));
    }

    #[test]
    fn what_is_not_an_object_gives_nothing() {
        check("[1, 2", None);
        check("\"text", None);
        check("not json", None);
    }
}
