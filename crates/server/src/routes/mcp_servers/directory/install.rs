//! A published `server.json` and the adder's choice → a [`Candidate`] for the one
//! registration path. A package becomes a stdio command (`npm` → `npx -y pkg@version`, `pypi`
//! → `uvx pkg==version`, `oci` → `docker run -i --rm image:tag`, each env variable passed in
//! with `-e`); a remote becomes a Streamable HTTP or SSE server. Every declared input is
//! filled in the same order: a value the adder sent (stored as an encrypted secret, as every
//! env value and header is), the document's fixed `value` (its `{variables}` filled the same
//! way), a required input's `default`; else a required env variable or header
//! becomes a user field (`{{user.NAME}}`: each person sets their own), and a required
//! argument or URL variable without a value is refused by name. Optional inputs without a
//! value are left out (the program's own default applies). Pure: no IO.

use super::super::bodies::Candidate;
use super::super::import::field_name;
use crate::directory::document::{
    Argument, ArgumentKind, Input, KeyValueInput, Package, ServerJson, Transport,
};
use std::collections::{BTreeMap, BTreeSet};
use switchboard_core::{SessionScope, TransportKind};
use switchboard_store::{ServerAuthConfig, ServerSecrets, UserField};

/// Which way of running the server the adder chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Choice {
    Package(usize),
    Remote(usize),
}

/// Why a document and a choice do not make a server (422, naming what to change).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(super) enum InstallError {
    #[error("{0}")]
    Choice(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    MissingValue(String),
    #[error("{0}")]
    InvalidValue(String),
}

/// The server to register and what became of its inputs.
#[derive(Debug)]
pub(super) struct Installation {
    pub candidate: Candidate,
    /// `env.NAME`, `headers.NAME`: stored encrypted (names only).
    pub secrets: Vec<String>,
    pub user_fields: Vec<String>,
}

/// The choice: the one given, or the only way the document offers.
pub(super) fn choose(
    server: &ServerJson,
    package: Option<usize>,
    remote: Option<usize>,
) -> Result<Choice, InstallError> {
    let (packages, remotes) = (server.packages.len(), server.remotes.len());
    let choice = match (package, remote) {
        (Some(_), Some(_)) => {
            return Err(InstallError::Choice(
                "send either package or remote, not both".into(),
            ));
        }
        (Some(index), None) => Choice::Package(index),
        (None, Some(index)) => Choice::Remote(index),
        (None, None) if packages + remotes == 1 => {
            if packages == 1 {
                Choice::Package(0)
            } else {
                Choice::Remote(0)
            }
        }
        (None, None) => {
            return Err(InstallError::Choice(format!(
                "'{}' offers {packages} package(s) and {remotes} remote(s): send package or remote with the index of one",
                server.name
            )));
        }
    };
    let (index, count, what) = match choice {
        Choice::Package(index) => (index, packages, "package"),
        Choice::Remote(index) => (index, remotes, "remote"),
    };
    if index >= count {
        return Err(InstallError::Choice(format!(
            "{what}: '{}' has {count} {what}(s); {index} is not one of them",
            server.name
        )));
    }
    Ok(choice)
}

/// Builds the server `name` from `server` as `choice` says, with the adder's `values`.
pub(super) fn install(
    server: &ServerJson,
    choice: Choice,
    name: String,
    values: &BTreeMap<String, String>,
) -> Result<Installation, InstallError> {
    let mut filler = Filler::new(values);
    let mut candidate = match choice {
        Choice::Package(index) => package_candidate(&server.packages[index], &mut filler)?,
        Choice::Remote(index) => remote_candidate(&server.remotes[index], &mut filler)?,
    };
    filler.check_all_used()?;
    candidate.name = name;
    let secrets = candidate
        .secrets
        .env
        .keys()
        .map(|key| format!("env.{key}"))
        .chain(
            candidate
                .secrets
                .headers
                .keys()
                .map(|key| format!("headers.{key}")),
        )
        .collect();
    let user_fields = filler.user_fields.keys().cloned().collect();
    candidate.auth.user_fields = filler.user_fields;
    Ok(Installation {
        candidate,
        secrets,
        user_fields,
    })
}

