//! A seeded generator of malformed requests for `/mcp`, `/mcp/rpc` and the REST API, and a
//! driver that sends them and tallies the answers (issue 18, target 3). Shared by the CI test
//! (`malformed_input.rs`, a few thousand requests) and the bench (`benches/malformed_input.rs`,
//! 100,000 + 20,000), so both exercise exactly the same classes.
//!
//! Self-contained on purpose (the bench includes this file by path): it knows only a base URL,
//! a token and a reqwest client.

use futures::StreamExt;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// splitmix64: deterministic, dependency-free, good enough to pick cases.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// One request to send: what class it belongs to and its raw parts.
pub struct Probe {
    pub class: &'static str,
    pub method: reqwest::Method,
    pub path: String,
    pub headers: Vec<(&'static str, Vec<u8>)>,
    pub body: Vec<u8>,
    pub authorized: bool,
}

pub const MCP_CLASSES: [&str; 9] = [
    "bad_utf8",
    "deep_nesting",
    "huge_numbers",
    "wrong_types",
    "batch",
    "giant_string",
    "headers",
    "mutated",
    "methods",
];

pub const REST_CLASSES: [&str; 7] = [
    "bad_json",
    "wrong_types",
    "huge_strings",
    "bad_ids",
    "bad_query",
    "bad_utf8",
    "deep_nesting",
];

const VALID_MCP: [&str; 6] = [
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"f","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"schema_version","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"f","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"resources/list","params":{}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"traverse","arguments":{"start_id":"x","direction":"in"}}}"#,
];

const ODD_NUMBERS: [&str; 9] = [
    "1e400",
    "-1e400",
    "18446744073709551616",
    "-9223372036854775809",
    "1.0e-400",
    "0.0000000000000000000000000000001",
    "-0",
    "123456789012345678901234567890123456789012345678901234567890",
    "9007199254740993",
];

const ODD_VALUES: [&str; 10] = [
    "null",
    "true",
    "5",
    "\"\"",
    "[]",
    "{}",
    "[[[]]]",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "{\"$ref\":\"#\"}",
];

fn nested(depth: usize, open: &str, close: &str, closed: bool) -> String {
    let mut text = open.repeat(depth);
    if closed {
        text.push_str(&close.repeat(depth));
    }
    text
}

fn mutate(rng: &mut Rng, mut bytes: Vec<u8>) -> Vec<u8> {
    for _ in 0..=rng.below(8) {
        if bytes.is_empty() {
            break;
        }
        let at = rng.below(bytes.len());
        match rng.below(5) {
            0 => bytes[at] = rng.next() as u8,
            1 => {
                bytes.remove(at);
            }
            2 => bytes.insert(at, *rng.pick(b"{}[]\",:\\0e-.\x00\xff")),
            3 => bytes.truncate(at),
            _ => {
                let end = (at + rng.below(16)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                bytes.splice(at..at, copy);
            }
        }
    }
    bytes
}

fn bad_utf8(rng: &mut Rng, base: &str) -> Vec<u8> {
    let mut bytes = base.as_bytes().to_vec();
    let junk: &[&[u8]] = &[
        b"\xff",
        b"\xc3\x28",
        b"\xed\xa0\x80",
        b"\xf0\x28\x8c\x28",
        b"\xc0\xaf",
    ];
    for _ in 0..=rng.below(3) {
        let at = rng.below(bytes.len());
        let piece = rng.pick(junk);
        bytes.splice(at..at, piece.iter().copied());
    }
    bytes
}

fn mcp_body(rng: &mut Rng, class: &str) -> Vec<u8> {
    let base = *rng.pick(&VALID_MCP);
    match class {
        "bad_utf8" => bad_utf8(rng, base),
        "deep_nesting" => {
            let (open, close) = *rng.pick(&[("[", "]"), ("{\"a\":", "}")]);
            let inner = nested(10_000, open, close, rng.below(2) == 0).replace(":}", ":1}");
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"traverse","arguments":{inner}}}}}"#)
                .into_bytes()
        }
        "huge_numbers" => {
            let number = rng.pick(&ODD_NUMBERS);
            match rng.below(3) {
                0 => format!(r#"{{"jsonrpc":"2.0","id":{number},"method":"ping"}}"#),
                1 => base.replacen("\"id\":", &format!("\"id\":{number},\"x\":"), 1),
                _ => format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"traverse","arguments":{{"start_id":"x","depth":{number},"limit":{number}}}}}}}"#),
            }
            .into_bytes()
        }
        "wrong_types" => wrong_types(rng).into_bytes(),
        "batch" => batch(rng).into_bytes(),
        "giant_string" => {
            let size = *rng.pick(&[1_000, 60_000, 70_000, 1_000_000]);
            let giant = "x".repeat(size);
            match rng.below(3) {
                0 => format!(r#"{{"jsonrpc":"2.0","id":"{giant}","method":"ping"}}"#),
                1 => format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{giant}"}}"#),
                _ => format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"traverse","arguments":{{"start_id":"{giant}"}}}}}}"#),
            }
            .into_bytes()
        }
        "mutated" => mutate(rng, base.as_bytes().to_vec()),
        "methods" => {
            let method = rng.pick(&[
                "nope",
                "",
                "rpc.discover",
                "tools/call",
                "resources/read",
                "prompts/get",
                "completion/complete",
                "logging/setLevel",
                "notifications/initialized",
                "notifications/cancelled",
                "resources/subscribe",
                "tasks/get",
                "../../etc",
            ]);
            let params = rng.pick(&ODD_VALUES);
            match rng.below(3) {
                0 => format!(r#"{{"jsonrpc":"2.0","id":9,"method":"{method}","params":{params}}}"#),
                1 => format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params}}}"#),
                _ => format!(r#"{{"jsonrpc":"2.0","id":9,"result":{params}}}"#),
            }
            .into_bytes()
        }
        _ => base.as_bytes().to_vec(),
    }
}

