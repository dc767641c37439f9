//! Reading the clients' configuration files into entries: the file's shape (`mcpServers` or
//! VS Code's `servers` and `inputs`), its format (given, or detected), and each entry's
//! transport, command or URL. A file that is not JSON (comments and trailing commas allowed)
//! or has no server map is refused as a whole; a bad entry is refused alone, with its reason.

use super::jsonc;
use super::references::InputDeclaration;
use super::wire::ConfigFormat;
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use switchboard_core::TransportKind;

/// Why a file cannot be read at all (400).
#[derive(Debug, thiserror::Error)]
pub(super) enum FileError {
    #[error("the content is not JSON (comments and trailing commas are allowed): {0}")]
    NotJson(String),
    #[error(
        "no server map found: expected an object with `mcpServers` (Claude Desktop, Claude Code, Cursor, Windsurf) or `servers` (VS Code)"
    )]
    NoServers,
    #[error("the file has no `{expected}` object, which a {format:?} file has")]
    WrongShape {
        format: ConfigFormat,
        expected: &'static str,
    },
}

/// A file's entries, in file order, duplicates included.
pub(super) struct ParsedFile {
    pub format: ConfigFormat,
    pub detected: bool,
    pub inputs: BTreeMap<String, InputDeclaration>,
    pub entries: Vec<(String, Value)>,
}

/// The server map with every key, in order, including repeated ones (which `serde_json`'s
/// map would silently merge).
struct Entries(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("an object of servers by name")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

#[derive(Deserialize)]
struct FileShape {
    #[serde(default, rename = "mcpServers")]
    mcp_servers: Option<Entries>,
    #[serde(default)]
    servers: Option<Entries>,
    #[serde(default)]
    inputs: Vec<InputShape>,
}

#[derive(Deserialize)]
struct InputShape {
    id: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    password: bool,
}

/// Reads `content`, in `format` or the one its shape shows.
pub(super) fn parse(content: &str, format: Option<ConfigFormat>) -> Result<ParsedFile, FileError> {
    let shape: FileShape = serde_json::from_str(&jsonc::strip(content))
        .map_err(|error| FileError::NotJson(error.to_string()))?;
    let inputs = shape
        .inputs
        .into_iter()
        .map(|input| {
            let declaration = InputDeclaration {
                description: input.description,
                password: input.password,
            };
            (input.id, declaration)
        })
        .collect();
    let (format, detected, entries) = match (format, shape.mcp_servers, shape.servers) {
        (Some(ConfigFormat::Vscode), _, Some(servers)) => (ConfigFormat::Vscode, false, servers.0),
        (Some(ConfigFormat::Vscode), _, None) => {
            return Err(FileError::WrongShape {
                format: ConfigFormat::Vscode,
                expected: "servers",
            });
        }
        (Some(format), Some(servers), _) => (format, false, servers.0),
        (Some(format), None, _) => {
            return Err(FileError::WrongShape {
                format,
                expected: "mcpServers",
            });
        }
        (None, _, Some(servers)) => (ConfigFormat::Vscode, true, servers.0),
        (None, Some(servers), None) => (detect(content, &servers.0), true, servers.0),
        (None, None, None) => return Err(FileError::NoServers),
    };
    Ok(ParsedFile {
        format,
        detected,
        inputs,
        entries,
    })
}

/// The `mcpServers` dialect: Windsurf's `serverUrl`, Cursor's `${env:…}`, Claude Code's
/// `${VAR}` or `"type": "stdio"`, else Claude Desktop (whose shape Cursor shares; the
/// dialects differ only in their references, which are all read whatever the format).
fn detect(content: &str, entries: &[(String, Value)]) -> ConfigFormat {
    let any = |test: &dyn Fn(&Value) -> bool| entries.iter().any(|(_, entry)| test(entry));
    if any(&|entry| entry.get("serverUrl").is_some()) {
        ConfigFormat::Windsurf
    } else if content.contains("${env:") {
        ConfigFormat::Cursor
    } else if content.contains("${")
        || any(&|entry| entry.get("type") == Some(&Value::from("stdio")))
    {
        ConfigFormat::ClaudeCode
    } else {
        ConfigFormat::ClaudeDesktop
    }
}

/// One entry as the clients write it.
#[derive(Deserialize)]
struct EntryShape {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default, rename = "serverUrl")]
    server_url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default, rename = "envFile")]
    env_file: Option<String>,
    #[serde(default)]
    disabled: bool,
    #[serde(flatten)]
    other: BTreeMap<String, Value>,
}

/// An entry Switchboard can register (before references are resolved).
#[derive(Debug)]
pub(super) struct ImportedServer {
    pub transport: TransportKind,
    pub url: Option<String>,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub headers: BTreeMap<String, String>,
    pub working_dir: Option<String>,
    pub env_file: Option<String>,
    pub is_active: bool,
    pub ignored_keys: Vec<String>,
}

/// One entry, or why it cannot be imported.
pub(super) fn entry(value: Value) -> Result<ImportedServer, String> {
    if !value.is_object() {
        return Err("an entry must be an object".into());
    }
    let shape: EntryShape =
        serde_json::from_value(value).map_err(|error: serde_json::Error| error.to_string())?;
    if shape.url.is_some() && shape.server_url.is_some() {
        return Err("both url and serverUrl are set".into());
    }
    let url = shape.url.or(shape.server_url);
    let transport = transport(
        shape.kind.as_deref(),
        shape.command.is_some(),
        url.as_deref(),
    )?;
    Ok(ImportedServer {
        transport,
        url,
        command: shape.command,
        args: shape.args,
        env: shape.env,
        headers: shape.headers,
        working_dir: shape.cwd,
        env_file: shape.env_file,
        is_active: !shape.disabled,
        ignored_keys: shape.other.into_keys().collect(),
    })
}

fn transport(
    kind: Option<&str>,
    has_command: bool,
    url: Option<&str>,
) -> Result<TransportKind, String> {
    if has_command && url.is_some() {
        return Err("an entry has either a command or a url, not both".into());
    }
    let transport = match kind {
        Some("stdio") => TransportKind::Stdio,
        Some("http" | "streamable-http" | "streamableHttp" | "streamable_http") => {
            TransportKind::StreamableHttp
        }
        Some("sse") => TransportKind::Sse,
        Some("ws" | "websocket") => TransportKind::Websocket,
        Some(other) => return Err(format!("unknown transport type '{other}'")),
        None if has_command => TransportKind::Stdio,
        // Cursor and Windsurf take a URL ending in /sse as a legacy SSE server.
        None => match url {
            Some(url) if url.trim_end_matches('/').ends_with("/sse") => TransportKind::Sse,
            Some(_) => TransportKind::StreamableHttp,
            None => return Err("an entry needs a command or a url".into()),
        },
    };
    match (transport, has_command, url.is_some()) {
        (TransportKind::Stdio, false, _) => Err("a stdio entry needs a command".into()),
        (TransportKind::Stdio, _, _) => Ok(transport),
        (_, _, false) => Err(format!("a {transport} entry needs a url")),
        _ => Ok(transport),
    }
}
