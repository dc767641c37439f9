//! A revoked token stops working at `/mcp` at once, although the endpoint caches verified
//! tokens (`kg.token_cache_secs`, 60 s here so the cache alone could never explain a refusal):
//! the store's revocation epoch empties the cache in the revoking process, and on PostgreSQL
//! other replicas hear the revocation (`NOTIFY switchboard_revocations`).

use crate::support::chat::PostgresSchema;
use crate::support::{Served, issue_token, test_config};
use reqwest::StatusCode;
use serde_json::json;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use switchboard_mcp_server::{KgConfig, KnowledgeGraphService};
use switchboard_server::{AppState, app, serve_router};
use switchboard_store::{DatabaseConfig, SecretCipher, Store};
use tokio_util::sync::CancellationToken;

/// One process: the API and `/mcp` over `store`.
struct Replica {
    address: SocketAddr,
    client: reqwest::Client,
    shutdown: CancellationToken,
    data_dir: tempfile::TempDir,
}

impl Served for Replica {
    fn http(&self) -> &reqwest::Client {
        &self.client
    }
    fn endpoint(&self, path: &str) -> String {
        self.url(path)
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl Replica {
    async fn start(database: &DatabaseConfig) -> (Self, Store) {
        let data_dir = tempfile::tempdir().unwrap();
        let store = Store::open(database, data_dir.path(), SecretCipher::generate())
            .await
            .unwrap();
        let kg = KnowledgeGraphService::for_store(
            store.clone(),
            KgConfig {
                token_cache_secs: 60,
                ..KgConfig::default()
            },
            None,
        )
        .unwrap();
        let config = test_config();
        let state = AppState::new(store.clone(), config.clone()).with_knowledge_graph(kg);
        let shutdown = state.shutdown.clone();
        let listener = tokio::net::TcpListener::bind(config.bind).await.unwrap();
        let address = listener.local_addr().unwrap();
        let router = app(state);
        let token = shutdown.clone();
        tokio::spawn(async move {
            serve_router(listener, router, &config, token, std::future::pending()).await
        });
        let replica = Self {
            address,
            client: switchboard_test_support::http_client::http_client(),
            shutdown,
            data_dir,
        };
        (replica, store)
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// The status of an `initialize` at `/mcp` with `token`.
    async fn mcp_status(&self, token: &str) -> StatusCode {
        self.client
            .post(self.url("/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&json!({
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "revocation-test", "version": "1"}}
            }))
            .send()
            .await
            .unwrap()
            .status()
    }

    /// Issues a `schema:read` token through the API: (id, plaintext).
    async fn issue_token(&self, admin: &str) -> (String, String) {
        let issued = issue_token(self, admin, "kg reader", &["schema:read"]).await;
        (issued.id, issued.plaintext)
    }