fn wrong_types(rng: &mut Rng) -> String {
    let value = rng.pick(&ODD_VALUES);
    match rng.below(6) {
        0 => format!(r#"{{"jsonrpc":{value},"id":1,"method":"ping"}}"#),
        1 => format!(r#"{{"jsonrpc":"2.0","id":{value},"method":"ping"}}"#),
        2 => format!(r#"{{"jsonrpc":"2.0","id":1,"method":{value}}}"#),
        3 => format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{value}}}"#),
        4 => format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":{value},"arguments":{value}}}}}"#
        ),
        _ => value.to_string(),
    }
}

fn batch(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => "[]".to_owned(),
        1 => format!(
            "[{}]",
            vec![*rng.pick(&VALID_MCP); 1 + rng.below(50)].join(",")
        ),
        2 => format!("[{},1,\"x\",null,[]]", rng.pick(&VALID_MCP)),
        _ => format!("[[{}]]", rng.pick(&VALID_MCP)),
    }
}

fn mcp_headers(rng: &mut Rng, class: &str) -> Vec<(&'static str, Vec<u8>)> {
    let mut headers: Vec<(&'static str, Vec<u8>)> = vec![
        ("content-type", b"application/json".to_vec()),
        ("accept", b"application/json, text/event-stream".to_vec()),
        ("mcp-protocol-version", b"2026-07-28".to_vec()),
    ];
    if class != "headers" {
        return headers;
    }
    let odd: &[&[u8]] = &[
        b"",
        b"garbage",
        b"text/plain",
        b"1999-01-01",
        b"\xff\xfe",
        b"application/json; charset=latin1",
        b"*/*",
    ];
    match rng.below(6) {
        0 => headers[0].1 = rng.pick(odd).to_vec(),
        1 => headers[1].1 = rng.pick(odd).to_vec(),
        2 => headers[2].1 = rng.pick(odd).to_vec(),
        3 => {
            headers.remove(rng.below(3));
        }
        4 => headers.push(("mcp-session-id", rng.pick(odd).to_vec())),
        _ => {
            headers.push(("mcp-method", rng.pick(odd).to_vec()));
            headers.push(("mcp-name", "n".repeat(rng.below(9000)).into_bytes()));
        }
    }
    if rng.below(4) == 0 {
        headers.push((
            "mcp-session-id",
            "s".repeat(1 + rng.below(4000)).into_bytes(),
        ));
    }
    headers
}

