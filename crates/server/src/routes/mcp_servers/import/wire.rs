//! The import's request and answer bodies.

use crate::mirrors;
use serde::{Deserialize, Serialize};
use switchboard_core::TransportKind;
use utoipa::ToSchema;

/// The MCP configuration files Switchboard reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConfigFormat {
    /// `claude_desktop_config.json`: `mcpServers` with `command`/`args`/`env` or
    /// `url`/`type`/`headers`.
    ClaudeDesktop,
    /// Claude Code's `.mcp.json`: `mcpServers` with `type` (`stdio`, `http`, `sse`) and
    /// `${VAR}` / `${VAR:-default}` references.
    ClaudeCode,
    /// Cursor's `mcp.json`: `mcpServers`, `${env:VAR}` references.
    Cursor,
    /// VS Code's `mcp.json`: `servers` and `inputs` (`${input:ID}`), comments allowed.
    Vscode,
    /// Windsurf's `mcp_config.json`: `mcpServers`, remote ones with `serverUrl`.
    Windsurf,
}

/// What to do with an entry whose name a server of the workspace already has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnConflict {
    /// Leave the existing server alone and skip the entry (the default).
    #[default]
    Skip,
    /// Replace the existing server's configuration with the entry's (Switchboard's own
    /// knowledge-graph server is never replaced).
    Replace,
}

/// `POST /api/mcp/servers/import`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportServersBody {
    /// The configuration file's text, as the client wrote it.
    pub content: String,
    /// The file's format; absent: detected from its shape.
    #[serde(default)]
    pub format: Option<ConfigFormat>,
    /// Only report what would happen; nothing is stored.
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default)]
    pub on_conflict: OnConflict,
}

/// What the import did (or, on a dry run, would do) with one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImportAction {
    Create,
    Change,
    Skip,
}

/// Why an entry is skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// A server of the workspace has this name (`on_conflict: skip`, or it is Switchboard's
    /// own knowledge-graph server).
    NameConflict,
    /// An earlier entry of the file has the same name.
    DuplicateInFile,
    /// `mcp.url_policy` refuses the URL (e.g. a private or metadata address).
    UrlNotAllowed,
    /// A stdio server runs a program on this machine: only admins may add one.
    StdioRequiresAdmin,
    /// An entry Switchboard cannot run (unknown transport, neither command nor url…).
    UnsupportedEntry,
    /// The entry breaks a rule of server registration (the message names the field).
    Invalid,
}

/// What became of a `${…}` reference of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceOutcome {
    /// Became a user field: each person fills in their own value (`{{user.NAME}}`).
    UserField,
    /// Kept as written: Switchboard cannot resolve it there (in `args`, `url`, `cwd`, or an
    /// editor variable such as `${workspaceFolder}`); the server may need editing.
    KeptAsText,
    /// Not imported (e.g. an `envFile`, which Switchboard cannot read).
    NotImported,
}

/// A reference found in an entry (`${env:VAR}`, `${VAR}`, `${input:ID}`…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ImportReference {
    /// Where it is: `env.NAME`, `headers.NAME`, `args[2]`, `url`…
    pub location: String,
    /// As written in the file.
    pub reference: String,
    pub outcome: ReferenceOutcome,
    /// The user field it became.
    pub user_field: Option<String>,
    pub note: Option<String>,
}

/// One entry of the file and what became of it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportEntryReport {
    /// The server's name in Switchboard.
    pub name: String,
    /// The entry's name in the file, when it had to be changed to be a server name.
    pub name_in_file: Option<String>,
    pub action: ImportAction,
    #[schema(value_type = Option<mirrors::TransportKind>)]
    pub transport: Option<TransportKind>,
    /// The server created or changed (not on a dry run).
    pub server_id: Option<String>,
    pub reason: Option<SkipReason>,
    /// Why, in words (skips), or what to check (e.g. the existing server replaced).
    pub message: Option<String>,
    /// Env variables and headers stored as the server's encrypted secrets (names only, never
    /// values): `env.NAME`, `headers.NAME`.
    pub secrets: Vec<String>,
    /// User fields declared from the file's references and inputs.
    pub user_fields: Vec<String>,
    pub references: Vec<ImportReference>,
    /// Keys of the entry Switchboard does not use (e.g. `autoApprove`, `disabled` is used).
    pub ignored_keys: Vec<String>,
}

/// The answer of an import.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportReport {
    pub format: ConfigFormat,
    /// Whether the format was detected (not given).
    pub format_detected: bool,
    pub dry_run: bool,
    pub created: usize,
    pub changed: usize,
    pub skipped: usize,
    pub entries: Vec<ImportEntryReport>,
}
