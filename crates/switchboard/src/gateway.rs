//! `switchboard gateway connect-config`: prints what to paste into an MCP client (Claude Code,
//! Cursor, VS Code) so it reaches this instance's gateway (`/gateway/mcp`, a bud's
//! `/gateway/buds/{bud}/mcp`, or one registered server's `/gateway/servers/{server}/mcp`) with
//! a `gateway:use` token. It only formats: nothing is sent. Each client's format is a type of
//! its own ([`ClaudeMcpAdd`], [`CursorConfig`], [`VscodeConfig`]), so what a client reads is
//! written down once, field by field.

use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Args)]
pub struct GatewayArgs {
    #[command(subcommand)]
    pub command: GatewayCommand,
}

#[derive(Debug, Subcommand)]
pub enum GatewayCommand {
    /// Print the snippet that connects an MCP client to the gateway.
    ConnectConfig(ConnectConfigArgs),
}

#[derive(Debug, Args)]
pub struct ConnectConfigArgs {
    /// The MCP client to configure.
    #[arg(long, value_enum)]
    pub client: McpClientKind,
    /// A bud (id or name): its servers and tool selection only.
    #[arg(long, value_name = "NAME")]
    pub bud: Option<String>,
    /// One registered server (id or name): its tools, resources and prompts under their own
    /// names, as the entry `switchboard-NAME` (so several can sit side by side).
    #[arg(long, value_name = "NAME", conflicts_with = "bud")]
    pub server: Option<String>,
    /// Base URL of the instance as the client reaches it [env: SWITCHBOARD_URL]
    /// [default: http://127.0.0.1:8080]
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// A token with the gateway:use scope [env: SWITCHBOARD_TOKEN]; a placeholder when unset.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum McpClientKind {
    ClaudeCode,
    Cursor,
    Vscode,
}

/// The token text used when none is given.
pub const TOKEN_PLACEHOLDER: &str = "<token with gateway:use>";
/// The name the gateway gets in the client's configuration.
const ENTRY_NAME: &str = "switchboard";

pub fn run(arguments: GatewayArgs) -> anyhow::Result<()> {
    match arguments.command {
        GatewayCommand::ConnectConfig(config) => {
            let base = config
                .api_url
                .or_else(|| std::env::var("SWITCHBOARD_URL").ok())
                .unwrap_or_else(|| "http://127.0.0.1:8080".to_owned());
            let token = config
                .token
                .or_else(|| std::env::var("SWITCHBOARD_TOKEN").ok())
                .unwrap_or_else(|| TOKEN_PLACEHOLDER.to_owned());
            let endpoint = match (&config.bud, &config.server) {
                (_, Some(server)) => GatewayEndpoint::Server(server),
                (Some(bud), None) => GatewayEndpoint::Bud(bud),
                (None, None) => GatewayEndpoint::Workspace,
            };
            let url = gateway_url(&base, endpoint);
            println!(
                "{}",
                snippet(config.client, &entry_name(endpoint), &url, &token)
            );
            Ok(())
        }
    }
}

/// Which of the gateway's endpoints a client is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GatewayEndpoint<'a> {
    /// `/gateway/mcp`: the workspace's servers.
    Workspace,
    /// `/gateway/buds/{bud}/mcp`.
    Bud(&'a str),
    /// `/gateway/servers/{server}/mcp`.
    Server(&'a str),
}

/// The endpoint's URL under `base`, the bud or server percent-encoded.
pub fn gateway_url(base: &str, endpoint: GatewayEndpoint<'_>) -> String {
    let base = base.trim_end_matches('/');
    match endpoint {
        GatewayEndpoint::Workspace => format!("{base}/gateway/mcp"),
        GatewayEndpoint::Bud(bud) => format!("{base}/gateway/buds/{}/mcp", percent_encode(bud)),
        GatewayEndpoint::Server(server) => {
            format!("{base}/gateway/servers/{}/mcp", percent_encode(server))
        }
    }
}

/// The name the endpoint gets in the client's configuration: `switchboard`, or
/// `switchboard-{server}` for one server's.
pub fn entry_name(endpoint: GatewayEndpoint<'_>) -> String {
    match endpoint {
        GatewayEndpoint::Server(server) => format!("{ENTRY_NAME}-{server}"),
        GatewayEndpoint::Workspace | GatewayEndpoint::Bud(_) => ENTRY_NAME.to_owned(),
    }
}

/// What to paste: a `claude mcp add` command, Cursor's `mcp.json`, or VS Code's `mcp.json`.
pub fn snippet(client: McpClientKind, name: &str, url: &str, token: &str) -> String {
    let authorization = format!("Bearer {token}");
    let headers = Headers {
        authorization: &authorization,
    };
    match client {
        McpClientKind::ClaudeCode => ClaudeMcpAdd {
            name,
            url,
            authorization: &authorization,
        }
        .to_string(),
        McpClientKind::Cursor => pretty(&CursorConfig {
            mcp_servers: BTreeMap::from([(name, CursorServer { url, headers })]),
        }),
        McpClientKind::Vscode => pretty(&VscodeConfig {
            servers: BTreeMap::from([(
                name,
                VscodeServer {
                    transport: VscodeTransport::Http,
                    url,
                    headers,
                },
            )]),
        }),
    }
}

/// Claude Code's `claude mcp add --transport http NAME URL --header 'Authorization: …'`, every
/// argument quoted for a POSIX shell (the plain default name left bare).
#[derive(Debug)]
pub struct ClaudeMcpAdd<'a> {
    pub name: &'a str,
    pub url: &'a str,
    /// The `Authorization` header's value.
    pub authorization: &'a str,
}