/// A malformed request for `/mcp` or `/mcp/rpc`.
pub fn mcp_probe(rng: &mut Rng) -> Probe {
    let class = *rng.pick(&MCP_CLASSES);
    let path = rng.pick(&["/mcp", "/mcp/rpc"]).to_string();
    let method = match (class, rng.below(20)) {
        ("headers", 0) => reqwest::Method::GET,
        ("headers", 1) => reqwest::Method::DELETE,
        ("headers", 2) => reqwest::Method::PUT,
        _ => reqwest::Method::POST,
    };
    Probe {
        class,
        method,
        path,
        headers: mcp_headers(rng, class),
        body: mcp_body(rng, class),
        authorized: rng.below(10) != 0,
    }
}

const REST_ROUTES: [(&str, &str); 26] = [
    ("GET", "/api/me"),
    ("PATCH", "/api/me"),
    ("GET", "/api/tokens"),
    ("POST", "/api/tokens"),
    ("DELETE", "/api/tokens/{id}"),
    ("GET", "/api/users"),
    ("POST", "/api/users"),
    ("GET", "/api/buds"),
    ("POST", "/api/buds"),
    ("PATCH", "/api/buds/{id}"),
    ("PUT", "/api/buds/{id}/policies/{id}/{id}"),
    ("GET", "/api/audit"),
    ("GET", "/api/mcp/servers"),
    ("POST", "/api/mcp/servers"),
    ("PATCH", "/api/mcp/servers/{id}"),
    ("POST", "/api/mcp/servers/{id}/tools/{id}/call"),
    ("PUT", "/api/mcp/servers/{id}/tools/{id}/policy"),
    ("GET", "/api/kg/schema"),
    ("PUT", "/api/kg/schema"),
    ("POST", "/api/kg/import"),
    ("GET", "/api/kg/objects/{id}"),
    ("GET", "/chat/conversations"),
    ("GET", "/chat/conversations/{id}"),
    ("POST", "/chat/approvals/{id}"),
    ("POST", "/chat/stream"),
    ("POST", "/chat/elicitations/{id}"),
];

const BAD_IDS: [&str; 12] = [
    "",
    "..",
    "%2e%2e%2f",
    "%00",
    "%ff%fe",
    "-1",
    "99999999999999999999999999",
    "00000000-0000-0000-0000-000000000000",
    "%F0%9F%92%A9",
    "a%20b",
    "%5Cx",
    "null",
];

const REST_FIELDS: [&str; 12] = [
    "name",
    "scopes",
    "expires_at",
    "role",
    "display_name",
    "transport",
    "url",
    "command",
    "args",
    "schema",
    "system_prompt",
    "decision",
];

