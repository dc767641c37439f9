//! Memory bombs from an upstream (issue 18, target 7): a 1 GiB SSE event and a 1 GiB JSON body
//! over Streamable HTTP, a 1 GiB event over legacy HTTP+SSE, and a gzip body that would inflate
//! to 1 GiB. The stdio case (a line that never ends) is in `faults.rs`.
//!
//! The bomb server is written here on a raw tokio socket (a framework would buffer or refuse
//! what we want to send) and generates its bytes lazily, 64 KiB at a time, so the test never
//! holds the bomb. The client hangs up once it refuses, so only about a cap's worth of bytes is
//! ever sent. What is measured: the growth of this process's peak resident set (`VmHWM`)
//! across the bomb call, which must stay within 2 × the cap plus a fixed slack; the call must
//! fail with a size or protocol error, and the next call on the same server must succeed.

use crate::faults::tool;
use crate::support::{context, init_tracing, quick_config, remote_server};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use switchboard_core::TransportKind;
use switchboard_mcp_client::{McpClient, McpClientConfig, UpstreamError};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Mutex, mpsc};

const CAP: usize = 4 * 1024 * 1024;
const BOMB: u64 = 1024 * 1024 * 1024;
const CHUNK: usize = 64 * 1024;
/// The gzip bomb's inflated size: 64 × the cap (compressing a full GiB would cost the test
/// seconds of CPU for bytes the client never reads).
const GZIP_INFLATED: u64 = 256 * 1024 * 1024;
/// Allocator arenas, socket buffers and the parsing of the refusal: a fixed allowance.
const SLACK: u64 = 4 * 1024 * 1024;
/// rmcp reads a Streamable HTTP `application/json` answer whole up to this fixed ceiling
/// before it refuses it, whatever our cap (its `MAX_JSON_RESPONSE_SIZE`, not configurable):
/// below a 8 MiB cap the JSON-body bomb is bounded by this rather than by 2 × the cap.
const RMCP_JSON_CEILING: u64 = 16 * 1024 * 1024;

#[derive(Clone, Copy, Debug)]
enum Bomb {
    SseEvent,
    JsonBody,
    GzipBody,
}

/// One parsed request: method line, headers we care about, body.
struct Request {
    path: String,
    method: String,
    body: Vec<u8>,
}

async fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).await.ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.ok()?;
    Some(Request { path, method, body })
}

async fn respond(stream: &mut BufReader<TcpStream>, status: &str, content_type: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let writer = stream.get_mut();
    let _ = writer.write_all(head.as_bytes()).await;
    let _ = writer.write_all(body).await;
}

/// The JSON-RPC answer to anything but the bomb, or `None` for a notification.
fn ordinary_answer(message: &Value) -> Option<Value> {
    let id = message.get("id")?.clone();
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bomb", "version": "1"},
        }),
        Some("tools/list") => json!({"tools": [
            {"name": "work", "inputSchema": {"type": "object"}},
            {"name": "big", "inputSchema": {"type": "object"}},
        ]}),
        Some("tools/call") => json!({"content": [{"type": "text", "text": "worked"}]}),
        _ => json!({}),
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn is_bomb_call(message: &Value) -> bool {
    message["method"] == "tools/call" && message["params"]["name"] == "big"
}

/// The opening of an answer whose text never ends within the bomb.
fn bomb_prefix(id: &Value) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#)
}

/// Writes `prefix` then `BOMB` bytes of filler lazily; returns how many bytes went out.
async fn stream_filler(writer: &mut TcpStream, prefix: &[u8], sent: &AtomicU64) {
    if writer.write_all(prefix).await.is_err() {
        return;
    }
    let chunk = vec![b'x'; CHUNK];
    let mut written = 0u64;
    while written < BOMB {
        if writer.write_all(&chunk).await.is_err() {
            return;
        }
        written += CHUNK as u64;
        sent.fetch_add(CHUNK as u64, Ordering::Relaxed);
    }
}

