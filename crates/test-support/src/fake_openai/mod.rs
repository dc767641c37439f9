//! A scripted OpenAI-compatible Chat Completions server over real HTTP (axum on
//! 127.0.0.1:0), for testing the `openai` provider and the chat engine end to end.
//!
//! Azure OpenAI's paths are served too (`/openai/deployments/{deployment}/chat/completions`
//! and `/openai/v1/chat/completions`), and `GET /v1/models` (`/models`, `/openai/v1/models`)
//! answers the list set with [`FakeOpenAi::serve_models`] (or a scripted error).
//!
//! Each `POST …/chat/completions` is recorded (path, query, headers, JSON body) and answered with
//! the next queued [`ScriptedReply`]; with nothing queued it answers 500 naming the problem,
//! so a test that expects fewer requests fails visibly. Streams whose client went away
//! before the scripted ending are counted, so cancellation can be asserted.

mod script;

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::local_server::LocalServer;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::Notify;

pub use script::{
    ScriptedReply, ScriptedStream, ScriptedToolCall, StreamEnding, StreamStep, finish_chunk,
    role_chunk, text_chunk, tool_call_delta_chunk, usage_chunk,
};

/// A request the fake received.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub path: String,
    /// The query string, if any (Azure's `api-version=…`).
    pub query: Option<String>,
    /// Header names lower-cased.
    pub headers: BTreeMap<String, String>,
    /// The JSON body (`Value::String` with the raw text if it was not JSON).
    pub body: Value,
    pub received_at: Instant,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

#[derive(Default)]
struct FakeState {
    script: Mutex<VecDeque<ScriptedReply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    streams_abandoned_by_client: AtomicUsize,
    changed: Notify,
    /// What `GET …/models` answers: status and body.
    models: Mutex<Option<(u16, String)>>,
    model_requests: Mutex<Vec<RecordedRequest>>,
}

/// The running fake. Stops when dropped.
#[derive(Debug)]
pub struct FakeOpenAi {
    server: LocalServer,
    state: Arc<FakeState>,
}

impl std::fmt::Debug for FakeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeState").finish_non_exhaustive()
    }
}

impl FakeOpenAi {
    /// Binds 127.0.0.1 on an ephemeral port and starts serving.
    pub async fn start() -> Self {
        let state = Arc::new(FakeState::default());
        let app = Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .route("/chat/completions", post(chat_completions))
            .route(
                "/openai/deployments/{deployment}/chat/completions",
                post(chat_completions),
            )
            .route("/openai/v1/chat/completions", post(chat_completions))
            .route("/v1/models", get(models))
            .route("/models", get(models))
            .route("/openai/v1/models", get(models))
            .with_state(state.clone());
        let server = LocalServer::start(app, "the fake OpenAI server").await;
        Self { server, state }
    }

    /// `http://127.0.0.1:<port>/v1`, the value for `llm.base_url`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.server.address())
    }

    pub fn address(&self) -> SocketAddr {
        self.server.address()
    }

    /// Queues the reply for the next unanswered request.
    pub fn enqueue(&self, reply: ScriptedReply) -> &Self {
        self.state.script.lock().unwrap().push_back(reply);
        self
    }

    /// `GET …/models` answers these ids (OpenAI's list shape) from now on.
    pub fn serve_models(&self, ids: &[&str]) {
        let data: Vec<Value> = ids
            .iter()
            .map(|id| serde_json::json!({"id": id, "object": "model", "owned_by": "fake"}))
            .collect();
        let body = serde_json::json!({"object": "list", "data": data}).to_string();
        *self.state.models.lock().unwrap() = Some((200, body));
    }

    /// `GET …/models` answers `status` with `body` from now on.
    pub fn serve_models_error(&self, status: u16, body: &str) {
        *self.state.models.lock().unwrap() = Some((status, body.to_owned()));
    }

    /// Every `GET …/models` received so far.
    pub fn model_requests(&self) -> Vec<RecordedRequest> {
        self.state.model_requests.lock().unwrap().clone()
    }

    /// Replies queued but not yet used.
    pub fn pending_replies(&self) -> usize {
        self.state.script.lock().unwrap().len()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests.lock().unwrap().clone()
    }

    /// Streams whose client disconnected before the scripted ending was sent.
    pub fn streams_abandoned_by_client(&self) -> usize {
        self.state
            .streams_abandoned_by_client
            .load(Ordering::SeqCst)
    }

    /// Waits until at least `count` streams were abandoned by their client; false on timeout.
    pub async fn wait_for_abandoned_streams(&self, count: usize, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.state.changed.notified();
            if self.streams_abandoned_by_client() >= count {
                return true;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return self.streams_abandoned_by_client() >= count;
            }
        }
    }
}