fn rest_body(rng: &mut Rng, class: &str) -> Vec<u8> {
    let field = rng.pick(&REST_FIELDS);
    let valid = format!(r#"{{"{field}":"x","name":"fuzz","scopes":["chat:use"]}}"#);
    match class {
        "bad_json" => mutate(rng, valid.into_bytes()),
        "wrong_types" => {
            let value = rng.pick(&ODD_VALUES);
            let number = rng.pick(&ODD_NUMBERS);
            match rng.below(3) {
                0 => format!(r#"{{"{field}":{value}}}"#),
                1 => format!(r#"{{"{field}":{number},"name":{value}}}"#),
                _ => value.to_string(),
            }
            .into_bytes()
        }
        "huge_strings" => {
            let size = *rng.pick(&[10_000, 60_000, 200_000]);
            format!(
                r#"{{"{field}":"{}","name":"{}"}}"#,
                "h".repeat(size),
                "n".repeat(size / 10)
            )
            .into_bytes()
        }
        "bad_utf8" => bad_utf8(rng, &valid),
        "deep_nesting" => format!(
            r#"{{"{field}":{}}}"#,
            nested(10_000, "[", "]", rng.below(2) == 0)
        )
        .into_bytes(),
        _ => valid.into_bytes(),
    }
}

fn rest_query(rng: &mut Rng) -> String {
    let key = rng.pick(&[
        "limit", "cursor", "before", "after", "offset", "q", "status", "scope",
    ]);
    let value = rng.pick(&[
        "-1",
        "0",
        "99999999999999999999",
        "1e9",
        "abc",
        "%ff",
        "%00",
        "",
        "[]",
        "2026-13-45",
    ]);
    let extra = if rng.below(3) == 0 {
        format!("&{}", "k=v&".repeat(500))
    } else {
        String::new()
    };
    format!("?{key}={value}{extra}")
}

/// A malformed request for the REST API.
pub fn rest_probe(rng: &mut Rng, server_id: &str) -> Probe {
    let class = *rng.pick(&REST_CLASSES);
    let (method, template) = *rng.pick(&REST_ROUTES);
    let mut path = String::new();
    for (index, piece) in template.split("{id}").enumerate() {
        if index > 0 {
            let id = if class == "bad_ids" {
                rng.pick(&BAD_IDS).to_string()
            } else if rng.below(2) == 0 {
                server_id.to_owned()
            } else {
                "h".repeat(1 + rng.below(3000))
            };
            path.push_str(&id);
        }
        path.push_str(piece);
    }
    if class == "bad_query" || rng.below(8) == 0 {
        path.push_str(&rest_query(rng));
    }
    let content_type: &[u8] = match rng.below(12) {
        0 => b"text/plain",
        1 => b"\xff",
        _ => b"application/json",
    };
    Probe {
        class,
        method: method.parse().unwrap(),
        path,
        headers: vec![("content-type", content_type.to_vec())],
        body: rest_body(rng, class),
        authorized: rng.below(10) != 0,
    }
}

/// `server.max_request_body_bytes` of the server under test (`support::test_config`).
pub const BODY_LIMIT: usize = 64 * 1024;

/// Pseudo status for an oversized body whose connection was closed while it was being sent.
pub const CLOSED_BEFORE_BODY: u16 = 1;

/// What the sent requests came back with.
#[derive(Default)]
pub struct Tally {
    /// Requests sent per class.
    pub sent: BTreeMap<String, usize>,
    /// Answers per HTTP status (0: the request failed at the transport level; 1: an oversized
    /// body refused by closing the connection, see [`CLOSED_BEFORE_BODY`]).
    pub statuses: BTreeMap<u16, usize>,
    /// Each 5xx or transport failure: class, method, path (cut) and the body's start.
    pub failures: Vec<String>,
    /// Requests sent a second time, by hand, after a transport error (a kept-alive connection
    /// closed under them, or an answer given before the body was read; see [`send`]).
    pub resent: usize,
}

impl Tally {
    pub fn server_errors(&self) -> usize {
        self.statuses
            .iter()
            .filter(|(status, _)| **status >= 500 || **status == 0)
            .map(|(_, count)| count)
            .sum()
    }

    fn record(&mut self, class: &str, status: u16, failure: Option<String>) {
        *self.sent.entry(class.to_owned()).or_default() += 1;
        *self.statuses.entry(status).or_default() += 1;
        if let Some(failure) = failure
            && self.failures.len() < 20
        {
            self.failures.push(failure);
        }
    }
}

fn request(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    probe: &Probe,
) -> reqwest::RequestBuilder {
    let mut request = client.request(probe.method.clone(), format!("{base}{}", probe.path));
    for (name, value) in &probe.headers {
        if let Ok(value) = reqwest::header::HeaderValue::from_bytes(value) {
            request = request.header(*name, value);
        }
    }
    if probe.authorized {
        request = request.bearer_auth(token);
    }
    request.body(probe.body.clone())
}

/// One answer: the probe's class, the status (0: no answer), whether the request had to be
/// sent again, and a description when it failed.
type Answer = (&'static str, u16, bool, Option<String>);

/// How long a request may go unanswered before it counts as a failure (a server that hangs).
pub const ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Sends `probe` and records the server's answer. A transport error is not yet a failure: a
/// server may answer before reading a body and close the connection (a legitimate refusal), and
/// the client, still writing, then sees a broken pipe or a reset instead of the answer; a
/// kept-alive connection may also have been closed under a reused request. So the probe is sent
/// once more by hand on a fresh socket ([`send_raw`]), which reads whatever the server wrote
/// even when writing the body failed. Only no answer at all (a hang until [`ANSWER_TIMEOUT`],
/// a connection closed without a word) or a 5xx counts against the server.
pub async fn send(client: &reqwest::Client, base: &str, token: &str, probe: Probe) -> Answer {
    send_within(client, base, token, probe, ANSWER_TIMEOUT).await
}

/// [`send`] with another time limit (the helper's own tests use a short one).
pub async fn send_within(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    probe: Probe,
    limit: std::time::Duration,
) -> Answer {
    let described = |detail: String| {
        let path: String = probe.path.chars().take(120).collect();
        let body = String::from_utf8_lossy(&probe.body[..probe.body.len().min(200)]).into_owned();
        format!(
            "{} {} {path}: {detail} (body {body:?})",
            probe.class, probe.method
        )
    };
    let first = tokio::time::timeout(limit, request(client, base, token, &probe).send()).await;
    let error = match first {
        Ok(Ok(response)) => {
            let status = response.status().as_u16();
            let text = response.text().await.unwrap_or_default();
            let failure = (status >= 500).then(|| described(format!("{status} {text:.300}")));
            return (probe.class, status, false, failure);
        }
        Err(_) => format!("no answer within {limit:?}"),
        Ok(Err(error)) if error.is_timeout() => format!("{error:?}"),
        Ok(Err(error)) => match send_raw(base, token, &probe, limit).await {
            Ok((status, text)) => {
                let failure = (status >= 500).then(|| described(format!("{status} {text:.300}")));
                return (probe.class, status, true, failure);
            }
            // An oversized body may be refused by closing the connection before any answer.
            Err(RawError::ClosedSilently) if probe.body.len() > BODY_LIMIT => {
                return (probe.class, CLOSED_BEFORE_BODY, true, None);
            }
            Err(raw) => format!("{error:?}; sent again by hand: {raw}"),
        },
    };
    (probe.class, 0, false, Some(described(error)))
}

/// Why a request sent by hand got no answer.
pub enum RawError {
    /// No TCP connection.
    Connect(std::io::Error),
    /// The server closed the connection (or reset it) without writing a status line.
    ClosedSilently,
    /// The server wrote something that is not an HTTP/1.1 status line.
    NotHttp(String),
    /// Nothing within the time limit.
    Hang,
}

impl std::fmt::Display for RawError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Connect(error) => write!(formatter, "no connection: {error}"),
            Self::ClosedSilently => formatter.write_str("closed without an answer"),
            Self::NotHttp(text) => write!(formatter, "not an HTTP answer: {text:?}"),
            Self::Hang => formatter.write_str("no answer in time"),
        }
    }
}

/// The probe as HTTP/1.1 bytes, with the headers reqwest would send (invalid values skipped
/// alike) and `Connection: close`.
fn raw_request(base: &str, token: &str, probe: &Probe) -> (String, Vec<u8>) {
    let url = reqwest::Url::parse(&format!("{base}{}", probe.path)).expect("a probe's URL");
    let authority = format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or(80)
    );
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    let mut head = format!(
        "{} {target} HTTP/1.1\r\nhost: {authority}\r\n",
        probe.method
    )
    .into_bytes();
    for (name, value) in &probe.headers {
        if reqwest::header::HeaderValue::from_bytes(value).is_ok() {
            head.extend_from_slice(format!("{name}: ").as_bytes());
            head.extend_from_slice(value);
            head.extend_from_slice(b"\r\n");
        }
    }
    if probe.authorized {
        head.extend_from_slice(format!("authorization: Bearer {token}\r\n").as_bytes());
    }
    head.extend_from_slice(
        format!(
            "content-length: {}\r\nconnection: close\r\n\r\n",
            probe.body.len()
        )
        .as_bytes(),
    );
    head.extend_from_slice(&probe.body);
    (authority, head)
}

