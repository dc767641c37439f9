//! `notifications/resources/updated` through the gateway, on the real wire: rmcp's Streamable
//! HTTP client at `/gateway/mcp` and `/gateway/servers/notes/mcp`, and a FastMCP server
//! (`Peer::resource_updates`, registered as `notes`) whose resources change when the test says
//! so and which shows what it is subscribed to. An update reaches exactly the gateway sessions
//! that subscribed to that resource, under each one's name for it; `resources/unsubscribe`
//! stops it; and the upstream's subscription is released (`resources/unsubscribe` upstream)
//! once no gateway session wants the URI any more — one unsubscribed, the other ended its
//! session (`DELETE`).

#![allow(deprecated)] // resources/subscribe: deprecated by 2026-07-28, what this tests

use crate::support::approvals::ApprovalServer;
use crate::support::chat::remote_server;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ErrorCode, Implementation, ResourceUpdatedNotificationParam,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceError, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchboard_approvals::ApprovalConfig;
use switchboard_mcp_server::KgConfig;
use switchboard_store::DatabaseConfig;
use switchboard_test_support::fake_openai::FakeOpenAi;
use switchboard_test_support::interop::Peer;
use tokio::sync::mpsc;

pub(super) const NOTE_A: &str = "fixture://note/a";
const NOTE_B: &str = "fixture://note/b";
pub(super) const DEADLINE: Duration = Duration::from_secs(30);

/// What a gateway client heard.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Heard {
    Updated(String),
    ResourcesChanged,
    PromptsChanged,
}

pub(super) struct Listening(mpsc::UnboundedSender<Heard>);

impl ClientHandler for Listening {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(Heard::Updated(params.uri));
    }

    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.0.send(Heard::ResourcesChanged);
    }

    async fn on_prompt_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.0.send(Heard::PromptsChanged);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("gateway-resource-updates-test", "1.0.0"),
        )
    }
}

pub(super) type Client = RunningService<RoleClient, Listening>;

/// A client of the gateway at `path`, and what it hears.
pub(super) async fn connect_listening(
    server: &ApprovalServer,
    path: &str,
    token: &str,
) -> (Client, mpsc::UnboundedReceiver<Heard>) {
    let (sender, heard) = mpsc::unbounded_channel();
    let config = StreamableHttpClientTransportConfig::with_uri(server.url(path)).auth_header(token);
    let client = Listening(sender)
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("the gateway accepts the client");
    (client, heard)
}

/// The gateway with the fixture registered as `notes`, and a person allowed to use it.
pub(super) async fn start_with_notes() -> (FakeOpenAi, ApprovalServer, Peer, String) {
    start_with_notes_and(KgConfig::default()).await
}

/// [`start_with_notes`] with `kg` as the gateway's settings.
pub(super) async fn start_with_notes_and(
    kg: KgConfig,
) -> (FakeOpenAi, ApprovalServer, Peer, String) {
    let notes = Peer::resource_updates();
    let fake = FakeOpenAi::start().await;
    let server = ApprovalServer::start_with_kg(
        ApprovalConfig::default(),
        &fake.base_url(),
        &DatabaseConfig::default(),
        kg,
    )
    .await;
    let record = server
        .store
        .create_server(&server.workspace_id, remote_server("notes", &notes.url()))
        .await
        .unwrap();
    // Synced once, as a server added through the API is: the registry then follows its
    // list changes.
    let sync = format!("/api/mcp/servers/{}/sync", record.id);
    let (status, answer) = server
        .send(&server.admin, reqwest::Method::POST, &sync, None)
        .await;
    assert!(status.is_success(), "{status} {answer}");
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    (fake, server, notes, carol.token)
}

/// Posts to one of the fixture's control routes.
pub(super) async fn control(notes: &Peer, route: &str) -> Value {
    let response = switchboard_test_support::http_client::http_client()
        .post(notes.control_url(route))
        .send()
        .await
        .unwrap();
    response.json().await.unwrap()
}

