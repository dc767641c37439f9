//! The outbound URL policy through the chat API: servers a request brings along
//! (`mcp_servers`) reach public addresses only unless an admin opens more — checked on the URL
//! and again on every resolved address, for every remote transport — while Switchboard's own
//! `/mcp` stays reachable by identity when loopback is closed for everything else.

use crate::support::chat::{ChatOptions, ChatServer, of_type};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use switchboard_mcp_client::url_policy::StaticHostLookup;

/// A TCP listener that counts the connections it is offered (none may arrive).
async fn canary() -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (port, hits)
}

async fn refused_message(server: &ChatServer, url: &str) -> String {
    let response = server
        .send(
            reqwest::Method::POST,
            "/chat/stream",
            Some(json!({"message": "hi", "mcp_servers": [{"name": "local", "url": url}]})),
        )
        .await;
    assert_eq!(response.status(), 422, "{url}");
    let body: Value = response.json().await.unwrap();
    body["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_servers_may_not_reach_loopback_or_private_addresses_by_default() {
    let (port, hits) = canary().await;
    let server = ChatServer::start(ChatOptions::default()).await;
    for url in [
        format!("http://127.0.0.1:{port}/mcp"),
        format!("http://[::ffff:127.0.0.1]:{port}/mcp"),
        format!("http://localhost:{port}/mcp"),
        format!("http://2130706433:{port}/mcp"),
    ] {
        let message = refused_message(&server, &url).await;
        assert!(message.starts_with("mcp_servers[0].url:"), "{message}");
        assert!(message.contains("loopback"), "{url}: {message}");
        assert!(
            message.contains("mcp.request_url_policy.allow_loopback"),
            "{message}"
        );
    }
    let message = refused_message(&server, "http://10.1.2.3/mcp").await;
    assert!(message.contains("private"), "{message}");
    assert_eq!(hits.load(Ordering::SeqCst), 0);

    // The same address is fine for an admin's own registration (the embedded default).
    let response = server
        .send(
            reqwest::Method::POST,
            "/api/mcp/servers",
            Some(json!({"name": "local", "transport": "streamable_http", "url": format!("http://127.0.0.1:{port}/mcp")})),
        )
        .await;
    assert_eq!(response.status(), 201, "{}", response.text().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_can_open_loopback_for_request_servers() {
    let (port, hits) = canary().await;
    let mut options = ChatOptions::default();
    options.mcp.request_url_policy.allow_networks = vec!["127.0.0.1/32".to_owned()];
    let server = ChatServer::start(options).await;
    let events = server
        .ask_and_wait(json!({"message": "hi", "mcp_servers": [{"name": "local", "url": format!("http://127.0.0.1:{port}/mcp")}]}))
        .await;
    // Allowed: the connection is made (the canary is no MCP server, so it is unavailable).
    assert!(hits.load(Ordering::SeqCst) >= 1, "{events:#?}");
    let unavailable = events[0]["unavailable_servers"].as_array().unwrap();
    assert_eq!(unavailable[0]["server"], "local", "{events:#?}");
    assert_ne!(unavailable[0]["code"], "url_policy", "{events:#?}");
    // Other loopback addresses stay closed.
    let message = refused_message(&server, &format!("http://127.0.0.2:{port}/mcp")).await;
    assert!(message.contains("loopback"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_server_whose_name_resolves_to_loopback_is_refused_at_connect() {
    let (port, hits) = canary().await;
    let lookup = StaticHostLookup {
        hosts: [(
            "rebind.example".to_owned(),
            vec!["127.0.0.1".parse().unwrap()],
        )]
        .into_iter()
        .collect(),
    };
    let server = ChatServer::start(ChatOptions {
        host_lookup: Some(Arc::new(lookup)),
        ..ChatOptions::default()
    })
    .await;
    let events = server
        .ask_and_wait(json!({"message": "hi", "mcp_servers": [
            {"name": "http", "url": format!("http://rebind.example:{port}/mcp")},
            {"name": "sse", "url": format!("http://rebind.example:{port}/sse"), "transport": "sse"},
            {"name": "ws", "url": format!("ws://rebind.example:{port}/ws"), "transport": "websocket"},
        ]}))
        .await;
    assert_eq!(events.last().unwrap()["type"], "done");
    let unavailable = events[0]["unavailable_servers"].as_array().unwrap();
    let mut names: Vec<&str> = unavailable
        .iter()
        .map(|server| {
            assert_eq!(server["code"], "url_policy", "{server}");
            assert!(
                server["message"].as_str().unwrap().contains("loopback"),
                "{server}"
            );
            server["server"].as_str().unwrap()
        })
        .collect();
    names.sort();
    assert_eq!(names, ["http", "sse", "ws"], "{events:#?}");
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the canary was reached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_own_kg_endpoint_stays_reachable_when_loopback_is_closed() {
    let (port, hits) = canary().await;
    let mut options = ChatOptions::default();
    options.mcp.url_policy.allow_loopback = false;
    let server = ChatServer::start(options).await;
    server.registry.set_own_listener(server.address);

    // Through the chat (the user's token forwarded to our own /mcp).
    let events = server
        .ask_and_wait(json!({"message": "What's the schema version?"}))
        .await;
    assert_eq!(
        events[0]["unavailable_servers"],
        json!([]),
        "{:#?}",
        events[0]
    );
    let completed: Vec<&Value> = of_type(&events, "mcp_tool")
        .into_iter()
        .filter(|event| event["status"] == "completed")
        .collect();
    assert_eq!(completed.len(), 1, "{events:#?}");
    assert_eq!(completed[0]["server"], "kg");

    // Through the registry: testing `kg` and editing it.
    let servers: Value = server
        .send(reqwest::Method::GET, "/api/mcp/servers", None)
        .await
        .json()
        .await
        .unwrap();
    let kg = servers["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["name"] == "kg")
        .unwrap()
        .clone();
    let kg_id = kg["id"].as_str().unwrap();
    let tested: Value = server
        .send(
            reqwest::Method::POST,
            &format!("/api/mcp/servers/{kg_id}/test"),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(tested["ok"], true, "{tested}");
    let response = server
        .send(
            reqwest::Method::PATCH,
            &format!("/api/mcp/servers/{kg_id}"),
            Some(json!({"version": kg["version"], "timeout_ms": 20000})),
        )
        .await;
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());

    // Any other loopback address is refused, registered or not.
    let response = server
        .send(
            reqwest::Method::POST,
            "/api/mcp/servers",
            Some(json!({"name": "local", "transport": "streamable_http", "url": format!("http://127.0.0.1:{port}/mcp")})),
        )
        .await;
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("loopback"),
        "{body}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}
