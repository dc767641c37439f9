//! `${…}` references of imported files: `${input:ID}` (VS Code), `${env:VAR}` (Cursor, VS
//! Code, Windsurf), `${VAR}` and `${VAR:-default}` (Claude Code). In an env value or a header
//! — where Switchboard substitutes per-user values — each becomes a user field
//! (`{{user.NAME}}`): the value lived on the person's machine, so each person fills in their
//! own. Elsewhere (args, url, cwd) and for editor variables (`${workspaceFolder}`) the text is
//! kept as written. Every reference is reported; none is dropped silently.

use super::wire::{ImportReference, ReferenceOutcome};
use std::collections::BTreeMap;
use switchboard_store::{UserField, is_user_field_name};

/// A VS Code `inputs` entry: what a person is asked for.
#[derive(Clone, Debug)]
pub(super) struct InputDeclaration {
    pub description: Option<String>,
    pub password: bool,
}

/// Variables an editor resolves itself; never a person's value.
const EDITOR_VARIABLES: [&str; 8] = [
    "workspaceFolder",
    "workspaceFolderBasename",
    "workspaceRoot",
    "userHome",
    "cwd",
    "pathSeparator",
    "file",
    "execPath",
];

enum Reference<'a> {
    Input(&'a str),
    Environment { name: &'a str, has_default: bool },
    Other,
}

fn classify(inner: &str) -> Reference<'_> {
    if let Some(id) = inner.strip_prefix("input:") {
        return Reference::Input(id);
    }
    if let Some(name) = inner.strip_prefix("env:") {
        return Reference::Environment {
            name,
            has_default: false,
        };
    }
    let (name, has_default) = match inner.split_once(":-") {
        Some((name, _)) => (name, true),
        None => (inner, false),
    };
    let identifier = name
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if identifier && !EDITOR_VARIABLES.contains(&name) {
        Reference::Environment { name, has_default }
    } else {
        Reference::Other
    }
}

/// A user field name for `id`: upper case, anything but `A-Z0-9_` as `_`.
pub(in crate::routes::mcp_servers) fn field_name(id: &str) -> Option<String> {
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    is_user_field_name(&name).then_some(name)
}

/// Rewrites the texts of one entry and collects its user fields and references.
pub(super) struct Rewriter<'a> {
    inputs: &'a BTreeMap<String, InputDeclaration>,
    pub user_fields: BTreeMap<String, UserField>,
    pub references: Vec<ImportReference>,
}

impl<'a> Rewriter<'a> {
    pub fn new(inputs: &'a BTreeMap<String, InputDeclaration>) -> Self {
        Self {
            inputs,
            user_fields: BTreeMap::new(),
            references: Vec::new(),
        }
    }

    /// `text` with its references replaced by user fields where `takes_user_fields`.
    pub fn rewrite(&mut self, location: &str, text: &str, takes_user_fields: bool) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            let Some(length) = rest[start..].find('}') else {
                break;
            };
            out.push_str(&rest[..start]);
            let written = &rest[start..start + length + 1];
            let inner = &written[2..written.len() - 1];
            out.push_str(&self.resolve(location, written, inner, takes_user_fields));
            rest = &rest[start + length + 1..];
        }
        out.push_str(rest);
        out
    }

    /// Reports `what` (e.g. an `envFile`) as not imported.
    pub fn not_imported(&mut self, location: &str, written: &str, note: &str) {
        self.references.push(ImportReference {
            location: location.to_owned(),
            reference: written.to_owned(),
            outcome: ReferenceOutcome::NotImported,
            user_field: None,
            note: Some(note.to_owned()),
        });
    }

    fn resolve(
        &mut self,
        location: &str,
        written: &str,
        inner: &str,
        takes_user_fields: bool,
    ) -> String {
        let (id, field, note) = match classify(inner) {
            Reference::Input(id) => {
                let declared = self.inputs.get(id);
                let field = UserField {
                    title: declared
                        .and_then(|input| input.description.clone())
                        .filter(|text| !text.trim().is_empty())
                        .unwrap_or_else(|| id.to_owned()),
                    description: Some(format!("VS Code input '{id}'")),
                    secret: declared.is_none_or(|input| input.password),
                };
                let note = declared
                    .is_none()
                    .then(|| "no input of this id is declared in the file".to_owned());
                (id, field, note)
            }
            Reference::Environment { name, has_default } => {
                let field = UserField {
                    title: name.to_owned(),
                    description: Some(format!(
                        "was the environment variable {name} on the machine of the imported file"
                    )),
                    secret: true,
                };
                let note = has_default.then(|| {
                    "its default value is not imported: each person sets their own".to_owned()
                });
                (name, field, note)
            }
            Reference::Other => return self.kept(location, written, "an editor variable"),
        };
        let name = match field_name(id) {
            Some(name) if takes_user_fields => name,
            _ => {
                return self.kept(
                    location,
                    written,
                    "only env values and headers can hold a person's own value",
                );
            }
        };
        self.user_fields.entry(name.clone()).or_insert(field);
        self.references.push(ImportReference {
            location: location.to_owned(),
            reference: written.to_owned(),
            outcome: ReferenceOutcome::UserField,
            user_field: Some(name.clone()),
            note,
        });
        format!("{{{{user.{name}}}}}")
    }

    fn kept(&mut self, location: &str, written: &str, why: &str) -> String {
        self.references.push(ImportReference {
            location: location.to_owned(),
            reference: written.to_owned(),
            outcome: ReferenceOutcome::KeptAsText,
            user_field: None,
            note: Some(format!(
                "kept as written ({why}); Switchboard does not resolve it"
            )),
        });
        written.to_owned()
    }
}