/// Sends `probe` on a fresh socket, ignores a failed write (the server may have answered and
/// closed already) and reads what the server wrote: its status and the start of its body.
pub async fn send_raw(
    base: &str,
    token: &str,
    probe: &Probe,
    limit: std::time::Duration,
) -> Result<(u16, String), RawError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (authority, bytes) = raw_request(base, token, probe);
    let exchange = async {
        let mut socket = tokio::net::TcpStream::connect(&authority)
            .await
            .map_err(RawError::Connect)?;
        let _ = socket.write_all(&bytes).await;
        let mut answer = Vec::new();
        let mut chunk = [0u8; 4096];
        // Until the end of the headers and a little of the body: enough for a status and a
        // reason, and an event stream that stays open cannot hold the read forever.
        while answer.len() < 4096 && !answer.windows(4).any(|window| window == b"\r\n\r\n") {
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(read) => answer.extend_from_slice(&chunk[..read]),
            }
        }
        Ok(answer)
    };
    let answer = tokio::time::timeout(limit, exchange)
        .await
        .map_err(|_| RawError::Hang)??;
    if answer.is_empty() {
        return Err(RawError::ClosedSilently);
    }
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| RawError::NotHttp(text.chars().take(200).collect()))?;
    Ok((status, text))
}

/// Sends `probes` with `concurrency` in flight and tallies the answers.
pub async fn run(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    probes: impl Iterator<Item = Probe>,
    concurrency: usize,
) -> Tally {
    let mut tally = Tally::default();
    let mut answers = futures::stream::iter(probes)
        .map(|probe| send(client, base, token, probe))
        .buffer_unordered(concurrency);
    while let Some((class, status, resent, failure)) = answers.next().await {
        tally.resent += usize::from(resent);
        tally.record(class, status, failure);
    }
    tally
}

