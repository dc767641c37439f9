//! The load generator: N concurrent clients, each on its own connection, calling one tool
//! back to back (a new call as soon as the previous answer is read completely), either in an
//! `initialize` session (2025-11-25, answers as SSE) or statelessly (2026-07-28, answers as
//! JSON). Latency is measured per call after a warm-up.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `initialize` once per client, then calls carrying `Mcp-Session-Id`.
    Session,
    /// Protocol 2026-07-28: every call self-contained, no session.
    Stateless,
}

impl Mode {
    pub fn label(self) -> &'static str {
        match self {
            Mode::Session => "session 2025-11-25",
            Mode::Stateless => "stateless 2026-07-28",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Workload {
    pub url: String,
    pub token: Option<&'static str>,
    pub mode: Mode,
    pub tool: &'static str,
    pub arguments: Value,
    pub clients: usize,
    pub warmup: Duration,
    pub duration: Duration,
}

#[derive(Debug, Default)]
pub struct Measurement {
    pub calls: u64,
    pub failures: u64,
    pub seconds: f64,
    pub latencies_us: Vec<u32>,
}

impl Measurement {
    pub fn calls_per_second(&self) -> f64 {
        self.calls as f64 / self.seconds
    }

    /// The `fraction` quantile of call latency, in milliseconds.
    pub fn latency_ms(&self, fraction: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return f64::NAN;
        }
        let index = ((self.latencies_us.len() - 1) as f64 * fraction).round() as usize;
        f64::from(self.latencies_us[index]) / 1000.0
    }
}

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"switchboard-bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

fn header(name: &'static str, value: &str) -> (HeaderName, HeaderValue) {
    (
        HeaderName::from_static(name),
        HeaderValue::from_str(value).expect("header value"),
    )
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// The JSON-RPC message in a JSON or SSE body.
fn message_of(body: &str) -> Value {
    let text = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find(|data| data.starts_with('{'))
        .unwrap_or(body);
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// Opens a session; returns the headers every later call carries.
async fn open_session(
    client: &reqwest::Client,
    workload: &Workload,
    base: &HeaderMap,
) -> HeaderMap {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "switchboard-bench", "version": "1"}}});
    let response = client
        .post(&workload.url)
        .headers(base.clone())
        .body(initialize.to_string())
        .send()
        .await
        .unwrap();
    let session = response
        .headers()
        .get("mcp-session-id")
        .cloned()
        .expect("the server opened a session");
    let answer = message_of(&response.text().await.unwrap());
    let version = answer["result"]["protocolVersion"]
        .as_str()
        .unwrap_or("2025-11-25")
        .to_owned();
    let mut headers = base.clone();
    headers.insert("mcp-session-id", session);
    headers.extend([header("mcp-protocol-version", &version)]);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    client
        .post(&workload.url)
        .headers(headers.clone())
        .body(initialized.to_string())
        .send()
        .await
        .unwrap();
    headers
}

async fn client_loop(workload: Workload, start: Instant) -> Measurement {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .build()
        .unwrap();
    let mut base = HeaderMap::new();
    base.extend([
        header("content-type", "application/json"),
        header("accept", "application/json, text/event-stream"),
    ]);
    if let Some(token) = workload.token {
        base.extend([header("authorization", &format!("Bearer {token}"))]);
    }
    let (headers, body) = match workload.mode {
        Mode::Session => {
            let headers = open_session(&client, &workload, &base).await;
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": workload.tool, "arguments": workload.arguments}});
            (headers, body.to_string())
        }
        Mode::Stateless => {
            let mut headers = base;
            headers.extend([
                header("mcp-protocol-version", "2026-07-28"),
                header("mcp-method", "tools/call"),
                header("mcp-name", workload.tool),
            ]);
            let meta: Value = serde_json::from_str(META).unwrap();
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": workload.tool, "arguments": workload.arguments, "_meta": meta}});
            (headers, body.to_string())
        }
    };
    let body = bytes::Bytes::from(body);
    let measured_from = start + workload.warmup;
    let until = measured_from + workload.duration;
    let mut measurement = Measurement::default();
    loop {
        let sent = Instant::now();
        if sent >= until {
            break;
        }
        let response = client
            .post(&workload.url)
            .headers(headers.clone())
            .body(body.clone())
            .send()
            .await;
        let ok = match response {
            Ok(response) if response.status().is_success() => match response.bytes().await {
                Ok(bytes) => {
                    contains(&bytes, b"\"result\"") && !contains(&bytes, b"\"isError\":true")
                }
                Err(_) => false,
            },
            _ => false,
        };
        if sent >= measured_from {
            if ok {
                measurement.calls += 1;
                measurement
                    .latencies_us
                    .push(sent.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
            } else {
                measurement.failures += 1;
            }
        }
    }
    measurement
}

/// Runs `workload` and returns the merged measurement.
pub async fn run(workload: &Workload) -> Measurement {
    let start = Instant::now() + Duration::from_millis(200);
    let tasks: Vec<_> = (0..workload.clients)
        .map(|_| tokio::spawn(client_loop(workload.clone(), start)))
        .collect();
    let mut total = Measurement {
        seconds: workload.duration.as_secs_f64(),
        ..Measurement::default()
    };
    for task in tasks {
        let part = task.await.expect("a client task");
        total.calls += part.calls;
        total.failures += part.failures;
        total.latencies_us.extend(part.latencies_us);
    }
    total.latencies_us.sort_unstable();
    total
}