fn empty_candidate(transport: TransportKind) -> Candidate {
    Candidate {
        name: String::new(),
        transport,
        url: None,
        command: None,
        args: Vec::new(),
        working_dir: None,
        session_scope: SessionScope::default(),
        timeout_ms: None,
        init_timeout_ms: None,
        secrets: ServerSecrets::default(),
        is_active: true,
        auth: ServerAuthConfig::default(),
    }
}

fn package_candidate(package: &Package, filler: &mut Filler) -> Result<Candidate, InstallError> {
    if package.transport.kind != "stdio" {
        return Err(InstallError::Unsupported(format!(
            "this package serves {} on this machine; Switchboard starts stdio packages only (choose a remote, or run it yourself and register its URL)",
            package.transport.kind
        )));
    }
    let env = filler.key_values("env", &package.environment_variables)?;
    let runtime_args = filler.arguments(&package.runtime_arguments)?;
    let package_args = filler.arguments(&package.package_arguments)?;
    let versioned = |separator: &str| match &package.version {
        Some(version) => format!("{}{separator}{version}", package.identifier),
        None => package.identifier.clone(),
    };
    let (command, mut args) = match package.registry_type.as_str() {
        "npm" => {
            let mut args = vec!["-y".to_owned()];
            args.extend(
                runtime_args
                    .into_iter()
                    .filter(|arg| arg != "-y" && arg != "--yes"),
            );
            args.push(versioned("@"));
            ("npx", args)
        }
        "pypi" => {
            let mut args = runtime_args;
            args.push(versioned("=="));
            ("uvx", args)
        }
        "oci" => {
            let mut args: Vec<String> = ["run", "-i", "--rm"].map(String::from).to_vec();
            args.extend(runtime_args);
            for key in env.keys() {
                args.extend(["-e".to_owned(), key.clone()]);
            }
            args.push(oci_image(package));
            ("docker", args)
        }
        other => {
            return Err(InstallError::Unsupported(format!(
                "packages of registry type '{other}' are not started by Switchboard (npm, pypi and oci are); choose another package or a remote"
            )));
        }
    };
    args.extend(package_args);
    let mut candidate = empty_candidate(TransportKind::Stdio);
    candidate.command = Some(command.to_owned());
    candidate.args = args;
    candidate.secrets.env = env;
    Ok(candidate)
}

/// `image:tag`, unless the identifier names its tag or digest already.
fn oci_image(package: &Package) -> String {
    let last_segment = package.identifier.rsplit('/').next().unwrap_or_default();
    match &package.version {
        Some(version) if !last_segment.contains(':') && !last_segment.contains('@') => {
            format!("{}:{version}", package.identifier)
        }
        _ => package.identifier.clone(),
    }
}

fn remote_candidate(remote: &Transport, filler: &mut Filler) -> Result<Candidate, InstallError> {
    let transport = match remote.kind.as_str() {
        "streamable-http" => TransportKind::StreamableHttp,
        "sse" => TransportKind::Sse,
        other => {
            return Err(InstallError::Unsupported(format!(
                "a remote of transport '{other}' (Switchboard reaches streamable-http and sse remotes)"
            )));
        }
    };
    let Some(template) = &remote.url else {
        return Err(InstallError::Unsupported("this remote has no url".into()));
    };
    let url = filler.template("url", template, &remote.variables, false)?;
    let mut candidate = empty_candidate(transport);
    candidate.url = Some(url);
    candidate.secrets.headers = filler.key_values("headers", &remote.headers)?;
    Ok(candidate)
}

/// Fills inputs from the adder's values, in the order the module doc gives.
struct Filler<'a> {
    values: &'a BTreeMap<String, String>,
    used: BTreeSet<&'a str>,
    user_fields: BTreeMap<String, UserField>,
}

impl<'a> Filler<'a> {
    fn new(values: &'a BTreeMap<String, String>) -> Self {
        Self {
            values,
            used: BTreeSet::new(),
            user_fields: BTreeMap::new(),
        }
    }

    /// Env variables or headers: name → value, the ones left out absent.
    fn key_values(
        &mut self,
        prefix: &str,
        inputs: &[KeyValueInput],
    ) -> Result<BTreeMap<String, String>, InstallError> {
        let mut filled = BTreeMap::new();
        for input in inputs {
            let location = format!("{prefix}.{}", input.name);
            let value = self.fill(
                &input.name,
                &input.input.input,
                &input.input.variables,
                &location,
                true,
            )?;
            if let Some(value) = value {
                filled.insert(input.name.clone(), value);
            }
        }
        Ok(filled)
    }

