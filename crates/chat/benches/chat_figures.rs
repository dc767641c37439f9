//! Chat figures (a bench binary printing numbers, not a timed test), measured through the
//! real HTTP server on loopback with SQLite in a temp dir and our own kg endpoint at `/mcp`:
//!
//! 1. time to the first SSE byte of `POST /chat/stream` (and to the `meta` event);
//! 2. the per-turn overhead of a one-tool turn with the LLM excluded (an in-process provider
//!    that answers instantly: one `kg__schema_version` call, then one line of text), split
//!    into detection (request → `mcp_tool started`: question stored, catalog, LLM step, call
//!    recorded and gated), tool invocation (`started` → `completed`: the real MCP call over
//!    HTTP to `/mcp` plus the result rows) and total (request → `done`); the same with the
//!    offline planner as the LLM;
//! 3. SSE streams held open at once (answers waiting on a model that never speaks), and the
//!    server's memory per stream — the clients run in a child process so only the server's
//!    RSS is counted.
//!
//! Run: `cargo bench -p switchboard-chat --bench chat_figures` (`-- --streams 2000`).

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use switchboard_chat::{ChatConfig, ChatService, OwnEndpoints};
use switchboard_core::ToolCallRequest;
use switchboard_llm::{
    FinishReason, IndexedToolCall, LlmConfig, LlmError, LlmEvent, LlmEventStream, LlmProvider,
    LlmRequest, OfflineProvider,
};
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_mcp_server::{KgConfig, KnowledgeGraphService, register_kg_upstream};
use switchboard_server::{AppState, ServerConfig, app, serve_router};
use switchboard_store::{DatabaseConfig, SecretCipher, Store};
use tokio_util::sync::CancellationToken;

/// How the stand-in model behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Script {
    /// One line of text.
    Text,
    /// `kg__schema_version`, then one line of text once the result is in.
    OneTool,
    /// Never says anything (the stream stays open).
    Silent,
}

#[derive(Debug)]
struct InstantModel {
    script: Script,
    calls: AtomicUsize,
}

#[async_trait]
impl LlmProvider for InstantModel {
    fn provider_name(&self) -> &str {
        "bench"
    }

    fn default_model(&self) -> &str {
        "instant"
    }

    async fn stream_chat(&self, request: LlmRequest) -> Result<LlmEventStream, LlmError> {
        let has_result = request
            .messages
            .last()
            .is_some_and(|message| message.role.as_str() == "tool");
        let events = match self.script {
            Script::Silent => return Ok(futures::stream::pending().boxed()),
            Script::OneTool if !has_result => {
                let id = format!("call_{}", self.calls.fetch_add(1, Ordering::Relaxed));
                vec![
                    LlmEvent::ToolCall(IndexedToolCall {
                        index: 0,
                        call: ToolCallRequest {
                            id,
                            name: "kg__schema_version".into(),
                            arguments: "{}".into(),
                        },
                    }),
                    LlmEvent::Finished(FinishReason::ToolCalls),
                ]
            }
            _ => vec![
                LlmEvent::TextDelta("The answer.".into()),
                LlmEvent::Finished(FinishReason::Stop),
            ],
        };
        Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed())
    }
}

struct Running {
    base: String,
    token: String,
    client: reqwest::Client,
    shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

async fn start(provider: Arc<dyn LlmProvider>) -> Running {
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
    let client = McpClient::new(McpClientConfig::default()).unwrap();
    let chat = ChatService::builder(
        store.clone(),
        client,
        ChatConfig::default(),
        LlmConfig::default(),
    )
    .provider(provider)
    .own_endpoints(OwnEndpoints::for_listener(address))
    .shutdown_token(shutdown.clone())
    .build()
    .unwrap();
    // The per-token rate limit protects the endpoint from clients; the bench measures latency.
    let kg_config = KgConfig {
        rate_limit_per_minute: 1_000_000,
        rate_limit_burst: 1_000_000,
        ..KgConfig::default()
    };
    let kg = KnowledgeGraphService::for_store(store.clone(), kg_config, Some(workspace.clone()))
        .unwrap();
    kg.load_sample_if_configured().await.unwrap();
    register_kg_upstream(&store, &workspace, &format!("http://{address}/mcp"))
        .await
        .unwrap();
    let config = ServerConfig {
        bind: address,
        ..ServerConfig::default()
    };
    let state = AppState::new(store, config.clone())
        .with_shutdown_token(shutdown.clone())
        .with_knowledge_graph(kg)
        .with_chat(chat);
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
        client: reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .unwrap(),
        shutdown,
        _dir: dir,
    }
}

/// Milestones of one answer, in microseconds from sending the request.
#[derive(Debug, Default, Clone)]
struct Timeline {
    first_byte: u128,
    meta: u128,
    tool_started: Option<u128>,
    tool_completed: Option<u128>,
    done: u128,
}

