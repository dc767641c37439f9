//! The request side of the hand-written HTTP/1.1 upstreams the fault tests and benches run
//! (silent, bombing and faulty servers): they must send exactly the bytes a test wants —
//! headers then nothing, a body that never ends — which a real HTTP server library would not,
//! so they read requests off the socket themselves, all with this one reader.

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::net::TcpStream;

/// One request: its method line, its headers (names as sent) and its body (`Content-Length`
/// bytes; no chunked bodies: MCP clients send lengths).
#[derive(Debug)]
pub struct RawRequest {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawRequest {
    /// The value of header `name` (case-insensitive), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(sent, _)| sent.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// Reads the next request of a keep-alive connection; `None` at its end or on anything
/// malformed (the test's server then closes the connection).
pub async fn read_request(reader: &mut BufReader<TcpStream>) -> Option<RawRequest> {
    let mut line = String::new();
    if reader.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).await.ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.to_owned(), value.trim().to_owned()));
        }
    }
    let mut request = RawRequest {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    let length: usize = match request.header("content-length") {
        Some(length) => length.parse().ok()?,
        None => 0,
    };
    request.body = vec![0; length];
    reader.read_exact(&mut request.body).await.ok()?;
    Some(request)
}