impl fmt::Display for ClaudeMcpAdd<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = if self.name == ENTRY_NAME {
            self.name.to_owned()
        } else {
            shell_quote(self.name)
        };
        write!(
            f,
            "claude mcp add --transport http {name} {} --header {}",
            shell_quote(self.url),
            shell_quote(&format!("Authorization: {}", self.authorization))
        )
    }
}

/// Cursor's `mcp.json`: `{"mcpServers": {NAME: {"url", "headers"}}}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CursorConfig<'a> {
    pub mcp_servers: BTreeMap<&'a str, CursorServer<'a>>,
}

/// One remote server of Cursor's `mcp.json` (Streamable HTTP is implied by `url`).
#[derive(Debug, Serialize)]
pub struct CursorServer<'a> {
    pub url: &'a str,
    pub headers: Headers<'a>,
}

/// VS Code's `mcp.json`: `{"servers": {NAME: {"type": "http", "url", "headers"}}}`.
#[derive(Debug, Serialize)]
pub struct VscodeConfig<'a> {
    pub servers: BTreeMap<&'a str, VscodeServer<'a>>,
}

/// One remote server of VS Code's `mcp.json`.
#[derive(Debug, Serialize)]
pub struct VscodeServer<'a> {
    #[serde(rename = "type")]
    pub transport: VscodeTransport,
    pub url: &'a str,
    pub headers: Headers<'a>,
}

/// VS Code's name for the transport of a remote server: Streamable HTTP (with fallback to
/// HTTP+SSE, which VS Code does on its own).
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VscodeTransport {
    Http,
}

/// The headers every request of the client carries: the gateway's bearer token.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Headers<'a> {
    #[serde(rename = "Authorization")]
    pub authorization: &'a str,
}

fn pretty(config: &impl Serialize) -> String {
    serde_json::to_string_pretty(config).expect("a client's configuration serializes")
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_bud_encoded() {
        assert_eq!(
            gateway_url("http://h:1/", GatewayEndpoint::Workspace),
            "http://h:1/gateway/mcp"
        );
        assert_eq!(
            gateway_url("http://h:1", GatewayEndpoint::Bud("my bud/x")),
            "http://h:1/gateway/buds/my%20bud%2Fx/mcp"
        );
        assert_eq!(
            gateway_url("http://h:1", GatewayEndpoint::Server("files")),
            "http://h:1/gateway/servers/files/mcp"
        );
    }

    #[test]
    fn claude_code_gets_a_quoted_command() {
        assert_eq!(
            snippet(
                McpClientKind::ClaudeCode,
                ENTRY_NAME,
                "http://h/gateway/mcp",
                "it's"
            ),
            r"claude mcp add --transport http switchboard 'http://h/gateway/mcp' --header 'Authorization: Bearer it'\''s'"
        );
    }

    #[test]
    fn cursor_and_vscode_get_their_own_mcp_json() {
        let url = "http://h/gateway/servers/files/mcp";
        assert_eq!(
            snippet(McpClientKind::Cursor, "switchboard-files", url, "t"),
            r#"{
  "mcpServers": {
    "switchboard-files": {
      "url": "http://h/gateway/servers/files/mcp",
      "headers": {
        "Authorization": "Bearer t"
      }
    }
  }
}"#
        );
        assert_eq!(
            snippet(
                McpClientKind::Vscode,
                ENTRY_NAME,
                "http://h/gateway/mcp",
                "t"
            ),
            r#"{
  "servers": {
    "switchboard": {
      "type": "http",
      "url": "http://h/gateway/mcp",
      "headers": {
        "Authorization": "Bearer t"
      }
    }
  }
}"#
        );
    }
}