/// Gzip of the bomb answer, compressed lazily as it is written (it would inflate to 256 MiB).
async fn stream_gzip(writer: &mut TcpStream, prefix: &[u8], sent: &AtomicU64) {
    use flate2::{Compression, write::GzEncoder};
    use std::io::Write;
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(prefix).unwrap();
    let chunk = vec![b'x'; 1024 * 1024];
    let mut inflated = 0u64;
    while inflated < GZIP_INFLATED {
        encoder.write_all(&chunk).unwrap();
        inflated += chunk.len() as u64;
        let out = std::mem::take(encoder.get_mut());
        sent.fetch_add(out.len() as u64, Ordering::Relaxed);
        if writer.write_all(&out).await.is_err() {
            return;
        }
    }
    let _ = writer.write_all(&encoder.finish().unwrap()).await;
}

async fn serve_streamable(stream: TcpStream, bomb: Bomb, sent: Arc<AtomicU64>) {
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader).await {
        if request.method != "POST" {
            respond(&mut reader, "405 Method Not Allowed", "text/plain", b"").await;
            continue;
        }
        let message: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        if is_bomb_call(&message) {
            let prefix = bomb_prefix(&message["id"]);
            let (content_type, extra) = match bomb {
                Bomb::SseEvent => ("text/event-stream", ""),
                Bomb::JsonBody => ("application/json", ""),
                Bomb::GzipBody => ("application/json", "content-encoding: gzip\r\n"),
            };
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\n{extra}connection: close\r\n\r\n"
            );
            let writer = reader.get_mut();
            let _ = writer.write_all(head.as_bytes()).await;
            match bomb {
                Bomb::SseEvent => {
                    let prefix = format!("event: message\ndata: {prefix}");
                    stream_filler(writer, prefix.as_bytes(), &sent).await;
                }
                Bomb::JsonBody => stream_filler(writer, prefix.as_bytes(), &sent).await,
                Bomb::GzipBody => stream_gzip(writer, prefix.as_bytes(), &sent).await,
            }
            return;
        }
        match ordinary_answer(&message) {
            Some(answer) => {
                let body = serde_json::to_vec(&answer).unwrap();
                respond(&mut reader, "200 OK", "application/json", &body).await;
            }
            None => respond(&mut reader, "202 Accepted", "text/plain", b"").await,
        }
    }
}

/// A Streamable HTTP upstream whose `big` tool answers with `bomb`; returns its URL and the
/// count of bomb bytes it managed to send.
async fn streamable_bomb_server(bomb: Bomb) -> (String, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let sent = Arc::new(AtomicU64::new(0));
    let counter = sent.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve_streamable(stream, bomb, counter.clone()));
        }
    });
    (url, sent)
}

/// The legacy HTTP+SSE upstream: one event stream per GET, answers to POSTs sent on it, and
/// the `big` call answered with one event of `BOMB` bytes.
async fn legacy_bomb_server() -> (String, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/sse", listener.local_addr().unwrap());
    let sent = Arc::new(AtomicU64::new(0));
    let counter = sent.clone();
    let streams: Arc<Mutex<Vec<mpsc::UnboundedSender<Value>>>> = Arc::default();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve_legacy(stream, streams.clone(), counter.clone()));
        }
    });
    (url, sent)
}

async fn serve_legacy(
    stream: TcpStream,
    streams: Arc<Mutex<Vec<mpsc::UnboundedSender<Value>>>>,
    sent: Arc<AtomicU64>,
) {
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader).await {
        if request.method == "GET" && request.path.starts_with("/sse") {
            let (sender, receiver) = mpsc::unbounded_channel();
            streams.lock().await.push(sender);
            legacy_event_stream(reader.into_inner(), receiver, &sent).await;
            return;
        }
        let message: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        respond(&mut reader, "202 Accepted", "text/plain", b"").await;
        if let Some(sender) = streams.lock().await.last() {
            let _ = sender.send(message);
        }
    }
}

async fn legacy_event_stream(
    mut writer: TcpStream,
    mut messages: mpsc::UnboundedReceiver<Value>,
    sent: &AtomicU64,
) {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n\
                event: endpoint\ndata: /messages\n\n";
    if writer.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    while let Some(message) = messages.recv().await {
        if is_bomb_call(&message) {
            let prefix = format!("event: message\ndata: {}", bomb_prefix(&message["id"]));
            stream_filler(&mut writer, prefix.as_bytes(), sent).await;
            return;
        }
        if let Some(answer) = ordinary_answer(&message) {
            let event = format!("event: message\ndata: {answer}\n\n");
            if writer.write_all(event.as_bytes()).await.is_err() {
                return;
            }
        }
    }
}