async fn chat_completions(
    State(state): State<Arc<FakeState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    state
        .requests
        .lock()
        .unwrap()
        .push(record(&uri, &headers, &body));
    state.changed.notify_waiters();
    let reply = state.script.lock().unwrap().pop_front();
    match reply {
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "fake OpenAI server: no scripted reply left for this request",
        )
            .into_response(),
        Some(ScriptedReply::Status {
            status,
            headers,
            body,
        }) => {
            let mut response = Response::builder()
                .status(status)
                .header("content-type", "application/json");
            for (name, value) in headers {
                response = response.header(name, value);
            }
            response.body(Body::from(body)).expect("valid response")
        }
        Some(ScriptedReply::Json(value)) => axum::Json(value).into_response(),
        Some(ScriptedReply::Stream(stream)) => Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "text/event-stream")
            .header("cache-control", "no-cache")
            .body(Body::from_stream(scripted_body(stream, state)))
            .expect("valid response"),
    }
}

fn record(uri: &Uri, headers: &HeaderMap, body: &Bytes) -> RecordedRequest {
    let text = String::from_utf8_lossy(body).into_owned();
    RecordedRequest {
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
            .collect(),
        body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
        received_at: Instant::now(),
    }
}

async fn models(State(state): State<Arc<FakeState>>, uri: Uri, headers: HeaderMap) -> Response {
    state
        .model_requests
        .lock()
        .unwrap()
        .push(record(&uri, &headers, &Bytes::new()));
    let (status, body) = state.models.lock().unwrap().clone().unwrap_or((
        404,
        r#"{"error":{"message":"fake OpenAI server: no model list set"}}"#.to_owned(),
    ));
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(body))
        .expect("valid response")
}

/// Counts the stream as abandoned if it is dropped before its scripted ending.
struct AbandonGuard {
    state: Arc<FakeState>,
    completed: bool,
}

impl AbandonGuard {
    fn mark_completed(&mut self) {
        self.completed = true;
    }
}

impl Drop for AbandonGuard {
    fn drop(&mut self) {
        if !self.completed {
            self.state
                .streams_abandoned_by_client
                .fetch_add(1, Ordering::SeqCst);
            self.state.changed.notify_waiters();
        }
    }
}

fn scripted_body(
    stream: ScriptedStream,
    state: Arc<FakeState>,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let guard = AbandonGuard {
        state,
        completed: false,
    };
    let steps = stream
        .steps
        .into_iter()
        .map(Some)
        .chain(std::iter::once(None));
    let ending = stream.ending;
    futures::stream::iter(steps)
        .then(|step| async move {
            match step {
                Some(StreamStep::Data(payload)) => {
                    Some(Ok(Bytes::from(format!("data: {payload}\n\n"))))
                }
                Some(StreamStep::Comment(text)) => Some(Ok(Bytes::from(format!(": {text}\n\n")))),
                Some(StreamStep::Pause(wait)) => {
                    tokio::time::sleep(wait).await;
                    None
                }
                None => None,
            }
        })
        .filter_map(|item| async move { item })
        .chain(ending_stream(ending, guard))
}

fn ending_stream(
    ending: StreamEnding,
    mut guard: AbandonGuard,
) -> futures::stream::BoxStream<'static, Result<Bytes, std::io::Error>> {
    // The guard is marked completed only when the ending is actually reached, so a client
    // leaving during the steps is still counted.
    match ending {
        StreamEnding::Done => futures::stream::once(async move {
            guard.mark_completed();
            Ok(Bytes::from_static(b"data: [DONE]\n\n"))
        })
        .boxed(),
        StreamEnding::Close => futures::stream::once(async move {
            guard.mark_completed();
            Ok(Bytes::new())
        })
        .boxed(),
        StreamEnding::Abort => futures::stream::once(async move {
            // Let hyper flush what was sent before breaking the connection; otherwise the
            // buffered chunks die with it and the client sees nothing.
            tokio::time::sleep(Duration::from_millis(50)).await;
            guard.mark_completed();
            Err(std::io::Error::other(
                "fake OpenAI server: scripted mid-stream failure",
            ))
        })
        .boxed(),
        StreamEnding::Hang { keepalive_every } => {
            futures::stream::unfold(guard, move |guard| async move {
                match keepalive_every {
                    Some(every) => {
                        tokio::time::sleep(every).await;
                        Some((Ok(Bytes::from_static(b": keep-alive\n\n")), guard))
                    }
                    None => {
                        futures::future::pending::<()>().await;
                        None
                    }
                }
            })
            .boxed()
        }
    }
}
