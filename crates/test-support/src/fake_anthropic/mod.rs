//! A scripted Anthropic Messages API server over real HTTP (axum on 127.0.0.1:0), for
//! testing the `anthropic` provider and the chat engine end to end.
//!
//! Each `POST /v1/messages` is recorded (path, headers, JSON body) so tests can assert the
//! request shape, and answered with the next queued [`AnthropicReply`]; with nothing queued
//! it answers 500 with an `api_error` body naming the problem, so a test that expects fewer
//! requests fails visibly. Like the real API it refuses (401 `authentication_error`) a
//! request without `x-api-key` and (400) one without `anthropic-version`.

mod script;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::local_server::LocalServer;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use axum::routing::post;
use serde_json::Value;

pub use crate::fake_openai::RecordedRequest;
pub use script::{
    AnthropicReply, ScriptedToolUse, ScriptedUsage, block_stop, error_body, input_json_delta,
    message_end, message_start, ping, text_block_start, text_delta,
};

#[derive(Debug, Default)]
struct FakeState {
    script: Mutex<VecDeque<AnthropicReply>>,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// The running fake. Stops when dropped.
#[derive(Debug)]
pub struct FakeAnthropic {
    server: LocalServer,
    state: Arc<FakeState>,
}

impl FakeAnthropic {
    /// Binds 127.0.0.1 on an ephemeral port and starts serving.
    pub async fn start() -> Self {
        let state = Arc::new(FakeState::default());
        let app = Router::new()
            .route("/v1/messages", post(messages))
            .with_state(state.clone());
        let server = LocalServer::start(app, "the fake Anthropic server").await;
        Self { server, state }
    }

    /// `http://127.0.0.1:<port>`, the value for `llm.base_url`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.server.address())
    }

    /// Queues the reply for the next unanswered request.
    pub fn enqueue(&self, reply: AnthropicReply) -> &Self {
        self.state.script.lock().unwrap().push_back(reply);
        self
    }

    /// Replies queued but not yet used.
    pub fn pending_replies(&self) -> usize {
        self.state.script.lock().unwrap().len()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests.lock().unwrap().clone()
    }
}

async fn messages(
    State(state): State<Arc<FakeState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let text = String::from_utf8_lossy(&body).into_owned();
    let recorded = RecordedRequest {
        path: uri.path().to_owned(),
        query: uri.query().map(str::to_owned),
        headers: headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect::<BTreeMap<_, _>>(),
        body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
        received_at: Instant::now(),
    };
    let has_key = recorded
        .header("x-api-key")
        .is_some_and(|key| !key.is_empty());
    let has_version = recorded.header("anthropic-version").is_some();
    state.requests.lock().unwrap().push(recorded);
    if !has_key {
        return status_reply(
            401,
            &[],
            error_body("authentication_error", "x-api-key header is required"),
        );
    }
    if !has_version {
        return status_reply(
            400,
            &[],
            error_body(
                "invalid_request_error",
                "anthropic-version: header is required",
            ),
        );
    }
    let reply = state.script.lock().unwrap().pop_front();
    match reply {
        None => status_reply(
            500,
            &[],
            error_body(
                "api_error",
                "fake Anthropic server: no scripted reply left for this request",
            ),
        ),
        Some(AnthropicReply::Status {
            status,
            headers,
            body,
        }) => status_reply(status, &headers, body),
        Some(AnthropicReply::Stream(events)) => {
            let body: String = events
                .iter()
                .map(|event| {
                    let name = event["type"].as_str().unwrap_or("message");
                    format!("event: {name}\ndata: {event}\n\n")
                })
                .collect();
            Response::builder()
                .status(StatusCode::OK)
                .header("content-type", "text/event-stream; charset=utf-8")
                .header("cache-control", "no-cache")
                .body(Body::from_stream(futures::stream::iter(
                    body.into_bytes()
                        .chunks(64)
                        .map(|chunk| Ok::<_, std::io::Error>(Bytes::copy_from_slice(chunk)))
                        .collect::<Vec<_>>(),
                )))
                .expect("valid response")
        }
    }
}

fn status_reply(status: u16, headers: &[(String, String)], body: String) -> Response {
    let mut response = Response::builder()
        .status(status)
        .header("content-type", "application/json");
    for (name, value) in headers {
        response = response.header(name, value);
    }
    response.body(Body::from(body)).expect("valid response")
}
