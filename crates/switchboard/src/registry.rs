//! `switchboard registry search|add`: the MCP registry a *running* instance is configured with
//! (`[registry] url`), through its HTTP API (`/api/mcp/registry/*`) like `servers`: the
//! instance searches the registry and builds the server from the registry's own `server.json`,
//! so the CLI gets exactly what the web UI's registry browser gets.

use crate::servers::client::{ApiClient, segment};
use crate::servers::output::{print, table, text};
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde_json::{Map, Value, json};

#[derive(Debug, Args)]
pub struct RegistryArgs {
    /// Base URL of the running instance [env: SWITCHBOARD_URL] [default: http://127.0.0.1:8080]
    #[arg(long, global = true, value_name = "URL")]
    pub api_url: Option<String>,
    /// API token (servers:read to search, servers:write to add, admin for a package that
    /// runs here) [env: SWITCHBOARD_TOKEN]
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,
    #[command(subcommand)]
    pub command: RegistryCommand,
}

#[derive(Debug, Subcommand)]
pub enum RegistryCommand {
    /// Search the registry's latest versions: `search weather`.
    Search {
        /// Words in the server's name (all servers when omitted).
        text: Option<String>,
        /// At most this many (1 to 100).
        #[arg(long)]
        limit: Option<u32>,
        /// `next_cursor` of the previous page (printed under the table).
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Register a published server: `add io.github.acme/weather --value API_KEY=…`.
    Add {
        /// The server's name in the registry.
        server: String,
        /// Default: latest.
        #[arg(long)]
        version: Option<String>,
        /// The name in Switchboard (default: the registry name's last part).
        #[arg(long)]
        name: Option<String>,
        /// Index of the package to run (a local command: admins only).
        #[arg(long)]
        package: Option<usize>,
        /// Index of the remote to reach.
        #[arg(long)]
        remote: Option<usize>,
        /// A declared input, KEY=VALUE (env variable, header, argument or URL variable;
        /// repeatable). Stored encrypted.
        #[arg(long = "value", value_name = "KEY=VALUE")]
        values: Vec<String>,
        /// Only show what would be registered.
        #[arg(long)]
        dry_run: bool,
        /// Register switched off.
        #[arg(long)]
        inactive: bool,
    },
}

/// Runs a `registry` command; `json` prints the API's answers as they are.
pub async fn run(arguments: RegistryArgs, json: bool) -> anyhow::Result<()> {
    let api = crate::servers::api_client(arguments.api_url, arguments.token)?;
    match arguments.command {
        RegistryCommand::Search {
            text,
            limit,
            cursor,
        } => {
            let found = api.get(&search_path(text, limit, cursor)).await?;
            print(json, &found, search_table)
        }
        RegistryCommand::Add {
            server,
            version,
            name,
            package,
            remote,
            values,
            dry_run,
            inactive,
        } => {
            let mut body = json!({"server": server, "dry_run": dry_run, "is_active": !inactive});
            let fields = body.as_object_mut().context("a JSON object")?;
            optional(fields, "version", version.map(Value::from));
            optional(fields, "name", name.map(Value::from));
            optional(fields, "package", package.map(Value::from));
            optional(fields, "remote", remote.map(Value::from));
            fields.insert("values".into(), Value::Object(parse_values(&values)?));
            add(&api, &body, json).await
        }
    }
}

fn search_path(text: Option<String>, limit: Option<u32>, cursor: Option<String>) -> String {
    let mut query = Vec::new();
    if let Some(text) = text {
        query.push(format!("search={}", segment(&text)));
    }
    if let Some(limit) = limit {
        query.push(format!("limit={limit}"));
    }
    if let Some(cursor) = cursor {
        query.push(format!("cursor={}", segment(&cursor)));
    }
    let query = if query.is_empty() {
        String::new()
    } else {
        format!("?{}", query.join("&"))
    };
    format!("/api/mcp/registry/servers{query}")
}

fn optional(fields: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        fields.insert(key.to_owned(), value);
    }
}

fn parse_values(values: &[String]) -> anyhow::Result<Map<String, Value>> {
    let mut parsed = Map::new();
    for value in values {
        let Some((key, text)) = value.split_once('=') else {
            bail!("--value {value}: expected KEY=VALUE");
        };
        parsed.insert(key.to_owned(), Value::from(text));
    }
    Ok(parsed)
}

async fn add(api: &ApiClient, body: &Value, json: bool) -> anyhow::Result<()> {
    let report = api.post("/api/mcp/registry/add", body).await?;
    print(json, &report, add_report)
}

/// The search answer as a table, with the cursor of the next page when there is one.
fn search_table(found: &Value) -> String {
    let rows: Vec<Vec<String>> = found["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|entry| {
            vec![
                text(&entry["server"]["name"]),
                text(&entry["server"]["version"]),
                text(&entry["server"]["description"]),
            ]
        })
        .collect();
    let mut out = table(&["NAME", "VERSION", "DESCRIPTION"], &rows);
    if let Some(cursor) = found["next_cursor"].as_str() {
        out.push_str(&format!("more: --cursor {cursor}\n"));
    }
    out
}

/// What `add` registered (or would, on a dry run).
fn add_report(report: &Value) -> String {
    let verb = if report["dry_run"] == Value::Bool(true) {
        "would register"
    } else {
        "registered"
    };
    let how = match report["url"].as_str() {
        Some(url) => url.to_owned(),
        None => {
            let args: Vec<String> = report["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(text)
                .collect();
            format!("{} {}", text(&report["command"]), args.join(" "))
        }
    };
    format!(
        "{verb} {} {} as '{}': {} {}\n",
        text(&report["registry_server"]),
        text(&report["version"]),
        text(&report["name"]),
        text(&report["transport"]),
        how.trim_end()
    )
}
