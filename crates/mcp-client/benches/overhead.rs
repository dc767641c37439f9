//! Figures for the MCP client side (a bench binary printing numbers, not a timed test):
//!
//! 1. tool-call overhead of `McpClient::call_tool` (argument validation, permits, session
//!    lookup, progress routing, result normalisation) over a bare rmcp client calling the same
//!    tool on the same server, over stdio and Streamable HTTP — as a latency ratio;
//! 2. calls per second on one shared session, with the default per-server limit and a raised one;
//! 3. memory per idle session: our RSS growth per open session (stdio and HTTP), and the RSS of
//!    one idle stdio child.
//!
//! The upstream is `@modelcontextprotocol/server-everything` (`echo`) from interop/.
//! Run: `cargo bench -p switchboard-mcp-client --bench overhead` (after `bash interop/install.sh`).

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use switchboard_core::{
    ServerId, SessionScope, ToolDefinition, TransportKind, UserId, WorkspaceId,
};
use switchboard_mcp_client::{
    CallContext, Caller, McpClient, McpClientConfig, RemoteEndpoint, StdioCommand,
    UpstreamEndpoint, UpstreamServer,
};

const WARMUP_CALLS: usize = 200;
const MEASURED_CALLS: usize = 2000;
const THROUGHPUT_SECONDS: u64 = 5;
const IDLE_STDIO_SESSIONS: usize = 20;
const IDLE_HTTP_SESSIONS: usize = 100;

fn everything_js() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.exists(),
        "missing {}: run `bash interop/install.sh` first",
        path.display()
    );
    path.canonicalize().unwrap().to_string_lossy().into_owned()
}

fn loopback_preload() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../interop/loopback.cjs")
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn echo_tool() -> ToolDefinition {
    ToolDefinition {
        name: "echo".into(),
        title: None,
        description: String::new(),
        input_schema: json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
        output_schema: None,
        annotations: None,
        meta: Default::default(),
    }
}

fn server(name: &str, endpoint: UpstreamEndpoint, scope: SessionScope) -> UpstreamServer {
    UpstreamServer {
        id: ServerId::from(name),
        workspace_id: WorkspaceId::from("bench"),
        name: name.into(),
        endpoint,
        session_scope: scope,
        timeout_ms: None,
        init_timeout_ms: None,
        origin: switchboard_mcp_client::ServerOrigin::Registered,
    }
}

fn stdio_server(scope: SessionScope) -> UpstreamServer {
    server(
        "everything_stdio",
        UpstreamEndpoint::Stdio(StdioCommand {
            command: "node".into(),
            args: vec![everything_js(), "stdio".into()],
            env: BTreeMap::new(),
            working_dir: None,
        }),
        scope,
    )
}

fn http_server(url: &str, scope: SessionScope) -> UpstreamServer {
    server(
        "everything_http",
        UpstreamEndpoint::Remote(RemoteEndpoint {
            transport: TransportKind::StreamableHttp,
            url: url.parse().unwrap(),
            headers: BTreeMap::new(),
            api_key: None,
        }),
        scope,
    )
}

struct HttpPeer(Child, u16);

impl HttpPeer {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("node")
            .arg("--require")
            .arg(loopback_preload())
            .arg(everything_js())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpPeer(child, port)
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.1)
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn rss_kib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn echo_params(index: usize) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = json!({"message": format!("ping {index}")})
        .as_object()
        .cloned();
    params
}

/// Mean latency of `MEASURED_CALLS` sequential calls through a bare rmcp client.
async fn bare_latency<T, E, A>(transport: T) -> Duration
where
    T: rmcp::transport::IntoTransport<rmcp::RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = ().serve(transport).await.expect("bare rmcp client connects");
    for index in 0..WARMUP_CALLS {
        client.call_tool(echo_params(index)).await.unwrap();
    }
    let started = Instant::now();
    for index in 0..MEASURED_CALLS {
        client.call_tool(echo_params(index)).await.unwrap();
    }
    let elapsed = started.elapsed();
    client.cancel().await.ok();
    elapsed / MEASURED_CALLS as u32
}

/// Mean latency of `MEASURED_CALLS` sequential calls through `McpClient`.
async fn our_latency(client: &McpClient, upstream: &UpstreamServer) -> Duration {
    let context = CallContext::new(Caller {
        user_id: UserId::from("bench"),
        conversation_id: None,
    });
    let tool = echo_tool();
    for index in 0..WARMUP_CALLS {
        client
            .call_tool(
                upstream,
                &tool,
                json!({"message": format!("ping {index}")}),
                &context,
            )
            .await
            .unwrap();
    }
    let started = Instant::now();
    for index in 0..MEASURED_CALLS {
        client
            .call_tool(
                upstream,
                &tool,
                json!({"message": format!("ping {index}")}),
                &context,
            )
            .await
            .unwrap();
    }
    started.elapsed() / MEASURED_CALLS as u32
}