/// `VmHWM` (peak resident set) of this process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kilobytes: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse().ok())
        .unwrap();
    kilobytes * 1024
}

/// Calls `work` (warming the session), then `big`, and checks refusal, memory and recovery.
async fn survives_bomb(transport: TransportKind, url: &str, sent: &AtomicU64, label: &str) {
    survives_bomb_at(CAP, transport, url, sent, label).await;
}

async fn survives_bomb_at(
    cap: usize,
    transport: TransportKind,
    url: &str,
    sent: &AtomicU64,
    label: &str,
) {
    init_tracing();
    let config = McpClientConfig {
        max_tool_response_bytes: cap,
        tool_call_timeout_secs: 30,
        ..quick_config()
    };
    let client = McpClient::new(config).unwrap();
    let server = remote_server(label, transport, url);
    let warm = client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap();
    assert_eq!(warm.text_for_model(), "worked");
    let before = peak_rss();
    let error = client
        .call_tool(&server, &tool("big"), json!({}), &context("erin"))
        .await
        .unwrap_err();
    let grown = peak_rss().saturating_sub(before);
    let sent = sent.load(Ordering::Relaxed);
    eprintln!(
        "{label}: error {error}; sent {} KiB; peak RSS grew {} KiB (cap {} KiB)",
        sent / 1024,
        grown / 1024,
        cap / 1024
    );
    let allowed = if label.starts_with("json-body") {
        (2 * cap as u64).max(RMCP_JSON_CEILING) + SLACK
    } else {
        2 * cap as u64 + SLACK
    };
    assert!(
        matches!(
            error,
            UpstreamError::ResponseTooLarge { .. } | UpstreamError::ConnectionLost(_)
        ),
        "{label}: {error:?}"
    );
    assert!(
        grown <= allowed,
        "{label}: peak RSS grew by {} KiB for a {} KiB cap",
        grown / 1024,
        cap / 1024
    );
    assert!(sent < BOMB / 4, "{label}: the client read {sent} bytes");
    let after = client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap_or_else(|error| panic!("{label}: the next call failed: {error:?}"));
    assert_eq!(after.text_for_model(), "worked");
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_sse_event_over_streamable_http_is_refused_at_the_cap() {
    let (url, sent) = streamable_bomb_server(Bomb::SseEvent).await;
    survives_bomb(TransportKind::StreamableHttp, &url, &sent, "sse-event").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_json_body_over_streamable_http_is_refused_at_the_cap() {
    let (url, sent) = streamable_bomb_server(Bomb::JsonBody).await;
    survives_bomb(TransportKind::StreamableHttp, &url, &sent, "json-body").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_body_inflating_to_a_gigabyte_is_never_inflated() {
    let (url, sent) = streamable_bomb_server(Bomb::GzipBody).await;
    survives_bomb(TransportKind::StreamableHttp, &url, &sent, "gzip-body").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_event_over_legacy_sse_is_refused_at_the_cap() {
    let (url, sent) = legacy_bomb_server().await;
    survives_bomb(TransportKind::Sse, &url, &sent, "legacy-sse").await;
}

/// The same bombs at the default cap (10 MiB), where the JSON-body ceiling of rmcp is within
/// 2 × the cap: `cargo nextest run -p switchboard-mcp-client --run-ignored only -E 'test(/bombs::/)'`.
mod at_the_default_cap {
    use super::*;

    fn default_cap() -> usize {
        McpClientConfig::default().max_tool_response_bytes
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "bench: the default cap, a few seconds"]
    async fn sse_event() {
        let (url, sent) = streamable_bomb_server(Bomb::SseEvent).await;
        let kind = TransportKind::StreamableHttp;
        survives_bomb_at(default_cap(), kind, &url, &sent, "sse-event-default").await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "bench: the default cap, a few seconds"]
    async fn json_body() {
        let (url, sent) = streamable_bomb_server(Bomb::JsonBody).await;
        let kind = TransportKind::StreamableHttp;
        survives_bomb_at(default_cap(), kind, &url, &sent, "json-body-default").await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "bench: the default cap, a few seconds"]
    async fn legacy_sse() {
        let (url, sent) = legacy_bomb_server().await;
        let kind = TransportKind::Sse;
        survives_bomb_at(default_cap(), kind, &url, &sent, "legacy-sse-default").await;
    }
}