async fn one_turn(running: &Running, message: &str) -> Timeline {
    let started = Instant::now();
    let response = running
        .client
        .post(format!("{}/chat/stream", running.base))
        .bearer_auth(&running.token)
        .json(&json!({"message": message}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut timeline = Timeline::default();
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    while let Some(chunk) = stream.next().await {
        if timeline.first_byte == 0 {
            timeline.first_byte = started.elapsed().as_micros();
        }
        buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let Some(data) = block.lines().find_map(|line| line.strip_prefix("data: ")) else {
                continue;
            };
            let event: Value = serde_json::from_str(data).unwrap();
            let at = started.elapsed().as_micros();
            match (event["type"].as_str().unwrap(), event["status"].as_str()) {
                ("meta", _) => timeline.meta = at,
                ("mcp_tool", Some("started")) => timeline.tool_started = Some(at),
                ("mcp_tool", Some(_)) => {
                    assert_eq!(event["status"], "completed", "{event}");
                    timeline.tool_completed = Some(at);
                }
                ("error", _) => panic!("the turn failed: {event}"),
                ("done", _) => {
                    timeline.done = at;
                    return timeline;
                }
                _ => {}
            }
        }
    }
    panic!("the stream ended without done");
}

fn percentiles(mut values: Vec<u128>) -> String {
    values.sort_unstable();
    let at = |fraction: f64| {
        values[((values.len() - 1) as f64 * fraction).round() as usize] as f64 / 1000.0
    };
    format!(
        "p50 {:>7.2} ms  p90 {:>7.2} ms  p99 {:>7.2} ms",
        at(0.5),
        at(0.9),
        at(0.99)
    )
}

async fn measure_turns(
    label: &str,
    provider: Arc<dyn LlmProvider>,
    message: &str,
    turns: usize,
    with_tool: bool,
) {
    let running = start(provider).await;
    for _ in 0..10 {
        one_turn(&running, message).await; // warm-up: sessions, caches, pools
    }
    let mut timelines = Vec::with_capacity(turns);
    for _ in 0..turns {
        timelines.push(one_turn(&running, message).await);
    }
    println!("\n{label} ({turns} turns, sequential)");
    println!(
        "  first SSE byte             {}",
        percentiles(timelines.iter().map(|t| t.first_byte).collect())
    );
    println!(
        "  meta event                 {}",
        percentiles(timelines.iter().map(|t| t.meta).collect())
    );
    if with_tool {
        println!(
            "  detection (→ started)      {}",
            percentiles(timelines.iter().map(|t| t.tool_started.unwrap()).collect())
        );
        println!(
            "  tool invocation            {}",
            percentiles(
                timelines
                    .iter()
                    .map(|t| t.tool_completed.unwrap() - t.tool_started.unwrap())
                    .collect()
            )
        );
    }
    println!(
        "  total (→ done)             {}",
        percentiles(timelines.iter().map(|t| t.done).collect())
    );
    running.shutdown.cancel();
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmRSS:"))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|value| value.parse().ok())
        })
        .unwrap_or(0)
}

/// Child mode: open `count` answer streams, report when every `meta` arrived, then hold them
/// until stdin closes.
async fn hold_streams(base: String, token: String, count: usize) {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        let response = client
            .post(format!("{base}/chat/stream"))
            .bearer_auth(&token)
            .json(&json!({"message": "wait"}))
            .send()
            .await
            .unwrap();
        let mut stream = response.bytes_stream();
        let first = stream.next().await.unwrap().unwrap();
        assert!(String::from_utf8_lossy(&first).contains("\"meta\""));
        held.push(stream);
    }
    println!("HELD {count}");
    let mut line = String::new();
    let _ = tokio::task::spawn_blocking(move || std::io::stdin().read_line(&mut line)).await;
    drop(held);
}

async fn measure_open_streams(count: usize) {
    use std::io::{BufRead, BufReader};
    let running = start(Arc::new(InstantModel {
        script: Script::Silent,
        calls: AtomicUsize::new(0),
    }))
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = rss_kib();
    let started = Instant::now();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--hold-streams",
            &running.base,
            &running.token,
            &count.to_string(),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    assert_eq!(line.trim(), format!("HELD {count}"));
    let opened_in = started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = rss_kib();
    println!(
        "\nSSE streams held open at once: {count} (each an answer in flight, opened in {:.1} s)",
        opened_in.as_secs_f64()
    );
    println!(
        "  server RSS {:.1} MiB before, {:.1} MiB with the streams open: {:.1} KiB per open stream",
        before as f64 / 1024.0,
        during as f64 / 1024.0,
        during.saturating_sub(before) as f64 / count as f64
    );
    drop(child.stdin.take());
    let _ = child.wait();
    running.shutdown.cancel();
}

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if arguments.get(1).map(String::as_str) == Some("--hold-streams") {
        runtime.block_on(hold_streams(
            arguments[2].clone(),
            arguments[3].clone(),
            arguments[4].parse().unwrap(),
        ));
        return;
    }
    let value_of = |flag: &str, default: usize| {
        arguments
            .iter()
            .position(|argument| argument == flag)
            .and_then(|index| arguments.get(index + 1))
            .and_then(|value| value.parse().ok())
            .unwrap_or(default)
    };
    let turns = value_of("--turns", 200);
    let streams = value_of("--streams", 1000);
    runtime.block_on(async {
        println!("chat figures — loopback HTTP, SQLite (WAL, synchronous=FULL), kg endpoint over Streamable HTTP");
        if arguments.iter().any(|argument| argument == "--only-streams") {
            measure_open_streams(streams).await;
            return;
        }
        let instant = |script| -> Arc<dyn LlmProvider> { Arc::new(InstantModel { script, calls: AtomicUsize::new(0) }) };
        measure_turns("text-only turn, instant model", instant(Script::Text), "hello", turns, false).await;
        measure_turns("one-tool turn (kg schema_version), instant model = overhead without the LLM", instant(Script::OneTool), "version?", turns, true).await;
        measure_turns(
            "one-tool turn, offline planner as the model",
            Arc::new(OfflineProvider::default()),
            "What's the schema version?",
            turns,
            true,
        )
        .await;
        measure_open_streams(streams).await;
    });
}
