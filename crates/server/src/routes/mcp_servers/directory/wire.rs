//! Request and answer bodies of the MCP registry routes. A published server is returned as
//! the registry wrote it (`server`, the `server.json` document, in its own camelCase).

use super::super::views::ServerView;
use crate::directory::document::ServerJson;
use crate::mirrors;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use switchboard_core::TransportKind;
use utoipa::{IntoParams, ToSchema};

/// `GET /api/mcp/registry/servers` query.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RegistrySearchQuery {
    /// Part of a server's name (the registry's substring match); absent: every server.
    pub search: Option<String>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Servers per page, 1 to 100 (default: the registry's).
    pub limit: Option<u32>,
}

/// A page of the registry's servers (latest versions).
#[derive(Debug, Serialize, ToSchema)]
pub struct RegistrySearch {
    /// The registry asked (`[registry] url`).
    pub registry_url: String,
    pub servers: Vec<RegistryServer>,
    /// Send as `cursor` for the next page; absent on the last.
    pub next_cursor: Option<String>,
}

/// A published server and what the registry says of it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RegistryServer {
    pub server: ServerJson,
    /// `active`, `deprecated` or `deleted` (the official registry's metadata).
    pub status: Option<String>,
    pub is_latest: Option<bool>,
    pub published_at: Option<String>,
}

/// `POST /api/mcp/registry/add`: register a published server.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddFromRegistryBody {
    /// The server's name in the registry (`io.github.acme/weather`).
    pub server: String,
    /// Default `latest`.
    #[serde(default = "latest")]
    pub version: String,
    /// Index of the package to run (a stdio command: admins only).
    #[serde(default)]
    pub package: Option<usize>,
    /// Index of the remote to reach. Neither: the only way the server offers.
    #[serde(default)]
    pub remote: Option<usize>,
    /// The name in Switchboard; default: the registry name's last part.
    #[serde(default)]
    pub name: Option<String>,
    /// Values for the declared inputs, by env variable or header name, argument flag or
    /// value hint, or URL variable. Stored as the server's encrypted secrets; a required env
    /// variable or header left out becomes a user field each person fills in.
    #[serde(default)]
    pub values: BTreeMap<String, String>,
    /// Only show what would be registered.
    #[serde(default)]
    pub dry_run: bool,
    /// Default `true`.
    #[serde(default = "active_by_default")]
    #[schema(value_type = Option<bool>)]
    pub is_active: bool,
}

fn latest() -> String {
    "latest".into()
}

fn active_by_default() -> bool {
    true
}

/// What was (or, on a dry run, would be) registered.
#[derive(Debug, Serialize, ToSchema)]
pub struct AddFromRegistryReport {
    pub dry_run: bool,
    /// The registry's name and the version read.
    pub registry_server: String,
    pub version: String,
    /// The server's name in Switchboard.
    pub name: String,
    #[schema(value_type = mirrors::TransportKind)]
    pub transport: TransportKind,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub url: Option<String>,
    /// Env variables and headers stored encrypted (names only): `env.NAME`, `headers.NAME`.
    pub secrets: Vec<String>,
    /// User fields each person fills in (`PUT /api/mcp/servers/{id}/user-credentials`).
    pub user_fields: Vec<String>,
    /// The registered server (absent on a dry run).
    pub server: Option<ServerView>,
}
