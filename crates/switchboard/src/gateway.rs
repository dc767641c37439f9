//! `switchboard gateway connect-config`: prints what to paste into an MCP client (Claude Code,
//! Cursor, VS Code) so it reaches this instance's gateway (`/gateway/mcp`, a bud's
//! `/gateway/buds/{bud}/mcp`, or one registered server's `/gateway/servers/{server}/mcp`) with
//! a `gateway:use` token. It only formats: nothing is sent.

use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;

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
    let command_name = if name == ENTRY_NAME {
        name.to_owned()
    } else {
        shell_quote(name)
    };
    match client {
        McpClientKind::ClaudeCode => format!(
            "claude mcp add --transport http {command_name} {} --header {}",
            shell_quote(url),
            shell_quote(&format!("Authorization: {authorization}"))
        ),
        McpClientKind::Cursor => pretty(json!({
            "mcpServers": {
                name: { "url": url, "headers": { "Authorization": authorization } }
            }
        })),
        McpClientKind::Vscode => pretty(json!({
            "servers": {
                name: {
                    "type": "http",
                    "url": url,
                    "headers": { "Authorization": authorization }
                }
            }
        })),
    }
}

fn pretty(value: serde_json::Value) -> String {
    serde_json::to_string_pretty(&value).expect("a JSON value serializes")
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
}
