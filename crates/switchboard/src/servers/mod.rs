//! `switchboard servers …`: manage the MCP servers of a *running* instance through its HTTP API
//! (`/api/mcp/servers`), with the instance's URL and an API token from flags or the
//! environment. Prints tables, or the API's JSON with the global `--json`.

pub(crate) mod client;
pub(crate) mod output;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use client::ApiClient;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct ServersArgs {
    /// Base URL of the running instance [env: SWITCHBOARD_URL] [default: http://127.0.0.1:8080]
    #[arg(long, global = true, value_name = "URL")]
    pub api_url: Option<String>,
    /// API token (needs servers:read, servers:write to change, admin for stdio servers)
    /// [env: SWITCHBOARD_TOKEN]
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,
    #[command(subcommand)]
    pub command: ServersCommand,
}

#[derive(Debug, Subcommand)]
pub enum ServersCommand {
    /// Register a server: `add NAME --command npx -- -y @modelcontextprotocol/server-everything`
    /// or `add NAME --url https://… [--transport sse|websocket]`.
    Add(Box<AddArgs>),
    /// List the workspace's servers with their state.
    List,
    /// Show one server (by name or id), with its sessions.
    Show { server: String },
    /// Connect, initialize and list tools now; prints latency and server info.
    Test { server: String },
    /// Refresh the server's cached tools, resources and prompts.
    Sync { server: String },
    /// List a server's cached tools; `--enable`/`--disable` switch tools on or off.
    Tools {
        server: String,
        #[arg(long, value_name = "TOOL")]
        enable: Vec<String>,
        #[arg(long, value_name = "TOOL")]
        disable: Vec<String>,
    },
    /// Call a tool: `call SERVER TOOL --args '{"a": 1}'`.
    Call {
        server: String,
        tool: String,
        /// Arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
    },
    /// Remove a server (its sessions and processes stop).
    Remove { server: String },
    /// Register the servers of a Claude Desktop, Claude Code, Cursor, VS Code or Windsurf
    /// configuration file (`-` reads standard input); prints what was created, changed or
    /// skipped, and why.
    Import {
        file: PathBuf,
        /// Only show what would happen.
        #[arg(long)]
        dry_run: bool,
        /// claude_desktop, claude_code, cursor, vscode or windsurf (default: detected).
        #[arg(long)]
        format: Option<String>,
        /// Replace the configuration of servers of the same name (default: skip them).
        #[arg(long)]
        replace: bool,
    },
    /// Print the workspace's servers as a client's configuration file, secrets as
    /// placeholders: `export --format claude_desktop|claude_code|cursor|vscode`.
    Export {
        #[arg(long, default_value = "claude_desktop")]
        format: String,
    },
}

#[derive(Debug, Args)]
pub struct AddArgs {
    pub name: String,
    /// stdio, streamable_http, sse or websocket (default: stdio with --command, else
    /// streamable_http).
    #[arg(long)]
    pub transport: Option<String>,
    /// The program of a stdio server (run directly, never through a shell).
    #[arg(long)]
    pub command: Option<String>,
    /// Arguments of the program (after `--`).
    #[arg(last = true)]
    pub args: Vec<String>,
    /// Environment variable for a stdio server, NAME=value (repeatable).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    #[arg(long)]
    pub working_dir: Option<String>,
    /// URL of a remote server.
    #[arg(long)]
    pub url: Option<String>,
    /// Extra request header, "Name: value" (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Sent as `Authorization: Bearer …`.
    #[arg(long)]
    pub api_key: Option<String>,
    /// shared, per_user or per_conversation.
    #[arg(long)]
    pub session_scope: Option<String>,
    /// Tool-call timeout for this server (default: `mcp.tool_call_timeout_secs`).
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// Session start timeout for this server (default: `mcp.session_init_timeout_secs`).
    #[arg(long)]
    pub init_timeout_ms: Option<u64>,
    /// Register switched off.
    #[arg(long)]
    pub inactive: bool,
}

/// Runs a `servers` command; `json` (the global `--json`) prints the API's answers as they are.
pub async fn run(arguments: ServersArgs, json: bool) -> anyhow::Result<()> {
    let api = api_client(arguments.api_url, arguments.token)?;
    match arguments.command {
        ServersCommand::Add(add) => {
            let created = api.post("/api/mcp/servers", &add_body(*add)?).await?;
            output::print(json, &created, output::server_details)
        }
        ServersCommand::List => {
            let listed = api.get("/api/mcp/servers").await?;
            output::print(json, &listed, output::server_table)
        }
        ServersCommand::Show { server } => {
            let id = api.resolve(&server).await?;
            let shown = api.get(&format!("/api/mcp/servers/{id}")).await?;
            output::print(json, &shown, output::server_details)
        }
        ServersCommand::Test { server } => test_connection(&api, &server, json).await,
        ServersCommand::Sync { server } => {
            let id = api.resolve(&server).await?;
            let synced = api
                .post(&format!("/api/mcp/servers/{id}/sync"), &json!({}))
                .await?;
            output::print(json, &synced, output::sync_outcome)
        }
        ServersCommand::Tools {
            server,
            enable,
            disable,
        } => switch_tools(&api, &server, &enable, &disable, json).await,
        ServersCommand::Call { server, tool, args } => {
            call_tool(&api, &server, &tool, &args, json).await
        }
        ServersCommand::Import {
            file,
            dry_run,
            format,
            replace,
        } => {
            let body = import_body(&file, dry_run, format, replace)?;
            let report = api.post("/api/mcp/servers/import", &body).await?;
            output::print(json, &report, output::import_report)
        }
        ServersCommand::Export { format } => {
            let path = format!(
                "/api/mcp/servers/export?format={}",
                client::segment(&format)
            );
            let file = api.get(&path).await?;
            println!("{}", serde_json::to_string_pretty(&file)?);
            Ok(())
        }
        ServersCommand::Remove { server } => {
            let id = api.resolve(&server).await?;
            api.delete(&format!("/api/mcp/servers/{id}")).await?;
            if !json {
                println!("removed {server}");
            }
            Ok(())
        }
    }
}

