//! Memory bombs beside other conversations (issue 18, target 7: "other conversations' p99
//! within 20%"), a bench binary that prints figures.
//!
//! The real server and chat engine (SQLite, `synchronous=FULL`) with an instant in-process
//! model. Four bomb upstreams run in a child process (a hostile server lives elsewhere; only
//! Switchboard's own memory is measured): a 1 GiB SSE event and a 1 GiB JSON body over
//! Streamable HTTP, a 1 GiB event over legacy HTTP+SSE, and a 1 GiB WebSocket frame.
//!
//! 1. **Quiet:** `--clients` conversations (default 4) ask one-tool questions
//!    (`kg__schema_version` on our own `/mcp`) back to back for `--secs` seconds (default 20).
//! 2. **Bombed:** the same, while one more conversation asks for the bombs in turn, one after
//!    another, for the whole phase.
//!
//! It prints each phase's answer latency (p50, p90, p99, from the question to `done`), the
//! bombed p99 against the quiet one, how each bomb ended (the call must fail with
//! `response_too_large` and the answer still end with `done`), the bytes the bomb servers sent,
//! and, for each bomb, the largest growth of the process's peak resident set (`VmHWM`, reset
//! before each bomb) over one bomb's answer against the cap (the bound is 2 × the cap;
//! the other conversations' own allocations during that answer are in the figure too).
//!
//! Run: `cargo bench -p switchboard --bench bomb_figures [-- --secs 20 --clients 4]`.

// The chat figures' stand-in model; this bench uses one of its scripts.
#[allow(dead_code)]
#[path = "../chat_figures/model.rs"]
mod model;
#[path = "../support/mod.rs"]
mod support;

use futures::StreamExt;
use model::{InstantModel, Script};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};
use support::sse::SseEvents;
use support::{Gate, Stack, start_with};
use switchboard_core::TransportKind;
use switchboard_mcp_client::McpClientConfig;
use switchboard_test_support::figures::{flag_value, percentiles};
use switchboard_test_support::upstream_bombs::{
    Bomb, WsBomb, legacy_bomb_server, streamable_bomb_server, websocket_bomb_server,
};
use tokio_util::sync::CancellationToken;

/// The bombs, as registered: server name and transport; the child prints their URLs in order.
const BOMBS: [(&str, TransportKind); 4] = [
    ("sse_event", TransportKind::StreamableHttp),
    ("json_body", TransportKind::StreamableHttp),
    ("legacy_sse", TransportKind::Sse),
    ("ws_frame", TransportKind::Websocket),
];

/// `VmHWM` or `VmRSS` of this process, in KiB.
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse().ok())
        .unwrap()
}

/// The child: serves the four bombs and prints `BOMBS <url>…` until its stdin closes.
async fn serve_bombs() {
    let servers = [
        streamable_bomb_server(Bomb::SseEvent).await,
        streamable_bomb_server(Bomb::JsonBody).await,
        legacy_bomb_server().await,
        websocket_bomb_server(WsBomb::GiantFrame).await,
    ];
    let urls: Vec<&str> = servers.iter().map(|server| server.url.as_str()).collect();
    println!("BOMBS {}", urls.join(" "));
    tokio::task::spawn_blocking(|| std::io::stdin().read_to_end(&mut Vec::new()))
        .await
        .unwrap()
        .unwrap();
    let sent: u64 = servers
        .iter()
        .map(|server| server.sent.load(std::sync::atomic::Ordering::Relaxed))
        .sum();
    println!("SENT {sent}");
}

/// How one answer went: its latency, whether it ended with `done`, and its calls' final
/// states (an error's code in place of `error`).
struct Answer {
    took: Duration,
    done: bool,
    calls: Vec<String>,
}

async fn ask(stack: &Stack, message: &str) -> Answer {
    let started = Instant::now();
    let response = stack
        .client
        .post(format!("{}/chat/stream", stack.base))
        .bearer_auth(&stack.token)
        .json(&json!({ "message": message }))
        .send()
        .await
        .unwrap();
    let mut answer = Answer {
        took: Duration::ZERO,
        done: false,
        calls: Vec::new(),
    };
    let (mut stream, mut events) = (response.bytes_stream(), SseEvents::default());
    while let Some(Ok(chunk)) = stream.next().await {
        for event in events.push(&chunk) {
            match (event["type"].as_str(), event["status"].as_str()) {
                (Some("mcp_tool"), Some("error")) => answer
                    .calls
                    .push(event["error_code"].as_str().unwrap_or("error").to_owned()),
                (Some("mcp_tool"), Some(status)) if status != "started" => {
                    answer.calls.push(status.to_owned());
                }
                (Some("done"), _) => answer.done = true,
                _ => {}
            }
        }
    }
    answer.took = started.elapsed();
    answer
}

/// `clients` conversations asking one-tool questions back to back until `until`; every
/// answer's latency in microseconds, and how many did not end well.
async fn conversations(stack: &Arc<Stack>, clients: usize, until: Instant) -> (Vec<u128>, usize) {
    let tasks = (0..clients).map(|_| {
        let stack = stack.clone();
        tokio::spawn(async move {
            let (mut latencies, mut bad) = (Vec::new(), 0);
            while Instant::now() < until {
                let answer = ask(&stack, "version?").await;
                if answer.done && answer.calls == ["completed"] {
                    latencies.push(answer.took.as_micros());
                } else {
                    bad += 1;
                }
            }
            (latencies, bad)
        })
    });
    let mut all = (Vec::new(), 0);
    for result in futures::future::join_all(tasks).await {
        let (latencies, bad) = result.unwrap();
        all.0.extend(latencies);
        all.1 += bad;
    }
    all
}

