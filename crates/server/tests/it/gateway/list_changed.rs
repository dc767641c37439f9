//! `notifications/tools/list_changed`: the gateway advertises it, and a connected client that
//! listed is told when its list changes (a rule refusing a tool outright), and not when a
//! change leaves its list as it was (a rule allowing a listed tool). Likewise
//! `notifications/resources/list_changed` and `notifications/prompts/list_changed` when an
//! upstream's resources or prompts change (the FastMCP fixture of `resource_updates` adding
//! one and saying so), each only for the list that changed.

use super::resource_updates::{Client, Heard, connect_listening, control, start_with_notes};
use super::wire::echo;
use crate::support::approvals::*;
use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RoleClient, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::time::Duration;
use switchboard_approvals::ApprovalConfig;
use tokio::sync::mpsc;

async fn names_of(client: &rmcp::service::Peer<RoleClient>) -> Vec<String> {
    let tools = client.list_all_tools().await.unwrap();
    tools
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect()
}

struct ListChanges(mpsc::UnboundedSender<()>);

impl ClientHandler for ListChanges {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("gateway-list-changed-test", "1.0.0"),
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_client_is_told_when_its_list_changes() {
    let (_fake, server, everything) = start(ApprovalConfig::default()).await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    let (sender, mut changes) = mpsc::unbounded_channel();
    let config = StreamableHttpClientTransportConfig::with_uri(server.url("/gateway/mcp"))
        .auth_header(carol.token.clone());
    let client = ListChanges(sender)
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap();
    let advertised = client.peer_info().unwrap().capabilities.tools.clone();
    assert_eq!(advertised.and_then(|tools| tools.list_changed), Some(true));
    let names = names_of(&client).await;
    assert!(
        names.contains(&"everything__get-sum".to_owned()),
        "{names:?}"
    );
    // Give the client's standalone GET stream a moment to open.
    tokio::time::sleep(Duration::from_millis(300)).await;

    // A rule allowing a listed tool changes nothing in the list: nothing is said.
    server.set_policy(&everything, "echo", "ALWAYS_ALLOW").await;
    let quiet = tokio::time::timeout(Duration::from_millis(800), changes.recv()).await;
    assert!(quiet.is_err(), "told of a change that changed nothing");
    client.call_tool(echo("still here")).await.unwrap();

    // A rule refusing a tool outright removes it: the client is told.
    server
        .set_policy(&everything, "get-sum", "ALWAYS_DENY")
        .await;
    tokio::time::timeout(Duration::from_secs(10), changes.recv())
        .await
        .expect("told within seconds")
        .expect("the client is still connected");
    let names = names_of(&client).await;
    assert!(
        !names.contains(&"everything__get-sum".to_owned()),
        "{names:?}"
    );
    client.cancel().await.unwrap();
}

/// Has the fixture add `kind`s (a new name each time: the first news may reach Switchboard's
/// upstream session before its stream is open) until `heard` hears something; what it heard
/// and the names added.
async fn add_until_told(
    notes: &switchboard_test_support::interop::Peer,
    kind: &str,
    heard: &mut mpsc::UnboundedReceiver<Heard>,
) -> (Heard, Vec<String>) {
    let mut added = Vec::new();
    for attempt in 0..10 {
        let name = format!("{kind}{attempt}");
        control(notes, &format!("add?kind={kind}&name={name}")).await;
        added.push(name);
        if let Ok(Some(told)) = tokio::time::timeout(Duration::from_secs(3), heard.recv()).await {
            return (told, added);
        }
    }
    panic!("never told of the new {kind}s {added:?}");
}

/// The resource URIs and prompt names the client is offered now.
async fn listed(client: &Client) -> (Vec<String>, Vec<String>) {
    let resources = client.list_all_resources().await.unwrap();
    let prompts = client.list_all_prompts().await.unwrap();
    (
        resources.into_iter().map(|resource| resource.uri).collect(),
        prompts.into_iter().map(|prompt| prompt.name).collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_is_told_when_an_upstreams_resources_or_prompts_change() {
    let (_fake, server, notes, token) = start_with_notes().await;
    let (client, mut heard) = connect_listening(&server, "/gateway/mcp", &token).await;
    let capabilities = client.peer_info().unwrap().capabilities.clone();
    assert_eq!(capabilities.resources.unwrap().list_changed, Some(true));
    assert_eq!(capabilities.prompts.unwrap().list_changed, Some(true));
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources.len(), 2, "{resources:?}");
    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts.len(), 1, "{prompts:?}");

    let (told, added) = add_until_told(&notes, "resource", &mut heard).await;
    assert_eq!(told, Heard::ResourcesChanged, "only the resources changed");
    let (uris, _) = listed(&client).await;
    for name in &added {
        let uri = format!("switchboard://notes/fixture://note/{name}");
        assert!(uris.contains(&uri), "{uri} in {uris:?}");
    }

    let (told, added) = add_until_told(&notes, "prompt", &mut heard).await;
    assert_eq!(told, Heard::PromptsChanged, "only the prompts changed");
    let (_, names) = listed(&client).await;
    for name in &added {
        assert!(
            names.contains(&format!("notes__{name}")),
            "{name} in {names:?}"
        );
    }
    client.cancel().await.unwrap();
}
