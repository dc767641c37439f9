use crate::support::approvals::*;
use reqwest::Method;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_approvals::ApprovalConfig;

const CLIENT_NAME: &str = "gateway-wire-test";

pub(super) type Client = RunningService<RoleClient, ClientConfig>;

pub(super) async fn connect(server: &ApprovalServer, path: &str, token: &str) -> Client {
    let config = StreamableHttpClientTransportConfig::with_uri(server.url(path)).auth_header(token);
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(CLIENT_NAME, "1.0.0"),
    );
    info.serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("the gateway accepts the client")
}

pub(super) async fn listed_names(client: &Client) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect()
}

pub(super) fn echo(message: &str) -> CallToolRequestParams {
    let arguments = json!({"message": message}).as_object().unwrap().clone();
    CallToolRequestParams::new("everything__echo").with_arguments(arguments)
}

/// Waits for `who`'s one pending approval and returns it.
pub(super) async fn pending_approval(server: &ApprovalServer, who: &Person) -> Value {
    for _ in 0..100 {
        let (status, body) = server.send(who, Method::GET, "/chat/approvals", None).await;
        assert_eq!(status, 200, "{body}");
        if let Some(first) = body["approvals"].as_array().and_then(|list| list.first()) {
            return first.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no approval was asked for");
}

pub(super) fn text_of(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_client_gets_the_chats_tools_under_the_chats_rules() {
    let (_fake, server, everything) = start(ApprovalConfig::default()).await;
    // `chat:use` to decide approvals (`/chat/approvals`), as in the web UI.
    let carol = server
        .person_via_api("carol", "member", &["gateway:use", "chat:use"])
        .await;
    let client = connect(&server, "/gateway/mcp", &carol.token).await;

    let names = listed_names(&client).await;
    assert!(names.contains(&"everything__echo".to_owned()), "{names:?}");
    assert!(
        names.iter().all(|name| name.starts_with("everything__")),
        "named server__tool as the chat names them: {names:?}"
    );
    let other = names
        .iter()
        .find(|name| *name != "everything__echo")
        .expect("server-everything has more than one tool")
        .clone();

    // ASK_USER (the default): the call waits for Carol, who approves it over the HTTP API.
    let peer = client.peer().clone();
    let waiting = tokio::spawn(async move { peer.call_tool(echo("hello")).await });
    let asked = pending_approval(&server, &carol).await;
    assert_eq!(asked["server"], "everything");
    assert_eq!(asked["tool"], "echo");
    assert!(!waiting.is_finished(), "nothing runs before the decision");
    let (status, decided) = server
        .decide(&carol, &asked["approval_id"], "approve", "once")
        .await;
    assert_eq!(status, 200, "{decided}");
    let result = waiting.await.unwrap().unwrap();
    assert_ne!(result.is_error, Some(true));
    assert_eq!(text_of(&result), "Echo: hello");

    // Denied by the person: refused, never sent.
    let peer = client.peer().clone();
    let waiting = tokio::spawn(async move { peer.call_tool(echo("nope")).await });
    let asked = pending_approval(&server, &carol).await;
    server
        .decide(&carol, &asked["approval_id"], "deny", "once")
        .await;
    let refused = waiting.await.unwrap().unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text_of(&refused).contains("not allowed"),
        "{}",
        text_of(&refused)
    );

    // ALWAYS_DENY: not listed, and calling it is an unknown tool.
    let other_tool = other.trim_start_matches("everything__");
    server
        .set_policy(&everything, other_tool, "ALWAYS_DENY")
        .await;
    let names = listed_names(&client).await;
    assert!(!names.contains(&other), "{names:?}");
    let unknown = client
        .call_tool(CallToolRequestParams::new(other.clone()))
        .await
        .expect_err("a denied tool is unknown");
    assert!(unknown.to_string().contains("unknown tool"), "{unknown}");
    let unknown = client
        .call_tool(CallToolRequestParams::new("everything__no_such_tool"))
        .await
        .expect_err("unknown");
    assert!(unknown.to_string().contains("unknown tool"), "{unknown}");

    // ALWAYS_ALLOW: runs at once.
    server.set_policy(&everything, "echo", "ALWAYS_ALLOW").await;
    let result = tokio::time::timeout(Duration::from_secs(10), client.call_tool(echo("fast")))
        .await
        .expect("no one is asked")
        .unwrap();
    assert_eq!(text_of(&result), "Echo: fast");

    // Every call is audited with origin gateway and the client's name.
    let audited = server.audit("action=tool_call.").await;
    let gateway_rows: Vec<&Value> = audited
        .iter()
        .filter(|entry| entry["details"]["origin"] == "gateway")
        .collect();
    assert_eq!(gateway_rows.len(), 3, "{audited:#?}");
    assert!(
        gateway_rows
            .iter()
            .all(|entry| entry["details"]["client_name"] == CLIENT_NAME)
    );
    let states: Vec<&str> = gateway_rows
        .iter()
        .map(|entry| entry["status"].as_str().unwrap_or_default())
        .collect();
    assert!(states.contains(&"denied"), "{states:?}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_needs_a_token_with_gateway_use() {
    let (_fake, server, _) = start(ApprovalConfig::default()).await;
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "curl", "version": "1"}}
    });
    let post = |token: Option<&str>| {
        let mut request = server
            .client
            .post(server.url("/gateway/mcp"))
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    assert_eq!(post(None).await.unwrap().status(), 401);
    assert_eq!(post(Some("sb_not_a_token")).await.unwrap().status(), 401);
    // Alice holds chat:use only.
    let refused = post(Some(&server.alice.token)).await.unwrap();
    assert_eq!(refused.status(), 403);
    let challenge = refused.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.contains("gateway:use"), "{challenge}");
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    assert_eq!(post(Some(&carol.token)).await.unwrap().status(), 200);
    let bud = server
        .client
        .post(server.url("/gateway/buds/no-such-bud/mcp"))
        .bearer_auth(&carol.token)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(
        bud.status(),
        200,
        "initialize answers; the bud is checked per request"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_buds_gateway_offers_its_tool_selection_under_its_policies() {
    let (_fake, server, everything) = start(ApprovalConfig::default()).await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use", "chat:use"])
        .await;
    let (status, bud) = server
        .send(
            &server.admin,
            Method::POST,
            "/api/buds",
            Some(json!({
                "name": "echoer",
                "system_prompt": "Echo.",
                "mcp_config": {"servers": ["everything"], "available_tools": ["everything.echo"]}
            })),
        )
        .await;
    assert_eq!(status, 201, "{bud}");
    let bud_id = bud["id"].as_str().unwrap();
    let (status, body) = server
        .send(
            &server.admin,
            Method::PUT,
            &format!("/api/buds/{bud_id}/policies/{everything}/echo"),
            Some(json!({"policy": "ALWAYS_ALLOW"})),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    // By name and by id: only the bud's selection, and its ALWAYS_ALLOW runs without asking
    // (the workspace's default is ASK_USER).
    for reference in ["echoer", bud_id] {
        let client = connect(
            &server,
            &format!("/gateway/buds/{reference}/mcp"),
            &carol.token,
        )
        .await;
        assert_eq!(listed_names(&client).await, ["everything__echo"]);
        let result = tokio::time::timeout(Duration::from_secs(10), client.call_tool(echo("bud")))
            .await
            .expect("the bud's rule allows it")
            .unwrap();
        assert_eq!(text_of(&result), "Echo: bud");
        client.cancel().await.unwrap();
    }
    // The workspace endpoint still asks.
    let client = connect(&server, "/gateway/mcp", &carol.token).await;
    assert!(listed_names(&client).await.len() > 1);
    let peer = client.peer().clone();
    let waiting = tokio::spawn(async move { peer.call_tool(echo("ws")).await });
    let asked = pending_approval(&server, &carol).await;
    server
        .decide(&carol, &asked["approval_id"], "approve", "once")
        .await;
    assert_eq!(text_of(&waiting.await.unwrap().unwrap()), "Echo: ws");

    let unknown = connect(&server, "/gateway/buds/no-such-bud/mcp", &carol.token).await;
    let refused = unknown.list_all_tools().await.expect_err("unknown bud");
    assert!(refused.to_string().contains("unknown bud"), "{refused}");
}
