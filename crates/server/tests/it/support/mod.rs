//! Starting a real server for a test and the small helpers the tests share — the one support
//! module of the integration tests. This file starts the plain server (no chat engine);
//! [`chat`] adds the chat engine and our own kg endpoint, [`approvals`] wires approvals the way
//! the binary does, [`sse`] reads the chat's event stream, [`malformed`] generates malformed
//! requests (shared with the `malformed_input` bench).

pub mod approvals;
pub mod chat;
pub mod malformed;
pub mod snapshot;
pub mod sse;

use axum::Router;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use switchboard_core::{ScopeSet, UserId, WorkspaceId};
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_registry::ServerRegistry;
use switchboard_server::routes::mcp_servers::McpServersReadiness;
use switchboard_server::{AppState, ServerConfig, app, serve_router};
use switchboard_store::{DatabaseConfig, NewToken, SecretCipher, Store, UserRole};
use tempfile::TempDir;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Limits small enough for tests to hit quickly.
pub fn test_config() -> ServerConfig {
    ServerConfig {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        max_request_body_bytes: 64 * 1024,
        header_read_timeout_secs: 1,
        shutdown_grace_secs: 5,
        body_read_timeout_secs: 2,
        readiness_requires_mcp: false,
        ..ServerConfig::default()
    }
}

/// A running server plus what tests need to talk to it.
pub struct TestServer {
    pub address: SocketAddr,
    pub store: Store,
    pub owner_token: String,
    pub client: reqwest::Client,
    pub shutdown_token: CancellationToken,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
    data_dir: TempDir,
}

impl TestServer {
    /// Every byte of the SQLite database as it is on disk now (see [`raw_sqlite_bytes`]).
    pub fn raw_database_bytes(&self) -> Vec<u8> {
        raw_sqlite_bytes(self.data_dir.path())
    }

    pub async fn start() -> Self {
        Self::start_with(test_config(), |router| router, |state| state).await
    }

