//! Silent upstreams (issue 18, target 8): many Streamable HTTP and legacy HTTP+SSE servers that
//! answer a tool call with event-stream headers and then send nothing. Every call must end
//! with a timeout within the call timeout plus a small slack, and once the client has shut
//! down the process must hold no more tasks (tokio's alive-task count) and no more file
//! descriptors (`/proc/self/fd`) than before: a timed-out call must not leave its stream,
//! socket or session behind.
//!
//! One in-test listener plays every server (server `i` lives under `/s/{i}` or `/l/{i}`), so
//! N servers cost N connections, not N processes. It answers `initialize` and `tools/list`
//! normally, then holds every `tools/call` answer and every GET stream silent, reading until
//! the client hangs up (so its own side of each socket closes with the client's). N is 200;
//! `SWITCHBOARD_SILENT_STREAMS=1000` runs the full figure.
//!
//! The sync variant: servers under `/q/{i}` (Streamable HTTP) hold their `initialize` answer
//! silent, and those under `/m/{i}` (legacy) never send the `endpoint` event on their stream;
//! every capability sync must fail with `InitTimeout` at the configured session-start timeout,
//! leaving nothing behind either.

use crate::faults::tool;
use crate::support::{caller, context, quick_config, remote_server};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::TransportKind;
use switchboard_mcp_client::{McpClient, McpClientConfig, UpstreamError, UpstreamServer};
use switchboard_test_support::raw_http::read_request;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

const CALL_TIMEOUT: Duration = Duration::from_secs(3);
/// Scheduling of N timers and N hang-ups on a loaded 2-core machine.
const TIMEOUT_SLACK: Duration = Duration::from_secs(2);
const FD_SLACK: usize = 8;
const TASK_SLACK: usize = 4;

/// Legacy streams by server path, so a POST's answer goes out on its server's stream.
type Streams = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>>;

/// The answer to anything but a tool call (which is never answered), or `None` for a
/// notification.
fn answer(message: &Value) -> Option<Value> {
    let id = message.get("id")?.clone();
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "silent", "version": "1"},
        }),
        Some("tools/list") => {
            json!({"tools": [{"name": "wait", "inputSchema": {"type": "object"}}]})
        }
        _ => json!({}),
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

async fn write_all(reader: &mut BufReader<TcpStream>, bytes: &[u8]) -> bool {
    reader.get_mut().write_all(bytes).await.is_ok()
}

/// Event-stream headers, then nothing until the client hangs up.
async fn hold_silent(mut reader: BufReader<TcpStream>) {
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n";
    if !write_all(&mut reader, head.as_bytes()).await {
        return;
    }
    let mut sink = [0u8; 1024];
    while matches!(reader.read(&mut sink).await, Ok(read) if read > 0) {}
}

async fn respond(reader: &mut BufReader<TcpStream>, status: &str, body: &[u8]) -> bool {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    write_all(reader, head.as_bytes()).await && write_all(reader, body).await
}

/// Whether the server answers `message` with silence: tool calls and every notification but
/// `notifications/initialized` (the client's `notifications/cancelled` after a timeout among
/// them). A session cannot start without `initialized` accepted.
fn silenced(message: &Value, path: &str) -> bool {
    message["method"] == "tools/call"
        || (path.starts_with("/q/") && message["method"] == "initialize")
        || (message.get("id").is_none() && message["method"] != "notifications/initialized")
}

/// Serves one connection; `held` counts the POST answers being held silent.
async fn serve(stream: TcpStream, streams: Streams, held: Arc<AtomicUsize>) {
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader).await {
        let message: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let server = request
            .path
            .rsplit_once('/')
            .map(|(base, _)| base.to_owned());
        let server = server.unwrap_or_default();
        let legacy = request.path.starts_with("/l/");
        if request.method == "GET" && legacy {
            let (sender, receiver) = mpsc::unbounded_channel();
            streams.lock().unwrap().insert(server.clone(), sender);
            return legacy_stream(reader, &server, receiver).await;
        }
        if request.method == "GET" {
            return hold_silent(reader).await;
        }
        if silenced(&message, &request.path) {
            held.fetch_add(1, Ordering::Relaxed);
            hold_silent(reader).await;
            held.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        let answered = if legacy {
            let sender = streams.lock().unwrap().get(&server).cloned();
            if let Some(sender) = sender {
                let _ = sender.send(message);
            }
            respond(&mut reader, "202 Accepted", b"").await
        } else {
            let answer = answer(&message).unwrap_or_default();
            respond(&mut reader, "200 OK", answer.to_string().as_bytes()).await
        };
        if !answered {
            return;
        }
    }
}