/// Calls per second from `workers` concurrent callers on one shared session.
async fn throughput(client: &McpClient, upstream: &UpstreamServer, workers: usize) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(THROUGHPUT_SECONDS);
    let tasks: Vec<_> = (0..workers)
        .map(|worker| {
            let client = client.clone();
            let upstream = upstream.clone();
            tokio::spawn(async move {
                let context = CallContext::new(Caller {
                    user_id: UserId::from(format!("u{worker}")),
                    conversation_id: None,
                });
                let tool = echo_tool();
                let mut done = 0u64;
                while Instant::now() < deadline {
                    client
                        .call_tool(&upstream, &tool, json!({"message": "x"}), &context)
                        .await
                        .unwrap();
                    done += 1;
                }
                done
            })
        })
        .collect();
    let mut total = 0;
    for task in tasks {
        total += task.await.unwrap();
    }
    total as f64 / THROUGHPUT_SECONDS as f64
}

/// Our RSS growth per idle session (KiB), opening `count` per-conversation sessions, and the
/// RSS of one child process (stdio).
async fn idle_session_memory(upstream: &UpstreamServer, count: usize) -> (f64, u64) {
    let client = McpClient::new(McpClientConfig::default()).unwrap();
    // One session first, so one-time costs (pools, code pages) are not counted.
    let warm = CallContext::new(Caller {
        user_id: "warm".into(),
        conversation_id: Some("warm".into()),
    });
    client
        .call_tool(upstream, &echo_tool(), json!({"message": "x"}), &warm)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kib("self");
    for index in 0..count {
        let context = CallContext::new(Caller {
            user_id: "u".into(),
            conversation_id: Some(format!("c{index}").into()),
        });
        client
            .call_tool(upstream, &echo_tool(), json!({"message": "x"}), &context)
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_kib("self");
    let child_rss = client
        .session_statuses(&upstream.id)
        .iter()
        .find_map(|status| status.process_id)
        .map(|pid| rss_kib(&pid.to_string()))
        .unwrap_or(0);
    client.shutdown().await;
    (
        after.saturating_sub(before) as f64 / count as f64,
        child_rss,
    )
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // Memory first, in a process that has not grown its heap for anything else yet.
    let peer = HttpPeer::start();
    println!("memory per idle session (per-conversation sessions, measured first)");
    let (stdio_kib, child_kib) = idle_session_memory(
        &stdio_server(SessionScope::PerConversation),
        IDLE_STDIO_SESSIONS,
    )
    .await;
    let (http_kib, _) = idle_session_memory(
        &http_server(&peer.url(), SessionScope::PerConversation),
        IDLE_HTTP_SESSIONS,
    )
    .await;
    println!(
        "  stdio ({IDLE_STDIO_SESSIONS} sessions): {stdio_kib:>6.0} KiB in Switchboard per session, plus the child process ({child_kib} KiB RSS each)"
    );
    println!(
        "  HTTP ({IDLE_HTTP_SESSIONS} sessions): {http_kib:>6.0} KiB in Switchboard per session\n"
    );

    println!("latency ({MEASURED_CALLS} sequential echo calls after {WARMUP_CALLS} warm-up calls)");
    let script = everything_js();
    let bare_stdio = bare_latency(
        TokioChildProcess::builder(tokio::process::Command::new("node").configure(|command| {
            command.arg(&script).arg("stdio");
        }))
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
        .0,
    )
    .await;
    let client = McpClient::new(McpClientConfig::default()).unwrap();
    let stdio = stdio_server(SessionScope::Shared);
    let ours_stdio = our_latency(&client, &stdio).await;
    println!(
        "  stdio            bare rmcp {:>8.1} µs/call   McpClient {:>8.1} µs/call   ratio {:.3}",
        micros(bare_stdio),
        micros(ours_stdio),
        ours_stdio.as_secs_f64() / bare_stdio.as_secs_f64()
    );
    let bare_http = bare_latency(StreamableHttpClientTransport::from_uri(peer.url())).await;
    let http = http_server(&peer.url(), SessionScope::Shared);
    let ours_http = our_latency(&client, &http).await;
    println!(
        "  streamable HTTP  bare rmcp {:>8.1} µs/call   McpClient {:>8.1} µs/call   ratio {:.3}",
        micros(bare_http),
        micros(ours_http),
        ours_http.as_secs_f64() / bare_http.as_secs_f64()
    );

    println!("\ncalls per second on one shared session ({THROUGHPUT_SECONDS} s each)");
    for workers in [1, 10, 32] {
        let stdio_rate = throughput(&client, &stdio, workers).await;
        let http_rate = throughput(&client, &http, workers).await;
        println!(
            "  {workers:>2} callers, per-server limit 10: stdio {stdio_rate:>8.0}/s   HTTP {http_rate:>8.0}/s"
        );
    }
    client.shutdown().await;
    let raised = McpClient::new(McpClientConfig {
        max_concurrent_calls_per_server: 64,
        ..McpClientConfig::default()
    })
    .unwrap();
    let stdio_rate = throughput(&raised, &stdio, 32).await;
    let http_rate = throughput(&raised, &http, 32).await;
    println!(
        "  32 callers, per-server limit 64: stdio {stdio_rate:>8.0}/s   HTTP {http_rate:>8.0}/s"
    );
    raised.shutdown().await;
}
