//! The configuration layers and how they merge: built-in defaults (the section structs'
//! `Default`), then the TOML file, then environment variables, then command-line flags. Every
//! value that does not come from a default remembers its origin, so an error can say
//! "`chat.max_tool_steps` (set by environment variable SWITCHBOARD_CHAT_MAX_TOOL_STEPS): …".
//!
//! Environment variables carry text; a typed field (number, bool, list) gets the text parsed as
//! a TOML value, tried only when the plain string is refused, so `SWITCHBOARD_LLM_MODEL=4`
//! stays a string and `SWITCHBOARD_CHAT_MAX_TOOL_STEPS=12` becomes a number.

use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// Where a configuration value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    File(PathBuf),
    EnvVar(String),
    Flag(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(path) => write!(f, "set in {}", path.display()),
            Origin::EnvVar(name) => write!(f, "set by environment variable {name}"),
            Origin::Flag(flag) => write!(f, "set by {flag}"),
        }
    }
}

/// Why loading the configuration failed. Every variant names what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read configuration file {path}: {source}")]
    ReadFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("configuration file {path} is not valid TOML: {message}")]
    ParseFile { path: PathBuf, message: String },
    #[error("invalid configuration: `{key}`{}: {reason}", origin_suffix(.origin))]
    InvalidValue {
        /// Dotted path from the file's root (`mcp.tool_call_timeout_secs`).
        key: String,
        origin: Option<Origin>,
        reason: String,
    },
}

fn origin_suffix(origin: &Option<Origin>) -> String {
    origin
        .as_ref()
        .map(|origin| format!(" ({origin})"))
        .unwrap_or_default()
}

/// One value set outside the file, as text, and the alternatives to try if the text is
/// refused by the field's type.
#[derive(Debug)]
struct TextValue {
    origin: Origin,
    remaining_coercions: Vec<Value>,
}

/// The merged configuration document before it becomes typed sections.
#[derive(Debug, Default)]
pub struct Layers {
    document: Table,
    origins: BTreeMap<String, Origin>,
    text_values: BTreeMap<String, TextValue>,
}

impl Layers {
    /// Starts from a TOML file (all keys take the file as origin).
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::ReadFile {
            path: path.to_owned(),
            source,
        })?;
        let document: Table = toml::from_str(&text).map_err(|error| ConfigError::ParseFile {
            path: path.to_owned(),
            message: error.to_string().trim_end().to_owned(),
        })?;
        let mut layers = Self::default();
        let mut keys = Vec::new();
        collect_leaf_keys(&document, "", &mut keys);
        for key in keys {
            layers.origins.insert(key, Origin::File(path.to_owned()));
        }
        layers.document = document;
        Ok(layers)
    }

    /// Sets `dotted_key` to the text `raw` (from an env var or a flag), replacing the file's value.
    pub fn set_text(&mut self, dotted_key: &str, raw: &str, origin: Origin) {
        insert_at(
            &mut self.document,
            dotted_key,
            Value::String(raw.to_owned()),
        );
        self.origins.insert(dotted_key.to_owned(), origin.clone());
        self.text_values.insert(
            dotted_key.to_owned(),
            TextValue {
                origin,
                remaining_coercions: coercions_of(raw),
            },
        );
    }

    /// Where `dotted_key` was set, if not by default. For an unknown-field error the key is the
    /// parent table; `field` then names the offending child.
    pub fn origin_of(&self, dotted_key: &str) -> Option<&Origin> {
        self.origins.get(dotted_key)
    }

    /// Deserializes the merged document into `T`, coercing text values where their field needs
    /// another type.
    pub fn extract<T: DeserializeOwned>(&mut self) -> Result<T, ConfigError> {
        loop {
            let error =
                match serde_path_to_error::deserialize::<_, T>(Value::Table(self.document.clone()))
                {
                    Ok(value) => return Ok(value),
                    Err(error) => error,
                };
            let key = error.path().to_string();
            if let Some(text_value) = self.text_values.get_mut(&key)
                && !text_value.remaining_coercions.is_empty()
            {
                let replacement = text_value.remaining_coercions.remove(0);
                insert_at(&mut self.document, &key, replacement);
                continue;
            }
            // The message alone: the error's Display adds "in `key`", which we say already.
            let reason = error.into_inner().message().to_owned();
            return Err(self.invalid_value(key, reason));
        }
    }

    /// Builds the error for `key`, finding the origin of an unknown field from the message.
    pub fn invalid_value(&self, key: String, reason: String) -> ConfigError {
        // serde_path_to_error usually ends the path with the unknown field already; when it
        // stops at the parent table, add the field so the key points at the offending entry.
        let unknown_child = unknown_field_name(&reason).map(|field| {
            if key == field || key.ends_with(&format!(".{field}")) {
                key.clone()
            } else {
                join_key(&key, field)
            }
        });
        let (key, origin) = match unknown_child {
            Some(child) => {
                let origin = self.origin_of(&child).cloned();
                (child, origin)
            }
            None => {
                let origin = self
                    .origin_of(&key)
                    .or_else(|| self.text_values.get(&key).map(|value| &value.origin))
                    .cloned();
                (key, origin)
            }
        };
        ConfigError::InvalidValue {
            key: if key.is_empty() { "(root)".into() } else { key },
            origin,
            reason,
        }
    }
}

/// Values to try, in order, when a field refuses the plain string: the text read as a TOML
/// value (number, bool, array, inline table), then common spellings of booleans.
fn coercions_of(raw: &str) -> Vec<Value> {
    let mut candidates = Vec::new();
    if let Ok(mut table) = toml::from_str::<Table>(&format!("value = {raw}"))
        && let Some(value) = table.remove("value")
        && !value.is_str()
    {
        candidates.push(value);
    }
    let as_bool = match raw.trim().to_ascii_lowercase().as_str() {
        "1" | "yes" | "on" => Some(true),
        "0" | "no" | "off" => Some(false),
        _ => None,
    };
    if let Some(as_bool) = as_bool {
        candidates.push(Value::Boolean(as_bool));
    }
    candidates
}

fn unknown_field_name(reason: &str) -> Option<&str> {
    let rest = reason.strip_prefix("unknown field `")?;
    rest.split('`').next()
}

fn join_key(parent: &str, child: &str) -> String {
    if parent.is_empty() || parent == "." {
        child.to_owned()
    } else {
        format!("{parent}.{child}")
    }
}

fn insert_at(document: &mut Table, dotted_key: &str, value: Value) {
    let mut table = document;
    let mut parts = dotted_key.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            table.insert(part.to_owned(), value);
            return;
        }
        let entry = table
            .entry(part.to_owned())
            .or_insert_with(|| Value::Table(Table::new()));
        if !entry.is_table() {
            *entry = Value::Table(Table::new());
        }
        table = entry.as_table_mut().expect("just made a table");
    }
}

fn collect_leaf_keys(table: &Table, prefix: &str, keys: &mut Vec<String>) {
    for (name, value) in table {
        let key = join_key(prefix, name);
        if let Value::Table(inner) = value {
            collect_leaf_keys(inner, &key, keys);
        }
        keys.push(key);
    }
}