/// A legacy event stream: the endpoint event, answers to everything but tool calls, and
/// silence for those; ends when the client hangs up.
async fn legacy_stream(
    mut reader: BufReader<TcpStream>,
    server: &str,
    mut messages: mpsc::UnboundedReceiver<Value>,
) {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n\
         event: endpoint\ndata: {server}/messages\n\n"
    );
    if !write_all(&mut reader, head.as_bytes()).await {
        return;
    }
    let mut sink = [0u8; 1024];
    loop {
        tokio::select! {
            read = reader.read(&mut sink) => {
                if !matches!(read, Ok(read) if read > 0) {
                    return;
                }
            }
            Some(message) = messages.recv() => {
                if let Some(answer) = answer(&message) {
                    let event = format!("event: message\ndata: {answer}\n\n");
                    if !write_all(&mut reader, event.as_bytes()).await {
                        return;
                    }
                }
            }
        }
    }
}

/// Starts the listener; aborting the returned task stops accepting (connections end with
/// their clients).
async fn silent_servers() -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let streams = Streams::default();
    let held = Arc::new(AtomicUsize::new(0));
    let counter = held.clone();
    let accept = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, streams.clone(), counter.clone()));
        }
    });
    (base, held, accept)
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// Waits (up to 10 s) for the fd and task counts to come back within the slack of `fds` and
/// `tasks`; returns what they came to.
async fn settle(fds: usize, tasks: usize) -> (usize, usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = (open_fds(), alive_tasks());
        if (now.0 <= fds + FD_SLACK && now.1 <= tasks + TASK_SLACK) || Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn silent_server(base: &str, index: usize) -> UpstreamServer {
    let (kind, url) = if index.is_multiple_of(2) {
        (
            TransportKind::StreamableHttp,
            format!("{base}/s/{index}/mcp"),
        )
    } else {
        (TransportKind::Sse, format!("{base}/l/{index}/sse"))
    };
    remote_server(&format!("silent-{index}"), kind, &url)
}

/// Opens every server's session (and lists its tools), so the rounds time calls alone.
async fn warm_up(client: &Arc<McpClient>, base: &str, count: usize) {
    let listings = (0..count).map(|index| {
        let client = client.clone();
        let server = silent_server(base, index);
        tokio::spawn(async move { client.fetch_capabilities(&server, &caller("erin")).await })
    });
    for listing in futures::future::join_all(listings).await {
        assert_eq!(listing.unwrap().unwrap().tools.len(), 1);
    }
}

/// Calls the `wait` tool of each of the `count` servers at once; checks every call timed out
/// in time and returns how long they all took and the slowest call.
async fn call_all(client: &Arc<McpClient>, base: &str, count: usize) -> (Duration, Duration) {
    let started = Instant::now();
    let calls = (0..count).map(|index| {
        let client = client.clone();
        let server = silent_server(base, index);
        tokio::spawn(async move {
            let call_started = Instant::now();
            let outcome = client
                .call_tool(&server, &tool("wait"), json!({}), &context("erin"))
                .await;
            (index, call_started.elapsed(), outcome)
        })
    });
    let outcomes = futures::future::join_all(calls).await;
    let all_done = started.elapsed();
    let mut slowest = Duration::ZERO;
    for outcome in outcomes {
        let (index, elapsed, outcome) = outcome.unwrap();
        slowest = slowest.max(elapsed);
        assert!(
            matches!(outcome, Err(UpstreamError::Timeout(_))),
            "server {index}: {outcome:?}"
        );
        assert!(
            elapsed <= CALL_TIMEOUT + TIMEOUT_SLACK,
            "server {index} took {elapsed:?}"
        );
    }
    (all_done, slowest)
}

/// Waits (up to 10 s) for no POST answer to be held open any more; returns how many are.
async fn held_after_hang_up(held: &AtomicUsize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    while held.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    held.load(Ordering::Relaxed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_upstreams_all_time_out_and_leave_nothing_behind() {
    let count: usize = std::env::var("SWITCHBOARD_SILENT_STREAMS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(200);
    let (fds_before, tasks_before) = (open_fds(), alive_tasks());
    let (base, held, accept) = silent_servers().await;
    let client = Arc::new(
        McpClient::new(McpClientConfig {
            tool_call_timeout_secs: CALL_TIMEOUT.as_secs(),
            ..quick_config()
        })
        .unwrap(),
    );
    warm_up(&client, &base, count).await;
    // Both rounds run on the warm sessions, so any growth between the two is what a
    // timed-out call leaves behind.
    let (first_done, first_slowest) = call_all(&client, &base, count).await;
    let first_held = held_after_hang_up(&held).await;
    let (fds_first, tasks_first) = (open_fds(), alive_tasks());
    let (second_done, second_slowest) = call_all(&client, &base, count).await;
    let second_held = held_after_hang_up(&held).await;
    let (fds_second, tasks_second) = settle(fds_first, tasks_first).await;
    client.shutdown().await;
    drop(client);
    accept.abort();
    let (fds_after, tasks_after) = settle(fds_before, tasks_before).await;
    eprintln!(
        "{count} silent upstreams: all timed out in {first_done:?} then {second_done:?} \
         (slowest calls {first_slowest:?}, {second_slowest:?}; timeout {CALL_TIMEOUT:?}); \
         silent POST answers still held {first_held}, {second_held}; fds {fds_before} before, \
         {fds_first} after round 1, {fds_second} after round 2, {fds_after} after shutdown; \
         tasks {tasks_before} before, {tasks_first}, {tasks_second}, {tasks_after} after shutdown"
    );
    assert_eq!(
        first_held + second_held,
        0,
        "silent POST answers left open by the client"
    );
    assert!(
        fds_second <= fds_first + FD_SLACK,
        "round 2 left {fds_second} fds open against {fds_first} after round 1"
    );
    assert!(
        tasks_second <= tasks_first + TASK_SLACK,
        "round 2 left {tasks_second} tasks alive against {tasks_first} after round 1"
    );
    assert!(
        fds_after <= fds_before + FD_SLACK,
        "{fds_after} fds open against {fds_before} before"
    );
    assert!(
        tasks_after <= tasks_before + TASK_SLACK,
        "{tasks_after} tasks alive against {tasks_before} before"
    );
}

/// A server whose session never starts: `initialize` held silent (Streamable HTTP, even
/// indices) or an event stream without its `endpoint` event (legacy, odd).
fn never_starting_server(base: &str, index: usize) -> UpstreamServer {
    let (kind, url) = if index.is_multiple_of(2) {
        (
            TransportKind::StreamableHttp,
            format!("{base}/q/{index}/mcp"),
        )
    } else {
        (TransportKind::Sse, format!("{base}/m/{index}/sse"))
    };
    remote_server(&format!("never-{index}"), kind, &url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_upstreams_time_out_their_sync_at_the_session_start_timeout() {
    const INIT_TIMEOUT: Duration = Duration::from_secs(2);
    let count: usize = std::env::var("SWITCHBOARD_SILENT_STREAMS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(50);
    let (fds_before, tasks_before) = (open_fds(), alive_tasks());
    let (base, held, accept) = silent_servers().await;
    let client = Arc::new(
        McpClient::new(McpClientConfig {
            session_init_timeout_secs: INIT_TIMEOUT.as_secs(),
            session_init_retries: 0,
            ..quick_config()
        })
        .unwrap(),
    );
    let started = Instant::now();
    let syncs = (0..count).map(|index| {
        let client = client.clone();
        let server = never_starting_server(&base, index);
        tokio::spawn(async move {
            let sync_started = Instant::now();
            let outcome = client.fetch_capabilities(&server, &caller("erin")).await;
            (index, sync_started.elapsed(), outcome)
        })
    });
    let mut slowest = Duration::ZERO;
    for outcome in futures::future::join_all(syncs).await {
        let (index, elapsed, outcome) = outcome.unwrap();
        slowest = slowest.max(elapsed);
        assert!(
            matches!(outcome, Err(UpstreamError::InitTimeout { .. })),
            "server {index}: {outcome:?}"
        );
        assert!(
            elapsed >= INIT_TIMEOUT && elapsed <= INIT_TIMEOUT + TIMEOUT_SLACK,
            "server {index} took {elapsed:?}"
        );
    }
    let all_done = started.elapsed();
    let still_held = held_after_hang_up(&held).await;
    client.shutdown().await;
    drop(client);
    accept.abort();
    let (fds_after, tasks_after) = settle(fds_before, tasks_before).await;
    eprintln!(
        "{count} never-starting upstreams: every sync timed out in {all_done:?} (slowest \
         {slowest:?}; session-start timeout {INIT_TIMEOUT:?}); silent answers still held \
         {still_held}; fds {fds_before} before, {fds_after} after; tasks {tasks_before} before, \
         {tasks_after} after"
    );
    assert_eq!(
        still_held, 0,
        "silent initialize answers left open by the client"
    );
    assert!(
        fds_after <= fds_before + FD_SLACK,
        "{fds_after} fds open against {fds_before} before"
    );
    assert!(
        tasks_after <= tasks_before + TASK_SLACK,
        "{tasks_after} tasks alive against {tasks_before} before"
    );
}