/// Panics anywhere in the process (server tasks included), counted by [`count_panics`].
pub static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Installs a panic hook that counts panics and then reports them as usual.
pub fn count_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        previous(info);
    }));
}

/// What the stdio fixture (tests/fixtures/malformed_upstream.py) answers for each class: the
/// first six are garbage beside a proper answer, the last six a wrong answer to the call.
pub const UPSTREAM_CLASSES: [&str; 12] = [
    "stray_bad_utf8",
    "stray_deep_nesting",
    "stray_huge_numbers",
    "stray_batch",
    "stray_wrong_types",
    "stray_random_bytes",
    "answer_wrong_type",
    "answer_huge_number",
    "answer_deep_nesting",
    "answer_bad_error",
    "answer_giant_string",
    "answer_bad_utf8",
];

/// A call of the fixture's `mangle` tool through the REST API, answered malformed.
pub fn upstream_probe(rng: &mut Rng, server_id: &str) -> Probe {
    let class = rng.below(UPSTREAM_CLASSES.len());
    let seed = rng.next() % 1_000_000;
    Probe {
        class: UPSTREAM_CLASSES[class],
        method: reqwest::Method::POST,
        path: format!("/api/mcp/servers/{server_id}/tools/mangle/call"),
        headers: vec![("content-type", b"application/json".to_vec())],
        body: format!(r#"{{"arguments":{{"class":{class},"seed":{seed}}}}}"#).into_bytes(),
        authorized: true,
    }
}

/// The path of the malformed stdio fixture.
pub fn malformed_upstream_script() -> String {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/malformed_upstream.py");
    path.canonicalize().unwrap().to_string_lossy().into_owned()
}
