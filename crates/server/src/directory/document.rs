//! `server.json` as an MCP registry publishes it (the official registry API's `ServerDetail`,
//! `Package`, `RemoteTransport`, `Input`…), field for field in its own camelCase, and the
//! list and detail answers that carry it. Read leniently: unknown fields are ignored and
//! optional ones default, so a registry a schema version ahead still reads. These types are
//! also what `GET /api/mcp/registry/servers` returns, unchanged, as `server`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// One server version, as published (`server.json`).
#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    /// Reverse-DNS name, e.g. `io.github.user/weather`.
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<Repository>,
    /// Ways to run it on this machine (a stdio command).
    #[serde(default)]
    pub packages: Vec<Package>,
    /// Ways to reach it over the network.
    #[serde(default)]
    pub remotes: Vec<Transport>,
}

/// Where the source lives.
#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
pub struct Repository {
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub source: String,
}

/// A package that runs the server (`npm`, `pypi`, `oci`, … — Switchboard starts the first three).
#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    pub registry_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_base_url: Option<String>,
    /// The package name (or, for `oci`, the image, possibly with its tag).
    pub identifier: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `npx`, `uvx`, `docker`, `dnx`…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_hint: Option<String>,
    /// How it speaks once started (`stdio` for the packages Switchboard runs).
    #[serde(default = "Transport::stdio")]
    pub transport: Transport,
    /// Arguments for the runtime (`npx`, `docker run`…), before the package.
    #[serde(default)]
    pub runtime_arguments: Vec<Argument>,
    /// Arguments for the package's own program, after it.
    #[serde(default)]
    pub package_arguments: Vec<Argument>,
    #[serde(default)]
    pub environment_variables: Vec<KeyValueInput>,
}

/// A transport: a package's (`stdio`, `streamable-http`, `sse`) or a remote's
/// (`streamable-http`, `sse`, with `{variables}` in its URL).
#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
pub struct Transport {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default)]
    pub headers: Vec<KeyValueInput>,
    /// Values the URL names in `{curly_braces}`.
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

impl Transport {
    fn stdio() -> Self {
        Transport {
            kind: "stdio".into(),
            url: None,
            headers: Vec::new(),
            variables: BTreeMap::new(),
        }
    }
}

/// A value the person adding the server may have to give.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub is_required: bool,
    #[serde(default)]
    pub is_secret: bool,
    /// `string`, `number`, `boolean`, `filepath`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// A fixed value (not for people to change), `{name}`s replaced from `variables`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
}

/// An input whose `value` may name variables.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct InputWithVariables {
    #[serde(flatten)]
    pub input: Input,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variables: BTreeMap<String, Input>,
}

/// An environment variable or a header.
#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
pub struct KeyValueInput {
    pub name: String,
    #[serde(flatten)]
    pub input: InputWithVariables,
}

/// `positional` (inserted as is) or `named` (`--flag value`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ArgumentKind {
    Positional,
    Named,
}

/// A command-line argument.
#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    #[serde(rename = "type")]
    pub kind: ArgumentKind,
    /// The flag, with its dashes (named arguments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What a positional argument is (not part of the command line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_hint: Option<String>,
    #[serde(default)]
    pub is_repeated: bool,
    #[serde(flatten)]
    pub input: InputWithVariables,
}

impl Argument {
    /// The key a value for it is sent under: the flag of a named argument, the value hint of
    /// a positional one (else `arg{index}`).
    pub fn key(&self, index: usize) -> String {
        self.name
            .clone()
            .or_else(|| self.value_hint.clone())
            .unwrap_or_else(|| format!("arg{index}"))
    }
}

/// An entry of a list, or a detail answer: the server and the registry's own metadata.
#[derive(Clone, Debug, Deserialize)]
pub struct ServerResponse {
    pub server: ServerJson,
    #[serde(default, rename = "_meta")]
    pub meta: ResponseMeta,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct ResponseMeta {
    #[serde(default, rename = "io.modelcontextprotocol.registry/official")]
    pub official: Option<OfficialMeta>,
}

/// `io.modelcontextprotocol.registry/official`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfficialMeta {
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub is_latest: Option<bool>,
    #[serde(default)]
    pub published_at: Option<String>,
}

/// `GET /v0.1/servers`.
#[derive(Clone, Debug, Deserialize)]
pub struct ServerList {
    pub servers: Vec<ServerResponse>,
    #[serde(default)]
    pub metadata: ListMetadata,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMetadata {
    #[serde(default)]
    pub next_cursor: Option<String>,
}