/// The API client: `--api-url` or `SWITCHBOARD_URL` (default the local server), and
/// `--token` or `SWITCHBOARD_TOKEN` (required).
pub(crate) fn api_client(
    api_url: Option<String>,
    token: Option<String>,
) -> anyhow::Result<ApiClient> {
    let url = api_url
        .or_else(|| std::env::var("SWITCHBOARD_URL").ok())
        .unwrap_or_else(|| "http://127.0.0.1:8080".to_owned());
    let token = token
        .or_else(|| std::env::var("SWITCHBOARD_TOKEN").ok())
        .context("no API token: pass --token or set SWITCHBOARD_TOKEN")?;
    ApiClient::new(&url, &token)
}

/// `servers test`: prints the outcome; a failed test is a failed command.
async fn test_connection(api: &ApiClient, server: &str, json: bool) -> anyhow::Result<()> {
    let id = api.resolve(server).await?;
    let tested = api
        .post(&format!("/api/mcp/servers/{id}/test"), &json!({}))
        .await?;
    output::print(json, &tested, output::test_outcome)?;
    if tested["ok"] != true {
        bail!("the connection test failed");
    }
    Ok(())
}

/// `servers tools`: enables then disables the named tools, and prints the tool table.
async fn switch_tools(
    api: &ApiClient,
    server: &str,
    enable: &[String],
    disable: &[String],
    json: bool,
) -> anyhow::Result<()> {
    let id = api.resolve(server).await?;
    for (names, enabled) in [(enable, true), (disable, false)] {
        for name in names {
            api.patch(
                &format!("/api/mcp/servers/{id}/tools/{}", client::segment(name)),
                &json!({"is_enabled": enabled}),
            )
            .await?;
        }
    }
    let capabilities = api
        .get(&format!("/api/mcp/servers/{id}/capabilities"))
        .await?;
    output::print(json, &capabilities, output::tool_table)
}

/// `servers call`: prints the tool's result; a tool error is a failed command.
async fn call_tool(
    api: &ApiClient,
    server: &str,
    tool: &str,
    args: &str,
    json: bool,
) -> anyhow::Result<()> {
    let arguments: Value = serde_json::from_str(args).context("--args must be a JSON object")?;
    let id = api.resolve(server).await?;
    let path = format!("/api/mcp/servers/{id}/tools/{}/call", client::segment(tool));
    let result = api.post(&path, &json!({"arguments": arguments})).await?;
    output::print(json, &result, output::tool_result)?;
    if result["isError"] == true {
        bail!("the tool reported an error");
    }
    Ok(())
}

fn import_body(
    file: &Path,
    dry_run: bool,
    format: Option<String>,
    replace: bool,
) -> anyhow::Result<Value> {
    let content = if file == Path::new("-") {
        std::io::read_to_string(std::io::stdin()).context("reading standard input")?
    } else {
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?
    };
    let mut body = json!({"content": content, "dry_run": dry_run});
    if let Some(format) = format {
        body["format"] = json!(format);
    }
    if replace {
        body["on_conflict"] = json!("replace");
    }
    Ok(body)
}

fn add_body(add: AddArgs) -> anyhow::Result<Value> {
    let transport = add.transport.unwrap_or_else(|| {
        if add.command.is_some() {
            "stdio"
        } else {
            "streamable_http"
        }
        .to_owned()
    });
    let mut body = Map::new();
    body.insert("name".into(), json!(add.name));
    body.insert("transport".into(), json!(transport));
    if let Some(command) = add.command {
        body.insert("command".into(), json!(command));
        body.insert("args".into(), json!(add.args));
    }
    if !add.env.is_empty() {
        body.insert("env".into(), pairs(&add.env, '=', "--env")?);
    }
    if let Some(dir) = add.working_dir {
        body.insert("working_dir".into(), json!(dir));
    }
    if let Some(url) = add.url {
        body.insert("url".into(), json!(url));
    }
    if !add.headers.is_empty() {
        body.insert("headers".into(), pairs(&add.headers, ':', "--header")?);
    }
    if let Some(api_key) = add.api_key {
        body.insert("api_key".into(), json!(api_key));
    }
    if let Some(scope) = add.session_scope {
        body.insert("session_scope".into(), json!(scope));
    }
    if let Some(timeout) = add.timeout_ms {
        body.insert("timeout_ms".into(), json!(timeout));
    }
    if let Some(timeout) = add.init_timeout_ms {
        body.insert("init_timeout_ms".into(), json!(timeout));
    }
    body.insert("is_active".into(), json!(!add.inactive));
    Ok(Value::Object(body))
}

fn pairs(items: &[String], separator: char, flag: &str) -> anyhow::Result<Value> {
    let mut map = Map::new();
    for item in items {
        let Some((name, value)) = item.split_once(separator) else {
            bail!("{flag} '{item}' needs the form NAME{separator}VALUE");
        };
        map.insert(name.trim().to_owned(), json!(value.trim()));
    }
    Ok(Value::Object(map))
}