    async fn revoke(&self, admin: &str, token_id: &str) {
        let response = self
            .client
            .delete(self.url(&format!("/api/tokens/{token_id}")))
            .bearer_auth(admin)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_is_refused_at_mcp_at_once() {
    let (replica, store) = Replica::start(&DatabaseConfig::default()).await;
    let admin = store.bootstrap_default(None).await.unwrap().unwrap();
    let admin = admin.plaintext.expose();
    let (token_id, token) = replica.issue_token(admin).await;
    // Verified and cached.
    assert_eq!(replica.mcp_status(&token).await, StatusCode::OK);
    assert_eq!(replica.mcp_status(&token).await, StatusCode::OK);
    replica.revoke(admin, &token_id).await;
    assert_eq!(replica.mcp_status(&token).await, StatusCode::UNAUTHORIZED);
    // Other tokens keep working.
    assert_eq!(replica.mcp_status(admin).await, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_by_another_process_on_the_sqlite_file_is_refused_within_a_second() {
    let (replica, store) = Replica::start(&DatabaseConfig::default()).await;
    let bootstrapped = store.bootstrap_default(None).await.unwrap().unwrap();
    let admin = bootstrapped.plaintext.expose();
    let (token_id, token) = replica.issue_token(admin).await;
    assert_eq!(replica.mcp_status(&token).await, StatusCode::OK);
    // As `switchboard token revoke` does: its own store on the same file.
    let cli = Store::open(
        &DatabaseConfig::default(),
        replica.data_dir.path(),
        SecretCipher::generate(),
    )
    .await
    .unwrap();
    cli.revoke_token(
        &bootstrapped.workspace.id,
        &switchboard_core::TokenId::from_string(token_id),
    )
    .await
    .unwrap();
    let waited = wait_until_refused(&replica, &token).await;
    assert!(
        waited < Duration::from_secs(3),
        "refused only after {waited:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_through_one_replica_is_refused_by_the_other_at_once() {
    let schema = PostgresSchema::create();
    let database = DatabaseConfig {
        url: Some(schema.url()),
        max_connections: 4,
        ..DatabaseConfig::default()
    };
    let (a, store_a) = Replica::start(&database).await;
    let (b, _store_b) = Replica::start(&database).await;
    let admin = store_a.bootstrap_default(None).await.unwrap().unwrap();
    let admin = admin.plaintext.expose();
    let (token_id, token) = a.issue_token(admin).await;
    assert_eq!(b.mcp_status(&token).await, StatusCode::OK);
    // B's listener is up once it has heard something: a revocation of a throwaway token.
    let (probe_id, probe) = a.issue_token(admin).await;
    assert_eq!(b.mcp_status(&probe).await, StatusCode::OK);
    a.revoke(admin, &probe_id).await;
    wait_until_refused(&b, &probe).await;

    assert_eq!(b.mcp_status(&token).await, StatusCode::OK);
    a.revoke(admin, &token_id).await;
    let waited = wait_until_refused(&b, &token).await;
    assert!(
        waited < Duration::from_secs(2),
        "B refused the revoked token only after {waited:?}"
    );
    assert_eq!(b.mcp_status(admin).await, StatusCode::OK);
}

/// Asks `replica` until it refuses `token` (at most 10 s: the cache holds tokens for 60 s).
async fn wait_until_refused(replica: &Replica, token: &str) -> Duration {
    let started = Instant::now();
    loop {
        match replica.mcp_status(token).await {
            StatusCode::UNAUTHORIZED => return started.elapsed(),
            StatusCode::OK => {}
            other => panic!("unexpected {other}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "still accepted after 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deactivated_persons_token_is_refused_at_mcp_at_once_although_cached() {
    let (replica, store) = Replica::start(&DatabaseConfig::default()).await;
    let admin = store.bootstrap_default(None).await.unwrap().unwrap();
    let admin = admin.plaintext.expose();
    let post = |path: &str, body: serde_json::Value| {
        replica
            .client
            .post(replica.url(path))
            .bearer_auth(admin)
            .json(&body)
            .send()
    };
    let dana: serde_json::Value = post("/api/users", json!({"name": "dana"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let dana_id = dana["id"].as_str().unwrap();
    let issued: serde_json::Value = post(
        "/api/tokens",
        json!({"name": "kg", "scopes": ["schema:read"], "user_id": dana_id}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let token = issued["plaintext"].as_str().unwrap();
    // Verified and cached.
    assert_eq!(replica.mcp_status(token).await, StatusCode::OK);
    assert_eq!(replica.mcp_status(token).await, StatusCode::OK);
    let set_active = |active: bool| {
        replica
            .client
            .patch(replica.url(&format!("/api/people/{dana_id}")))
            .bearer_auth(admin)
            .json(&json!({"active": active}))
            .send()
    };
    assert_eq!(set_active(false).await.unwrap().status(), StatusCode::OK);
    assert_eq!(replica.mcp_status(token).await, StatusCode::UNAUTHORIZED);
    assert_eq!(set_active(true).await.unwrap().status(), StatusCode::OK);
    assert_eq!(replica.mcp_status(token).await, StatusCode::OK);
}
