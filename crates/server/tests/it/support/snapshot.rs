//! Snapshots (`insta`) of the API's answers and the chat's events, so the contract is reviewed
//! as data. What changes from run to run is replaced before a snapshot is taken, so a snapshot
//! changes only when the contract does:
//! - ids (UUIDs, anywhere in a string) become `[id-N]`, numbered in order of first appearance
//!   within one [`Stable`], so a snapshot still shows which answers name the same thing;
//! - timestamps (RFC 3339 strings) become `[timestamp]`, loopback ports `[port]`, our bearer
//!   tokens (`sb_…`) `[token]`, the checkout's path `[repo]`;
//! - durations and other measured numbers are redacted by key with insta's redactions
//!   ([`settings`]).
//!
//! Replacing by value rather than by key keeps the redaction right when a field is renamed.
//! A mismatch fails plain `cargo test`; `INSTA_UPDATE=always` writes the new snapshots (README,
//! Development).

use serde_json::{Map, Value};
use std::collections::HashMap;
use switchboard_test_support::interop::repo_root;

/// Keys whose numbers are measured, not part of the contract (the key stays, the value goes).
const MEASURED_KEYS: [&str; 4] = ["duration_ms", "latency", "latency_ms", "pid"];

/// Snapshot settings shared by every snapshot: maps sorted (the key order of a JSON object is
/// not part of the contract), measured numbers redacted wherever they appear.
pub fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_sort_maps(true);
    settings.set_prepend_module_to_snapshot(false);
    for key in MEASURED_KEYS {
        settings.add_redaction(&format!(".**.{key}"), "[measured]");
    }
    settings
}

/// Replaces what changes between runs; one instance per test keeps id numbers consistent
/// across that test's snapshots.
#[derive(Default)]
pub struct Stable {
    ids: HashMap<String, usize>,
}

impl Stable {
    pub fn new() -> Self {
        Self::default()
    }

    /// `value` with ids, timestamps, ports and tokens replaced.
    pub fn of(&mut self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.text(text)),
            Value::Array(items) => Value::Array(items.iter().map(|item| self.of(item)).collect()),
            Value::Object(fields) => {
                let mut stable = Map::new();
                for (key, field) in fields {
                    stable.insert(self.text(key), self.of(field));
                }
                Value::Object(stable)
            }
            other => other.clone(),
        }
    }

    /// Several values (e.g. an SSE transcript) with one numbering.
    pub fn all(&mut self, values: &[Value]) -> Vec<Value> {
        values.iter().map(|value| self.of(value)).collect()
    }

    fn text(&mut self, text: &str) -> String {
        if chrono::DateTime::parse_from_rfc3339(text).is_ok() {
            return "[timestamp]".to_owned();
        }
        if text.starts_with("sb_") && !text.contains(' ') {
            return "[token]".to_owned();
        }
        let root = repo_root().to_string_lossy().into_owned();
        let text = self.replace_ids(text).replace(&root, "[repo]");
        replace_ports(&text)
    }

    fn replace_ids(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = find_uuid(rest) {
            out.push_str(&rest[..start]);
            let id = &rest[start..start + 36];
            let next = self.ids.len() + 1;
            let number = *self.ids.entry(id.to_owned()).or_insert(next);
            out.push_str(&format!("[id-{number}]"));
            rest = &rest[start + 36..];
        }
        out.push_str(rest);
        out
    }
}

/// The byte offset of the first UUID (8-4-4-4-12 hex digits) in `text`.
fn find_uuid(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(35)).find(|&start| is_uuid(&bytes[start..start + 36]))
}

fn is_uuid(candidate: &[u8]) -> bool {
    candidate
        .iter()
        .enumerate()
        .all(|(index, byte)| match index {
            8 | 13 | 18 | 23 => *byte == b'-',
            _ => byte.is_ascii_hexdigit(),
        })
}

/// `127.0.0.1:PORT` and `localhost:PORT` with the port replaced.
fn replace_ports(text: &str) -> String {
    let mut out = text.to_owned();
    for host in ["127.0.0.1:", "localhost:"] {
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(host) {
            let after = at + host.len();
            result.push_str(&rest[..after]);
            let digits = rest[after..].bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 {
                result.push_str("[port]");
            }
            rest = &rest[after + digits..];
        }
        result.push_str(rest);
        out = result;
    }
    out
}

#[test]
fn stable_values_keep_the_shape_and_number_ids_in_order() {
    let mut stable = Stable::new();
    let value = serde_json::json!({
        "id": "0192f1c2-7a3b-7c4d-8e9f-0a1b2c3d4e5f",
        "other": "x 0192f1c2-7a3b-7c4d-8e9f-aaaaaaaaaaaa y",
        "again": ["0192f1c2-7a3b-7c4d-8e9f-0a1b2c3d4e5f"],
        "at": "2026-11-25T15:14:50.123Z",
        "url": "http://127.0.0.1:43121/mcp",
        "token": "sb_abc123",
        "count": 3
    });
    assert_eq!(
        stable.of(&value),
        serde_json::json!({
            "id": "[id-1]",
            "other": "x [id-2] y",
            "again": ["[id-1]"],
            "at": "[timestamp]",
            "url": "http://127.0.0.1:[port]/mcp",
            "token": "[token]",
            "count": 3
        })
    );
}