/// Resets this process's peak resident set (`VmHWM`) to its current one, so the next reading
/// of `VmHWM` is the peak since now.
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
}

/// What the bombs did: how each bomb's calls ended (by bomb and state), how many answers did
/// not end with `done`, and each bomb's largest peak-memory growth over its call, in KiB.
#[derive(Default)]
struct BombTally {
    endings: BTreeMap<String, usize>,
    not_done: usize,
    peak_growth_kib: BTreeMap<&'static str, u64>,
}

/// One conversation asking for the bombs in turn until `stop`.
async fn bomber(stack: Arc<Stack>, stop: CancellationToken) -> BombTally {
    let mut tally = BombTally::default();
    for (name, _) in BOMBS.iter().cycle() {
        if stop.is_cancelled() {
            break;
        }
        reset_peak();
        let before = status_kib("VmRSS:");
        let answer = ask(&stack, &format!("call {name}__big")).await;
        let growth = status_kib("VmHWM:").saturating_sub(before);
        let largest = tally.peak_growth_kib.entry(name).or_default();
        *largest = (*largest).max(growth);
        tally.not_done += usize::from(!answer.done);
        for state in answer.calls {
            *tally.endings.entry(format!("{name}: {state}")).or_default() += 1;
        }
    }
    tally
}

fn print_phase(label: &str, (latencies, bad): &(Vec<u128>, usize)) {
    println!(
        "  {label}: {} answers ({bad} not completed); {}",
        latencies.len(),
        percentiles(latencies.clone(), &[0.5, 0.9, 0.99])
    );
}

fn p99(latencies: &[u128]) -> f64 {
    let mut sorted = latencies.to_vec();
    sorted.sort_unstable();
    sorted[(sorted.len() - 1) * 99 / 100] as f64
}

/// Starts the bomb child; its URLs, and the child to end (close stdin) at the end.
fn start_bomb_child() -> (
    Vec<String>,
    std::process::Child,
    BufReader<std::process::ChildStdout>,
) {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("--serve-bombs")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let urls: Vec<String> = line.split_whitespace().skip(1).map(String::from).collect();
    assert_eq!(urls.len(), BOMBS.len(), "the bomb child said {line:?}");
    (urls, child, stdout)
}

async fn register_bombs(stack: &Stack, urls: &[String]) {
    for ((name, transport), url) in BOMBS.iter().zip(urls) {
        stack.register_remote(name, *transport, url).await;
    }
}

async fn measure(clients: usize, phase: Duration) {
    let (urls, mut child, mut child_out) = start_bomb_child();
    let model = Arc::new(InstantModel {
        script: Script::NamedTool,
        calls: AtomicUsize::new(0),
    });
    let mut mcp = McpClientConfig::default();
    mcp.url_policy.allow_loopback = true;
    let cap_kib = mcp.max_tool_response_bytes as u64 / 1024;
    let stack = Arc::new(start_with(Some(model), Gate::AllowEveryCall, mcp).await);
    register_bombs(&stack, &urls).await;
    // Warm-up: sessions to every upstream, pools, caches.
    conversations(&stack, clients, Instant::now() + Duration::from_secs(2)).await;
    for (name, _) in BOMBS {
        ask(&stack, &format!("call {name}__work")).await;
    }

    let quiet = conversations(&stack, clients, Instant::now() + phase).await;
    let rss_before = status_kib("VmRSS:");
    let stop = CancellationToken::new();
    let bombs = tokio::spawn(bomber(stack.clone(), stop.clone()));
    let bombed = conversations(&stack, clients, Instant::now() + phase).await;
    stop.cancel();
    let tally = bombs.await.unwrap();
    drop(child.stdin.take());
    let mut sent = String::new();
    child_out.read_line(&mut sent).unwrap();
    let _ = child.wait();
    stack.shutdown.cancel();

    println!(
        "\nmemory bombs beside {clients} conversations ({} s per phase, cap {cap_kib} KiB)",
        phase.as_secs()
    );
    print_phase("quiet ", &quiet);
    print_phase("bombed", &bombed);
    println!(
        "  bombed p99 / quiet p99: {:.2}",
        p99(&bombed.0) / p99(&quiet.0)
    );
    println!(
        "  bomb calls, by bomb and ending: {:?}; answers without done: {}",
        tally.endings, tally.not_done
    );
    let sent_mib = sent
        .split_whitespace()
        .nth(1)
        .and_then(|bytes| bytes.parse::<u64>().ok())
        .unwrap_or(0)
        / (1024 * 1024);
    println!(
        "  bomb bytes sent: {sent_mib} MiB; server RSS before the bombs {} MiB",
        rss_before / 1024
    );
    for (name, growth) in &tally.peak_growth_kib {
        println!(
            "  {name}: largest peak-RSS growth over one bomb's answer (the other conversations' memory included) {growth} KiB, {:.2}× the cap",
            *growth as f64 / cap_kib as f64
        );
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if std::env::args().any(|argument| argument == "--serve-bombs") {
        return runtime.block_on(serve_bombs());
    }
    let clients = flag_value("--clients", 4);
    let phase = Duration::from_secs(flag_value("--secs", 20) as u64);
    runtime.block_on(measure(clients, phase));
}