/// Waits until the upstream is subscribed to exactly `expected` (URI → sessions).
pub(super) async fn until_upstream_subscriptions(notes: &Peer, expected: Value) {
    let started = Instant::now();
    loop {
        let answer: Value = reqwest::get(notes.control_url("subscriptions"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if answer["subscriptions"] == expected {
            return;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "the upstream's subscriptions stayed {answer}, not {expected}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Has the upstream update `own_uri` until `heard` hears `expected` (the client's stream may
/// still be opening when the first update is sent); what it heard until then.
pub(super) async fn update_until_heard(
    notes: &Peer,
    own_uri: &str,
    heard: &mut mpsc::UnboundedReceiver<Heard>,
    expected: &str,
) -> Vec<Heard> {
    let started = Instant::now();
    let mut all = Vec::new();
    loop {
        control(notes, &format!("update?uri={own_uri}")).await;
        if let Ok(Some(next)) = tokio::time::timeout(Duration::from_secs(1), heard.recv()).await {
            all.push(next.clone());
            if next == Heard::Updated(expected.to_owned()) {
                return all;
            }
        }
        assert!(
            started.elapsed() < DEADLINE,
            "never heard {expected}: {all:?}"
        );
    }
}

/// Everything `heard` receives until it has been quiet for half a second: the notifications of
/// updates made earlier that are still on their way (`update_until_heard` may have sent more
/// than one update, and returns on the first it hears).
pub(super) async fn settled(heard: &mut mpsc::UnboundedReceiver<Heard>) -> Vec<Heard> {
    let mut all = Vec::new();
    while let Ok(Some(next)) = tokio::time::timeout(Duration::from_millis(500), heard.recv()).await
    {
        all.push(next);
    }
    all
}

/// Everything `heard` holds now.
pub(super) fn drained(heard: &mut mpsc::UnboundedReceiver<Heard>) -> Vec<Heard> {
    std::iter::from_fn(|| heard.try_recv().ok()).collect()
}

fn updated(uri: &str) -> Heard {
    Heard::Updated(uri.to_owned())
}

pub(super) async fn subscribe(client: &Client, uri: &str) {
    client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .unwrap_or_else(|error| panic!("subscribe {uri}: {error}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_reach_exactly_the_sessions_that_subscribed_until_they_let_go() {
    let (_fake, server, notes, token) = start_with_notes().await;
    let gateway_a = format!("switchboard://notes/{NOTE_A}");
    let gateway_b = format!("switchboard://notes/{NOTE_B}");
    let (first, mut first_heard) = connect_listening(&server, "/gateway/mcp", &token).await;
    let (second, mut second_heard) = connect_listening(&server, "/gateway/mcp", &token).await;
    let (own, mut own_heard) =
        connect_listening(&server, "/gateway/servers/notes/mcp", &token).await;

    subscribe(&first, &gateway_a).await;
    subscribe(&second, &gateway_b).await;
    subscribe(&own, NOTE_A).await;
    // A URI no server of the caller's has is -32002, and subscribes to nothing.
    let unknown = first
        .subscribe(SubscribeRequestParams::new("switchboard://nope/x"))
        .await
        .unwrap_err();
    assert!(
        matches!(&unknown, ServiceError::McpError(error) if error.code == ErrorCode::RESOURCE_NOT_FOUND),
        "{unknown}"
    );
    // One upstream session serves carol's three gateway sessions: one subscription per URI.
    until_upstream_subscriptions(&notes, json!({NOTE_A: 1, NOTE_B: 1})).await;

    // Each subscriber hears its resource's update under its own name for it.
    update_until_heard(&notes, NOTE_A, &mut first_heard, &gateway_a).await;
    update_until_heard(&notes, NOTE_A, &mut own_heard, NOTE_A).await;
    update_until_heard(&notes, NOTE_B, &mut second_heard, &gateway_b).await;
    // An update of A after B's: on each session's one stream, whatever came before it is in.
    update_until_heard(&notes, NOTE_A, &mut first_heard, &gateway_a).await;
    assert!(
        drained(&mut first_heard)
            .iter()
            .all(|heard| *heard == updated(&gateway_a)),
        "the first session subscribed to A only"
    );
    assert!(
        settled(&mut second_heard)
            .await
            .iter()
            .all(|heard| *heard == updated(&gateway_b)),
        "the second session subscribed to B only"
    );

    // Unsubscribed, the first session hears no more of A; the per-server one still does.
    first
        .unsubscribe(UnsubscribeRequestParams::new(gateway_a.as_str()))
        .await
        .unwrap();
    settled(&mut first_heard).await;
    update_until_heard(&notes, NOTE_A, &mut own_heard, NOTE_A).await;
    update_until_heard(&notes, NOTE_A, &mut own_heard, NOTE_A).await;
    until_upstream_subscriptions(&notes, json!({NOTE_A: 1, NOTE_B: 1})).await;
    assert_eq!(drained(&mut first_heard), [], "unsubscribed from A");

    // The per-server session ends (DELETE): nobody wants A, so the upstream lets go of it.
    own.cancel().await.unwrap();
    until_upstream_subscriptions(&notes, json!({NOTE_B: 1})).await;
    second.cancel().await.unwrap();
    until_upstream_subscriptions(&notes, json!({})).await;
    assert_eq!(drained(&mut first_heard), []);
    first.cancel().await.unwrap();
}
