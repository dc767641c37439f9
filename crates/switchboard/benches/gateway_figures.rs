//! Gateway figures (a bench binary printing numbers, not a timed test): the latency of one
//! `tools/call` through `/gateway/mcp` against the same call made directly, same process,
//! same run.
//!
//! The real HTTP server on loopback (SQLite with `synchronous=FULL` in a temp dir) serves both
//! our own knowledge-graph endpoint `/mcp` and the gateway; `kg` (that endpoint) is the
//! gateway's one upstream and its `schema_version` tool is `ALWAYS_ALLOW`, so no person is
//! asked. One rmcp client (Streamable HTTP, one session) calls `schema_version` on `/mcp`
//! directly, another `kg__schema_version` on `/gateway/mcp`, one call at a time, after a
//! warm-up. A gateway call is everything the chat does for a call besides the model: the
//! offer (cached), the call recorded `proposed`, the approval gate (rule lookups, pins),
//! `approved` and `dispatched` committed before it leaves, the upstream call over the shared
//! session, the final state, the audit row.
//!
//! Run: `cargo bench -p switchboard-server --bench gateway_figures` (`-- --calls 500`).

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::time::Instant;
use switchboard_approvals::{ApprovalConfig, Approvals};
use switchboard_chat::{ChatConfig, ChatService, OwnEndpoints};
use switchboard_core::{ApprovalPolicy, Principal};
use switchboard_llm::LlmConfig;
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_mcp_server::{KgConfig, KnowledgeGraphService, register_kg_upstream};
use switchboard_server::{AppState, ServerConfig, app, serve_router};
use switchboard_store::{DatabaseConfig, SecretCipher, Store};
use tokio_util::sync::CancellationToken;

type Client = RunningService<RoleClient, ClientConfig>;

struct Running {
    base: String,
    token: String,
    shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

async fn start() -> Running {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        &DatabaseConfig::default(),
        dir.path(),
        SecretCipher::generate(),
    )
    .await
    .unwrap();
    let boot = store.bootstrap_default(None).await.unwrap().unwrap();
    let workspace = boot.workspace.id.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let approvals = Approvals::new(store.clone(), ApprovalConfig::default()).unwrap();
    let client = McpClient::builder(McpClientConfig::default())
        .elicitation(approvals.elicitation_responder())
        .build()
        .unwrap();
    let chat = ChatService::builder(
        store.clone(),
        client,
        ChatConfig::default(),
        LlmConfig::default(),
    )
    .approval_gate(approvals.gate())
    .own_endpoints(OwnEndpoints::for_listener(address))
    .shutdown_token(shutdown.clone())
    .build()
    .unwrap();
    // The bench's token makes thousands of calls a minute: out of the rate limit's way.
    let kg_config = KgConfig {
        rate_limit_per_minute: 1_000_000,
        rate_limit_burst: 100_000,
        ..KgConfig::default()
    };
    let kg = KnowledgeGraphService::for_store(store.clone(), kg_config, Some(workspace.clone()))
        .unwrap();
    kg.load_sample_if_configured().await.unwrap();
    register_kg_upstream(&store, &workspace, &format!("http://{address}/mcp"))
        .await
        .unwrap();
    let kg_server = store
        .find_server_by_name(&workspace, "kg")
        .await
        .unwrap()
        .unwrap()
        .id;
    let principal = Principal {
        workspace_id: workspace,
        user_id: boot.owner.id,
        token_id: Some(boot.token.id),
        scopes: boot.token.scopes,
    };
    approvals
        .set_tool_policy(
            &principal,
            &kg_server,
            "schema_version",
            ApprovalPolicy::AlwaysAllow,
        )
        .await
        .unwrap();
    let config = ServerConfig {
        bind: address,
        ..ServerConfig::default()
    };
    let state = AppState::new(store.clone(), config.clone())
        .with_shutdown_token(shutdown.clone())
        .with_knowledge_graph(kg)
        .with_chat(chat)
        .with_approvals(approvals);
    let token = shutdown.clone();
    let router = app(state);
    tokio::spawn(async move {
        serve_router(
            listener,
            router,
            &config,
            token.clone(),
            token.cancelled_owned(),
        )
        .await
    });
    Running {
        base: format!("http://{address}"),
        token: boot.plaintext.expose().to_owned(),
        shutdown,
        _dir: dir,
    }
}

async fn connect(running: &Running, path: &str) -> Client {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}{path}", running.base))
        .auth_header(running.token.clone());
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("gateway-figures", "1.0.0"),
    )
    .serve(StreamableHttpClientTransport::from_config(config))
    .await
    .unwrap()
}

/// `calls` sequential calls of `tool`, in microseconds each.
async fn time_calls(client: &Client, tool: &str, calls: usize) -> Vec<u128> {
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        let result = client
            .call_tool(CallToolRequestParams::new(tool.to_owned()))
            .await
            .unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
        samples.push(started.elapsed().as_micros());
    }
    samples
}

fn percentiles(mut values: Vec<u128>) -> String {
    values.sort_unstable();
    let at = |fraction: f64| {
        values[((values.len() - 1) as f64 * fraction).round() as usize] as f64 / 1000.0
    };
    format!(
        "p50 {:>7.2} ms  p95 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms",
        at(0.5),
        at(0.95),
        at(0.99),
        at(1.0)
    )
}

fn calls_from_args() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|arg| arg == "--calls")
        .and_then(|index| args.get(index + 1))
        .and_then(|value| value.parse().ok())
        .unwrap_or(300)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let calls = calls_from_args();
    let running = start().await;
    let direct = connect(&running, "/mcp").await;
    let gateway = connect(&running, "/gateway/mcp").await;
    time_calls(&direct, "schema_version", 20).await;
    time_calls(&gateway, "kg__schema_version", 20).await;
    let direct_samples = time_calls(&direct, "schema_version", calls).await;
    let gateway_samples = time_calls(&gateway, "kg__schema_version", calls).await;
    println!("tools/call, {calls} sequential calls each, one session each:");
    println!("  direct  /mcp          {}", percentiles(direct_samples));
    println!("  gateway /gateway/mcp  {}", percentiles(gateway_samples));
    direct.cancel().await.unwrap();
    gateway.cancel().await.unwrap();
    running.shutdown.cancel();
}
