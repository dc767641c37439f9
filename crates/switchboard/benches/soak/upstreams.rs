//! The soak's upstream MCP servers: one in-process listener plays all of them over Streamable
//! HTTP (server `i` at `/u/{i}/mcp`, plain JSON answers, no session). Most answer `work` at
//! once; the faulty ones (the last tenth) take turns, call by call, at being slow (the answer
//! after [`SLOW`]), crashing (the connection closed with no answer, as a killed process's
//! would be) and answering garbage (a 200 whose body is not JSON-RPC).

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use switchboard_test_support::raw_http::read_request;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// How long a slow server takes to answer a call.
pub const SLOW: Duration = Duration::from_secs(2);

/// What the faulty servers did, for the figures.
#[derive(Debug, Default)]
pub struct Faults {
    pub slow: AtomicUsize,
    pub crashed: AtomicUsize,
    pub garbage: AtomicUsize,
    pub answered: AtomicUsize,
}

async fn respond(reader: &mut BufReader<TcpStream>, status: &str, body: &[u8]) -> bool {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let writer = reader.get_mut();
    writer.write_all(head.as_bytes()).await.is_ok() && writer.write_all(body).await.is_ok()
}

fn answer(message: &Value) -> Option<Value> {
    let id = message.get("id")?.clone();
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "soak", "version": "1"},
        }),
        Some("tools/list") => json!({"tools": [{
            "name": "work",
            "description": "Does a little work.",
            "inputSchema": {"type": "object"},
        }]}),
        Some("tools/call") => json!({"content": [{"type": "text", "text": "worked"}]}),
        _ => json!({}),
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// Serves one connection until it closes (or a crash closes it).
async fn serve(stream: TcpStream, faulty_from: usize, faults: Arc<Faults>) {
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader).await {
        if request.method != "POST" {
            if !respond(&mut reader, "405 Method Not Allowed", b"").await {
                return;
            }
            continue;
        }
        let server: usize = request
            .path
            .split('/')
            .nth(2)
            .and_then(|index| index.parse().ok())
            .unwrap_or(0);
        let message: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        if message["method"] == "tools/call" && server >= faulty_from {
            match faults.answered.fetch_add(1, Ordering::Relaxed) % 3 {
                0 => {
                    faults.slow.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(SLOW).await;
                }
                1 => {
                    faults.crashed.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                _ => {
                    faults.garbage.fetch_add(1, Ordering::Relaxed);
                    if !respond(&mut reader, "200 OK", b"\x00garbage{{{ not json").await {
                        return;
                    }
                    continue;
                }
            }
        }
        let answered = match answer(&message) {
            Some(answer) => respond(&mut reader, "200 OK", answer.to_string().as_bytes()).await,
            None => respond(&mut reader, "202 Accepted", b"").await,
        };
        if !answered {
            return;
        }
    }
}

/// Starts the listener for `count` servers of which the last tenth (at least one) are faulty;
/// returns their base URL (`{base}/u/{i}/mcp`) and the fault counters.
pub async fn start(count: usize) -> (String, Arc<Faults>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let faulty_from = count - (count / 10).max(1);
    let faults = Arc::new(Faults::default());
    let counters = faults.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, faulty_from, counters.clone()));
        }
    });
    (base, faults)
}