    fn arguments(&mut self, arguments: &[Argument]) -> Result<Vec<String>, InstallError> {
        let mut filled = Vec::new();
        for (index, argument) in arguments.iter().enumerate() {
            let key = argument.key(index);
            let location = format!("argument {key}");
            let input = &argument.input;
            let value = self.fill(&key, &input.input, &input.variables, &location, false)?;
            match (argument.kind, value) {
                (ArgumentKind::Positional, Some(value)) => filled.push(value),
                (ArgumentKind::Named, Some(value)) => {
                    filled.push(argument.name.clone().unwrap_or_default());
                    filled.push(value);
                }
                (_, None) => {}
            }
        }
        Ok(filled)
    }

    /// The value of one input, or `None` (optional, nothing given).
    fn fill(
        &mut self,
        key: &str,
        input: &Input,
        variables: &BTreeMap<String, Input>,
        location: &str,
        per_user: bool,
    ) -> Result<Option<String>, InstallError> {
        if let Some((key, value)) = self.values.get_key_value(key) {
            self.used.insert(key);
            check_choice(location, input, value)?;
            return Ok(Some(value.clone()));
        }
        if let Some(template) = &input.value {
            return self
                .template(location, template, variables, per_user)
                .map(Some);
        }
        if !input.is_required {
            return Ok(None);
        }
        if let Some(default) = &input.default {
            return Ok(Some(default.clone()));
        }
        if per_user {
            return self.user_field(key, input, location).map(Some);
        }
        Err(InstallError::MissingValue(format!(
            "{location} is required{}: send it in values.{key}",
            described(input)
        )))
    }

    /// `template` with each `{name}` of `variables` filled (other braces kept as written).
    fn template(
        &mut self,
        location: &str,
        template: &str,
        variables: &BTreeMap<String, Input>,
        per_user: bool,
    ) -> Result<String, InstallError> {
        let mut text = template.to_owned();
        for (name, variable) in variables {
            let placeholder = format!("{{{name}}}");
            if !text.contains(&placeholder) {
                continue;
            }
            let at = format!("{location} variable {name}");
            let mut required = variable.clone();
            required.is_required = true;
            let value = self
                .fill(name, &required, &BTreeMap::new(), &at, per_user)?
                .unwrap_or_default();
            text = text.replace(&placeholder, &value);
        }
        Ok(text)
    }

    fn user_field(
        &mut self,
        key: &str,
        input: &Input,
        location: &str,
    ) -> Result<String, InstallError> {
        let Some(name) = field_name(key) else {
            return Err(InstallError::MissingValue(format!(
                "{location} needs a value: send it in values.{key}"
            )));
        };
        self.user_fields
            .entry(name.clone())
            .or_insert_with(|| UserField {
                title: input
                    .description
                    .clone()
                    .filter(|text| !text.trim().is_empty())
                    .unwrap_or_else(|| key.to_owned()),
                description: Some(format!("{location}, as the MCP registry declares it")),
                secret: input.is_secret,
            });
        Ok(format!("{{{{user.{name}}}}}"))
    }

    /// A value sent for no input of the chosen way is a mistake worth naming.
    fn check_all_used(&self) -> Result<(), InstallError> {
        let unused: Vec<&str> = self
            .values
            .keys()
            .map(String::as_str)
            .filter(|key| !self.used.contains(key))
            .collect();
        if unused.is_empty() {
            return Ok(());
        }
        Err(InstallError::InvalidValue(format!(
            "values: {} is not an input of the chosen package or remote",
            unused.join(", ")
        )))
    }
}

fn check_choice(location: &str, input: &Input, value: &str) -> Result<(), InstallError> {
    if input.choices.is_empty() || input.choices.iter().any(|choice| choice == value) {
        return Ok(());
    }
    Err(InstallError::InvalidValue(format!(
        "{location} must be one of: {}",
        input.choices.join(", ")
    )))
}

fn described(input: &Input) -> String {
    input
        .description
        .as_deref()
        .map(|text| format!(" ({text})"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
