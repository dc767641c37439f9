//! `switchboard gateway connect-config`: prints what to paste into an MCP client (Claude Code,
//! Cursor, VS Code) so it reaches this instance's gateway (`/gateway/mcp`, or a bud's
//! `/gateway/buds/{bud}/mcp`) with a `gateway:use` token. It only formats: nothing is sent.

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
            let url = gateway_url(&base, config.bud.as_deref());
            println!("{}", snippet(config.client, &url, &token));
            Ok(())
        }
    }
}

/// `{base}/gateway/mcp`, or `{base}/gateway/buds/{bud}/mcp` with the bud percent-encoded.
pub fn gateway_url(base: &str, bud: Option<&str>) -> String {
    let base = base.trim_end_matches('/');
    match bud {
        None => format!("{base}/gateway/mcp"),
        Some(bud) => format!("{base}/gateway/buds/{}/mcp", percent_encode(bud)),
    }
}

/// What to paste: a `claude mcp add` command, Cursor's `mcp.json`, or VS Code's `mcp.json`.
pub fn snippet(client: McpClientKind, url: &str, token: &str) -> String {
    let authorization = format!("Bearer {token}");
    match client {
        McpClientKind::ClaudeCode => format!(
            "claude mcp add --transport http {ENTRY_NAME} {} --header {}",
            shell_quote(url),
            shell_quote(&format!("Authorization: {authorization}"))
        ),
        McpClientKind::Cursor => pretty(json!({
            "mcpServers": {
                ENTRY_NAME: { "url": url, "headers": { "Authorization": authorization } }
            }
        })),
        McpClientKind::Vscode => pretty(json!({
            "servers": {
                ENTRY_NAME: {
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
        assert_eq!(gateway_url("http://h:1/", None), "http://h:1/gateway/mcp");
        assert_eq!(
            gateway_url("http://h:1", Some("my bud/x")),
            "http://h:1/gateway/buds/my%20bud%2Fx/mcp"
        );
    }

    #[test]
    fn claude_code_gets_a_quoted_command() {
        assert_eq!(
            snippet(McpClientKind::ClaudeCode, "http://h/gateway/mcp", "it's"),
            r"claude mcp add --transport http switchboard 'http://h/gateway/mcp' --header 'Authorization: Bearer it'\''s'"
        );
    }
}
