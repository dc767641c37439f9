//! Upstream MCP servers (Streamable HTTP, legacy HTTP+SSE, WebSocket) that send memory bombs
//! (issue 18, target 7), on a raw tokio socket (a
//! framework would buffer or refuse what they send). The bombs are generated lazily, 64 KiB at
//! a time, so a test never holds one; the client hanging up stops the server, and `sent`
//! counts the bomb bytes that went out.
//!
//! The `work` tool answers `worked`; the `big` tool answers with the bomb.

use crate::raw_http::RawRequest;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Mutex, mpsc};

/// The size of every bomb but the gzip one.
pub const BOMB: u64 = 1024 * 1024 * 1024;
const CHUNK: usize = 64 * 1024;
/// The gzip bomb's inflated size (compressing a full GiB would cost seconds of CPU for bytes
/// no client reads).
pub const GZIP_INFLATED: u64 = 256 * 1024 * 1024;

/// A running bomb server.
#[derive(Debug)]
pub struct BombServer {
    pub url: String,
    /// Bomb bytes written so far (compressed bytes for the gzip bomb).
    pub sent: Arc<AtomicU64>,
    /// Requests that carried an `Accept-Encoding` header.
    pub accept_encodings: Arc<AtomicU64>,
}

/// What a server counts.
#[derive(Clone, Default)]
struct Counters {
    sent: Arc<AtomicU64>,
    accept_encodings: Arc<AtomicU64>,
}

impl Counters {
    fn server(&self, url: String) -> BombServer {
        BombServer {
            url,
            sent: self.sent.clone(),
            accept_encodings: self.accept_encodings.clone(),
        }
    }
}

/// What the Streamable HTTP server answers the `big` call with.
#[derive(Clone, Copy, Debug)]
pub enum Bomb {
    /// One SSE event of 1 GiB.
    SseEvent,
    /// An `application/json` body of 1 GiB.
    JsonBody,
    /// A `Content-Encoding: gzip` JSON body inflating to 256 MiB.
    GzipBody,
}

/// The next request, counting the ones that offered compressed answers (`Accept-Encoding`).
async fn read_request(
    reader: &mut BufReader<TcpStream>,
    accept_encodings: &AtomicU64,
) -> Option<RawRequest> {
    let request = crate::raw_http::read_request(reader).await?;
    if request.header("accept-encoding").is_some() {
        accept_encodings.fetch_add(1, Ordering::Relaxed);
    }
    Some(request)
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

async fn serve_streamable(stream: TcpStream, bomb: Bomb, counters: Counters) {
    let sent = counters.sent;
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader, &counters.accept_encodings).await {
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

/// A Streamable HTTP upstream whose `big` tool answers with `bomb`.
pub async fn streamable_bomb_server(bomb: Bomb) -> BombServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let counters = Counters::default();
    let server = counters.server(url);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve_streamable(stream, bomb, counters.clone()));
        }
    });
    server
}

/// The legacy HTTP+SSE upstream: one event stream per GET, answers to POSTs sent on it, and
/// the `big` call answered with one event of `BOMB` bytes.
pub async fn legacy_bomb_server() -> BombServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/sse", listener.local_addr().unwrap());
    let counters = Counters::default();
    let server = counters.server(url);
    let streams: Arc<Mutex<Vec<mpsc::UnboundedSender<Value>>>> = Arc::default();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve_legacy(stream, streams.clone(), counters.clone()));
        }
    });
    server
}

async fn serve_legacy(
    stream: TcpStream,
    streams: Arc<Mutex<Vec<mpsc::UnboundedSender<Value>>>>,
    counters: Counters,
) {
    let sent = counters.sent;
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader, &counters.accept_encodings).await {
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

/// How the WebSocket server sends the `big` answer.
#[derive(Clone, Copy, Debug)]
pub enum WsBomb {
    /// One text frame whose header announces 1 GiB.
    GiantFrame,
    /// A text message that never ends: 64 KiB continuation frames up to 1 GiB, none final.
    EndlessMessage,
}

/// A WebSocket upstream (handshake and frames written here, so nothing buffers the bomb)
/// whose `big` tool answers with `bomb`.
pub async fn websocket_bomb_server(bomb: WsBomb) -> BombServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    let counters = Counters::default();
    let server = counters.server(url);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve_websocket(stream, bomb, counters.clone()));
        }
    });
    server
}

