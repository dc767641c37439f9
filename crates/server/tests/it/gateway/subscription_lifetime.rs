//! A gateway client's resource subscription over the life of the sessions at both ends, on the
//! real wire (rmcp's Streamable HTTP client, or raw HTTP for a client that vanishes, and the
//! resource-update fixture registered as `notes`):
//! - the upstream restarts (a new process at the same address, which knows neither the
//!   gateway's session nor its subscription): the gateway subscribes again on its own on the
//!   next session, tells the client once that the resource may have changed, and the
//!   restarted upstream's changes reach the client;
//! - the client's session expires (idle timeout) or the client vanishes without `DELETE`:
//!   the upstream is sent `resources/unsubscribe` when the session ends, as for a `DELETE`
//!   (tested in `resource_updates`).

#![allow(deprecated)] // resources/subscribe: deprecated by 2026-07-28, what this tests

use super::resource_updates::{
    DEADLINE, Heard, NOTE_A, connect_listening, drained, start_with_notes, start_with_notes_and,
    subscribe, until_upstream_subscriptions, update_until_heard,
};
use crate::support::approvals::ApprovalServer;
use reqwest::header::{ACCEPT, AUTHORIZATION};
use serde_json::{Value, json};
use switchboard_mcp_server::KgConfig;
use switchboard_test_support::interop::Peer;
use tokio::sync::mpsc;

/// A gateway session expires after this long without a message either way.
const IDLE_TIMEOUT_SECS: u64 = 2;

fn gateway_uri(own_uri: &str) -> String {
    format!("switchboard://notes/{own_uri}")
}

/// The next resource update `heard` hears (list changes skipped).
async fn next_update(heard: &mut mpsc::UnboundedReceiver<Heard>) -> String {
    loop {
        let next = tokio::time::timeout(DEADLINE, heard.recv())
            .await
            .expect("an update is heard in time")
            .expect("the client still listens");
        if let Heard::Updated(uri) = next {
            return uri;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_is_renewed_on_the_next_session_of_a_restarted_upstream() {
    let (_fake, server, mut notes, token) = start_with_notes().await;
    let gateway_a = gateway_uri(NOTE_A);
    let (client, mut heard) = connect_listening(&server, "/gateway/mcp", &token).await;
    subscribe(&client, &gateway_a).await;
    until_upstream_subscriptions(&notes, json!({NOTE_A: 1})).await;
    update_until_heard(&notes, NOTE_A, &mut heard, &gateway_a).await;

    // The upstream restarts: its new process knows no session and no subscription.
    let port = notes.port;
    notes.kill();
    let restarted = Peer::resource_updates_at(port);
    drained(&mut heard);
    // Nobody asks the gateway anything: it notices the upstream forgot its session and
    // subscribes again on the next one...
    until_upstream_subscriptions(&restarted, json!({NOTE_A: 1})).await;
    // ...then tells the client the resource may have changed while it was not watched.
    assert_eq!(next_update(&mut heard).await, gateway_a);
    // The restarted upstream's own changes reach the client.
    update_until_heard(&restarted, NOTE_A, &mut heard, &gateway_a).await;

    // Unsubscribing still releases the renewed subscription.
    client.cancel().await.unwrap();
    until_upstream_subscriptions(&restarted, json!({})).await;
}

/// The gateway with a short session idle timeout, and the fixture registered as `notes`.
async fn start_with_short_sessions() -> (
    switchboard_test_support::fake_openai::FakeOpenAi,
    ApprovalServer,
    Peer,
    String,
) {
    start_with_notes_and(KgConfig {
        session_idle_timeout_secs: IDLE_TIMEOUT_SECS,
        ..KgConfig::default()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_releases_its_subscriptions_upstream() {
    let (_fake, server, notes, token) = start_with_short_sessions().await;
    let (client, _heard) = connect_listening(&server, "/gateway/mcp", &token).await;
    subscribe(&client, &gateway_uri(NOTE_A)).await;
    until_upstream_subscriptions(&notes, json!({NOTE_A: 1})).await;
    // The client stays connected but says nothing: its session expires, which is the
    // subscription's end too.
    until_upstream_subscriptions(&notes, json!({})).await;
    drop(client);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_vanishes_without_delete_releases_its_subscriptions_upstream() {
    let (_fake, server, notes, token) = start_with_short_sessions().await;
    let vanishing = RawClient::initialize(&server, &token).await;
    let answer = vanishing
        .request(
            2,
            "resources/subscribe",
            json!({"uri": gateway_uri(NOTE_A)}),
        )
        .await;
    assert!(answer.contains("\"result\""), "{answer}");
    let stream = vanishing.open_stream().await;
    until_upstream_subscriptions(&notes, json!({NOTE_A: 1})).await;
    // Its connections are cut, with no DELETE: an update finds no one listening, and the
    // session ends at its idle timeout, releasing the subscription.
    drop(stream);
    drop(vanishing);
    super::resource_updates::control(&notes, &format!("update?uri={NOTE_A}")).await;
    until_upstream_subscriptions(&notes, json!({})).await;
}

/// A gateway client written by hand, so that it can go without a `DELETE` of its session.
struct RawClient {
    http: reqwest::Client,
    url: String,
    token: String,
    session_id: String,
}

impl RawClient {
    async fn initialize(server: &ApprovalServer, token: &str) -> Self {
        let mut client = Self {
            http: switchboard_test_support::http_client::http_client(),
            url: server.url("/gateway/mcp"),
            token: token.to_owned(),
            session_id: String::new(),
        };
        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "vanishing-client", "version": "1.0.0"}
            }
        });
        let response = client.post(&initialize).await;
        client.session_id = response
            .headers()
            .get("mcp-session-id")
            .expect("a session")
            .to_str()
            .unwrap()
            .to_owned();
        response.text().await.unwrap();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let status = client.post(&initialized).await.status();
        assert!(status.is_success(), "{status}");
        client
    }

    async fn post(&self, message: &Value) -> reqwest::Response {
        let mut request = self
            .http
            .post(&self.url)
            .header(AUTHORIZATION, format!("Bearer {}", self.token))
            .header(ACCEPT, "application/json, text/event-stream")
            .json(message);
        if !self.session_id.is_empty() {
            request = request
                .header("mcp-session-id", &self.session_id)
                .header("mcp-protocol-version", "2025-06-18");
        }
        request.send().await.unwrap()
    }

    /// The answer to one request, as the text of its body.
    async fn request(&self, id: u64, method: &str, params: Value) -> String {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.post(&message).await.text().await.unwrap()
    }

    /// The session's standalone event stream, open until dropped.
    async fn open_stream(&self) -> reqwest::Response {
        let response = self
            .http
            .get(&self.url)
            .header(AUTHORIZATION, format!("Bearer {}", self.token))
            .header(ACCEPT, "text/event-stream")
            .header("mcp-session-id", &self.session_id)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "{}", response.status());
        response
    }
}