    /// Starts with `config`, letting the test add routes around [`app`] and adjust the state.
    pub async fn start_with(
        config: ServerConfig,
        extend_router: impl FnOnce(Router) -> Router,
        extend_state: impl FnOnce(AppState) -> AppState,
    ) -> Self {
        let data_dir = tempfile::tempdir().unwrap();
        let store = Store::open(
            &DatabaseConfig::default(),
            data_dir.path(),
            SecretCipher::generate(),
        )
        .await
        .unwrap();
        let bootstrapped = store.bootstrap_default(None).await.unwrap().unwrap();
        let state = extend_state(AppState::new(store.clone(), config.clone()));
        let shutdown_token = state.shutdown.clone();
        let listener = TcpListener::bind(config.bind).await.unwrap();
        let address = listener.local_addr().unwrap();
        let router = extend_router(app(state));
        let (stop, stopped) = oneshot::channel::<()>();
        let task_token = shutdown_token.clone();
        let task = tokio::spawn(async move {
            serve_router(listener, router, &config, task_token, async {
                let _ = stopped.await;
            })
            .await
        });
        Self {
            address,
            store,
            owner_token: bootstrapped.plaintext.expose().to_owned(),
            client: switchboard_test_support::http_client::http_client(),
            shutdown_token,
            stop: Some(stop),
            task: Some(task),
            data_dir,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    pub fn get(&self, path: &str, token: &str) -> reqwest::RequestBuilder {
        self.client.get(self.url(path)).bearer_auth(token)
    }

    /// Signals shutdown and returns the accept loop's task to await.
    pub fn begin_shutdown(&mut self) -> JoinHandle<std::io::Result<()>> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.take().expect("shutdown begun twice")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// A server with the MCP registry and its readiness check, as the binary wires them.
pub async fn start_with_registry(config: ServerConfig) -> TestServer {
    TestServer::start_with(
        config,
        |router| router,
        |state| {
            let registry = ServerRegistry::new(
                McpClient::new(McpClientConfig::default()).unwrap(),
                state.store.clone(),
            );
            state
                .with_mcp_registry(registry.clone())
                .with_readiness_check(Arc::new(McpServersReadiness::new(registry)))
        },
    )
    .await
}

/// Sends `method path` with `token` and an optional JSON body.
pub async fn send(
    server: &TestServer,
    method: &str,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> reqwest::Response {
    let request = server
        .client
        .request(method.parse().unwrap(), server.url(path))
        .bearer_auth(token);
    let request = match body {
        Some(body) => request.json(&body),
        None => request,
    };
    request.send().await.unwrap()
}

/// The JSON body of `response`, which must have status `expected`.
pub async fn json_of(response: reqwest::Response, expected: u16) -> Value {
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    assert_eq!(status, expected, "{body}");
    body
}

/// A running test server of any kind (plain, chat, approvals, a replica): what the helpers
/// below need to ask it over HTTP.
pub trait Served {
    fn http(&self) -> &reqwest::Client;
    fn endpoint(&self, path: &str) -> String;
}

impl Served for TestServer {
    fn http(&self) -> &reqwest::Client {
        &self.client
    }
    fn endpoint(&self, path: &str) -> String {
        self.url(path)
    }
}

impl Served for chat::ChatServer {
    fn http(&self) -> &reqwest::Client {
        &self.client
    }
    fn endpoint(&self, path: &str) -> String {
        self.url(path)
    }
}

impl Served for approvals::ApprovalServer {
    fn http(&self) -> &reqwest::Client {
        &self.client
    }
    fn endpoint(&self, path: &str) -> String {
        self.url(path)
    }
}

/// Sends `method path` to any test server with `token` and an optional JSON body.
pub async fn call(
    server: &impl Served,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> reqwest::Response {
    let mut request = server
        .http()
        .request(method, server.endpoint(path))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    request.send().await.unwrap()
}

/// The JSON body of a request (sent as is, status not checked).
pub async fn json_body(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// The text of `GET /metrics` (asked without a token).
pub async fn metrics_text(server: &impl Served) -> String {
    let response = server.http().get(server.endpoint("/metrics")).send().await;
    response.unwrap().text().await.unwrap()
}

/// The `/metrics` lines of `metric` that mention every one of `labels`.
pub async fn metric_lines(server: &impl Served, metric: &str, labels: &[&str]) -> Vec<String> {
    metrics_text(server)
        .await
        .lines()
        .filter(|line| line.starts_with(&format!("{metric}{{")))
        .filter(|line| labels.iter().all(|label| line.contains(label)))
        .map(str::to_owned)
        .collect()
}

/// A token issued through `POST /api/tokens` with `admin`'s token.
pub struct IssuedToken {
    pub id: String,
    pub plaintext: String,
}

/// Issues a token named `name` with `scopes` through the API.
pub async fn issue_token(
    server: &impl Served,
    admin: &str,
    name: &str,
    scopes: &[&str],
) -> IssuedToken {
    let request = server
        .http()
        .post(server.endpoint("/api/tokens"))
        .bearer_auth(admin)
        .json(&serde_json::json!({"name": name, "scopes": scopes}));
    let created = json_body(request).await;
    IssuedToken {
        id: created["token"]["id"]
            .as_str()
            .expect("token.id")
            .to_owned(),
        plaintext: created["plaintext"].as_str().expect("plaintext").to_owned(),
    }
}

/// A new person of `workspace` named `name` with `role`, and a token of theirs holding
/// `scopes` (space-separated, as the API writes them): their id and the token.
pub async fn person_with_token(
    store: &Store,
    workspace: &WorkspaceId,
    name: &str,
    role: UserRole,
    scopes: &str,
) -> (UserId, String) {
    let user = store.create_user(workspace, name, role).await.unwrap();
    let issued = store
        .create_token(
            workspace,
            NewToken {
                user_id: user.id.clone(),
                name: format!("{name}'s token"),
                scopes: ScopeSet::parse_list(scopes).unwrap(),
                expires_at: None,
            },
        )
        .await
        .unwrap();
    (user.id, issued.plaintext.expose().to_owned())
}

/// A second workspace with an owner and a token holding `scopes`; returns its id and token.
pub async fn other_workspace(store: &Store, name: &str, scopes: ScopeSet) -> (WorkspaceId, String) {
    let workspace = store.create_workspace(name).await.unwrap();
    let owner = store
        .create_user(&workspace.id, "owner", UserRole::Owner)
        .await
        .unwrap();
    let issued = store
        .create_token(
            &workspace.id,
            NewToken {
                user_id: owner.id,
                name: format!("{name} token"),
                scopes,
                expires_at: None,
            },
        )
        .await
        .unwrap();
    (workspace.id, issued.plaintext.expose().to_owned())
}

/// Asserts the JSON error shape and returns (code, message).
pub async fn error_of(response: reqwest::Response) -> (String, String) {
    let body: serde_json::Value = response.json().await.expect("error body is JSON");
    let code = body["error"]["code"]
        .as_str()
        .expect("error.code")
        .to_owned();
    let message = body["error"]["message"]
        .as_str()
        .expect("error.message")
        .to_owned();
    (code, message)
}

/// Every byte of the SQLite database kept in `data_dir` as it is on disk now (the file, its WAL
/// and shared memory), for checking that a secret is nowhere in plaintext.
pub fn raw_sqlite_bytes(data_dir: &std::path::Path) -> Vec<u8> {
    let base = data_dir.join(switchboard_store::SQLITE_FILE_NAME);
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| std::fs::read(format!("{}{suffix}", base.display())).ok())
        .flatten()
        .collect()
}

/// Whether `haystack` holds `needle` as it is or hex-encoded.
pub fn holds_in_any_form(haystack: &[u8], needle: &str) -> bool {
    let hex: String = needle.bytes().map(|byte| format!("{byte:02x}")).collect();
    [needle.as_bytes(), hex.as_bytes()]
        .into_iter()
        .any(|form| haystack.windows(form.len()).any(|window| window == form))
}