/// Answers the upgrade (with the `mcp` subprotocol when asked for); `false` if it failed.
async fn websocket_handshake(reader: &mut BufReader<TcpStream>) -> bool {
    let mut key = None;
    let mut subprotocol = false;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return false;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("sec-websocket-key") {
                key = Some(value.trim().to_owned());
            }
            if name.eq_ignore_ascii_case("sec-websocket-protocol") {
                subprotocol = value.split(',').any(|offered| offered.trim() == "mcp");
            }
        }
    }
    let Some(key) = key else { return false };
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
    let protocol = if subprotocol {
        "sec-websocket-protocol: mcp\r\n"
    } else {
        ""
    };
    let head = format!(
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\
         sec-websocket-accept: {accept}\r\n{protocol}\r\n"
    );
    reader.get_mut().write_all(head.as_bytes()).await.is_ok()
}

/// Reads one client frame (always masked); its opcode and unmasked payload.
async fn read_client_frame(reader: &mut BufReader<TcpStream>) -> Option<(u8, Vec<u8>)> {
    let mut head = [0u8; 2];
    reader.read_exact(&mut head).await.ok()?;
    let length = match head[1] & 0x7f {
        126 => u64::from(reader.read_u16().await.ok()?),
        127 => reader.read_u64().await.ok()?,
        short => u64::from(short),
    };
    let mut mask = [0u8; 4];
    reader.read_exact(&mut mask).await.ok()?;
    let mut payload = vec![0; usize::try_from(length).ok()?];
    reader.read_exact(&mut payload).await.ok()?;
    for (index, byte) in payload.iter_mut().enumerate() {
        *byte ^= mask[index % 4];
    }
    Some((head[0] & 0x0f, payload))
}

/// The header of a server frame (unmasked) with `opcode`, final or not, of `length` bytes.
fn frame_header(fin: bool, opcode: u8, length: u64) -> Vec<u8> {
    let mut header = vec![if fin { 0x80 } else { 0 } | opcode];
    match length {
        0..=125 => header.push(length as u8),
        126..=0xffff => {
            header.push(126);
            header.extend_from_slice(&(length as u16).to_be_bytes());
        }
        _ => {
            header.push(127);
            header.extend_from_slice(&length.to_be_bytes());
        }
    }
    header
}

async fn send_text(writer: &mut TcpStream, text: &[u8]) -> bool {
    let mut frame = frame_header(true, 1, text.len() as u64);
    frame.extend_from_slice(text);
    writer.write_all(&frame).await.is_ok()
}

async fn send_ws_bomb(writer: &mut TcpStream, bomb: WsBomb, id: &Value, sent: &AtomicU64) {
    let prefix = bomb_prefix(id);
    match bomb {
        WsBomb::GiantFrame => {
            let header = frame_header(true, 1, prefix.len() as u64 + BOMB);
            if writer.write_all(&header).await.is_ok() {
                stream_filler(writer, prefix.as_bytes(), sent).await;
            }
        }
        WsBomb::EndlessMessage => {
            let mut first = frame_header(false, 1, prefix.len() as u64);
            first.extend_from_slice(prefix.as_bytes());
            if writer.write_all(&first).await.is_err() {
                return;
            }
            let mut fragment = frame_header(false, 0, CHUNK as u64);
            fragment.extend(std::iter::repeat_n(b'x', CHUNK));
            let mut written = 0u64;
            while written < BOMB {
                if writer.write_all(&fragment).await.is_err() {
                    return;
                }
                written += CHUNK as u64;
                sent.fetch_add(CHUNK as u64, Ordering::Relaxed);
            }
        }
    }
}

async fn serve_websocket(stream: TcpStream, bomb: WsBomb, counters: Counters) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).await.unwrap_or(0) == 0
        || !websocket_handshake(&mut reader).await
    {
        return;
    }
    while let Some((opcode, payload)) = read_client_frame(&mut reader).await {
        if opcode == 8 {
            return;
        }
        if opcode != 1 {
            continue;
        }
        let message: Value = serde_json::from_slice(&payload).unwrap_or_default();
        if is_bomb_call(&message) {
            send_ws_bomb(reader.get_mut(), bomb, &message["id"], &counters.sent).await;
            return;
        }
        if let Some(answer) = ordinary_answer(&message) {
            let text = serde_json::to_vec(&answer).unwrap();
            if !send_text(reader.get_mut(), &text).await {
                return;
            }
        }
    }
}
