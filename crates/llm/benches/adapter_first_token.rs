//! Per-step overhead of each network adapter (`openai`, `azure_openai`, `anthropic`): the time
//! from the provider's first response byte to our first text event (`LlmEvent::TextDelta`, which the chat sends on as its `token` SSE event) — reading the status and
//! headers, SSE framing, JSON decoding of the wire format, event mapping. Prints p50/p95.
//!
//! The provider is a local TCP server in this process answering each request with the wire
//! format exactly as the provider documents it (OpenAI Chat Completions chunks with usage;
//! Anthropic Messages events with `ping`), in one write whose instant is the first byte. The
//! connection is kept alive, as with a real provider, so connection set-up is not counted.
//!
//! Run: `cargo bench -p switchboard-llm --bench adapter_first_token`.

use futures::StreamExt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::ChatMessage;
use switchboard_llm::{ApiKey, LlmConfig, LlmEvent, LlmRequest, ProviderKind, build_provider};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const WARM_UP: usize = 20;
const SAMPLES: usize = 300;

/// The streamed body of one OpenAI (and Azure OpenAI) answer.
const OPENAI_BODY: &str = concat!(
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":1,\"total_tokens\":13}}\n\n",
    "data: [DONE]\n\n",
);

/// The streamed body of one Anthropic Messages answer.
const ANTHROPIC_BODY: &str = concat!(
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: ping\ndata: {\"type\":\"ping\"}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":1}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
);

/// When the fake wrote the first byte of its latest answer.
type FirstByte = Arc<Mutex<Option<Instant>>>;

/// Serves every request on `listener` with `body` as `text/event-stream`, keeping connections.
async fn serve(listener: TcpListener, body: &'static str, first_byte: FirstByte) {
    loop {
        let Ok((connection, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(answer_requests(connection, body, first_byte.clone()));
    }
}

async fn answer_requests(mut connection: TcpStream, body: &'static str, first_byte: FirstByte) {
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut buffer = Vec::new();
    while read_request(&mut connection, &mut buffer).await {
        *first_byte.lock().expect("first-byte lock") = Some(Instant::now());
        if connection.write_all(response.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Reads one request (headers, then `content-length` bytes of body); false when the client left.
async fn read_request(connection: &mut TcpStream, buffer: &mut Vec<u8>) -> bool {
    let mut chunk = [0_u8; 16 * 1024];
    loop {
        if let Some(end) = find(buffer, b"\r\n\r\n") {
            let headers = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length: usize = headers
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|value| value.trim().parse().ok())
                .unwrap_or(0);
            if buffer.len() >= end + 4 + length {
                buffer.drain(..end + 4 + length);
                return true;
            }
        }
        match connection.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn config(kind: ProviderKind, base_url: String) -> LlmConfig {
    LlmConfig {
        provider: kind,
        base_url,
        api_key: Some(ApiKey::new("sk-bench")),
        model: "m".to_owned(),
        api_version: if kind == ProviderKind::AzureOpenai {
            "2024-10-21".to_owned()
        } else {
            String::new()
        },
        ..LlmConfig::default()
    }
}

/// Samples the first-byte → first-token time of `kind` against its fake.
async fn measure(kind: ProviderKind, body: &'static str) -> Vec<Duration> {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base_url = match kind {
        ProviderKind::Openai => format!("http://{}/v1", listener.local_addr().expect("address")),
        _ => format!("http://{}", listener.local_addr().expect("address")),
    };
    let first_byte = FirstByte::default();
    let server = tokio::spawn(serve(listener, body, first_byte.clone()));
    let provider = build_provider(&config(kind, base_url)).expect("provider");
    let mut samples = Vec::with_capacity(SAMPLES);
    for round in 0..WARM_UP + SAMPLES {
        let request = LlmRequest::new("", vec![ChatMessage::user("Say hello")]);
        let mut stream = provider.stream_chat(request).await.expect("stream");
        let mut first_token = None;
        while let Some(event) = stream.next().await {
            if matches!(event.expect("event"), LlmEvent::TextDelta(_)) && first_token.is_none() {
                first_token = Some(Instant::now());
            }
        }
        let first_token = first_token.expect("a token event");
        let wrote = first_byte
            .lock()
            .expect("first-byte lock")
            .take()
            .expect("the fake answered");
        if round >= WARM_UP {
            samples.push(first_token.duration_since(wrote));
        }
    }
    server.abort();
    samples
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * fraction).round() as usize]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "first provider byte → first token event, {SAMPLES} answers each (after {WARM_UP} warm-up):"
    );
    for (kind, body) in [
        (ProviderKind::Openai, OPENAI_BODY),
        (ProviderKind::AzureOpenai, OPENAI_BODY),
        (ProviderKind::Anthropic, ANTHROPIC_BODY),
    ] {
        let mut samples = runtime.block_on(measure(kind, body));
        samples.sort();
        println!(
            "  {:<13} p50 {:>7.1} µs   p95 {:>7.1} µs",
            kind.as_str(),
            percentile(&samples, 0.50).as_secs_f64() * 1e6,
            percentile(&samples, 0.95).as_secs_f64() * 1e6,
        );
    }
}
