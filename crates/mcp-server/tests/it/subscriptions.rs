//! `resources/subscribe`: a schema change reaches subscribed sessions as
//! `notifications/resources/updated`.

use crate::{SCHEMA_READER, TestServer};
use rmcp::model::{ResourceUpdatedNotificationParam, SubscribeRequestParams};
use rmcp::service::{NotificationContext, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient};
use std::time::Duration;
use switchboard_kg::{PropertyDefinition, PropertyType, SchemaEdit};
use tokio::sync::mpsc;

struct UpdateCollector(mpsc::UnboundedSender<String>);

impl ClientHandler for UpdateCollector {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe is the 2025-11-25 way, which this test covers
async fn schema_changes_notify_subscribers_of_the_touched_resources() {
    let server = TestServer::start().await;
    let (sender, mut updates) = mpsc::unbounded_channel();
    let config =
        StreamableHttpClientTransportConfig::with_uri(server.url()).auth_header(SCHEMA_READER);
    let client = UpdateCollector(sender)
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap();
    for uri in ["kg://types/Person", "kg://types/Team"] {
        client
            .subscribe(SubscribeRequestParams::new(uri))
            .await
            .unwrap();
    }
    // Give the client's standalone GET stream a moment to open.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let graph = server.default_graph().await;
    let mut person = graph.read().schema().object_type("Person").unwrap().clone();
    person.properties.push(PropertyDefinition::new(
        "phone",
        PropertyType::String,
        "Desk phone",
    ));
    graph
        .edit_schema(
            SchemaEdit::UpsertObjectType {
                object_type: person,
            },
            None,
        )
        .await
        .unwrap();

    let uri = tokio::time::timeout(Duration::from_secs(5), updates.recv())
        .await
        .expect("notified")
        .unwrap();
    assert_eq!(uri, "kg://types/Person");
    assert!(
        tokio::time::timeout(Duration::from_millis(300), updates.recv())
            .await
            .is_err(),
        "Team did not change"
    );
    client.cancel().await.unwrap();
}

/// Reads SSE `data:` JSON frames from a streaming response until `count` arrived.
async fn frames(response: &mut reqwest::Response, count: usize) -> Vec<serde_json::Value> {
    let mut buffer = String::new();
    let mut found = Vec::new();
    while found.len() < count {
        let chunk = tokio::time::timeout(Duration::from_secs(5), response.chunk())
            .await
            .expect("a frame within 5 s")
            .unwrap()
            .expect("the stream stays open");
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            if let Some(data) = line.trim().strip_prefix("data:")
                && let Ok(frame) = serde_json::from_str(data.trim())
            {
                found.push(frame);
            }
        }
    }
    found
}

#[tokio::test]
async fn listen_streams_report_updates_of_the_named_resources() {
    let server = TestServer::start().await;
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let listen = serde_json::json!({"jsonrpc": "2.0", "id": 42, "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": {"resourceSubscriptions": ["kg://types/Team", "kg://schema"], "toolsListChanged": true}}});
    let mut stream = server
        .post(
            Some(SCHEMA_READER),
            &listen,
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "subscriptions/listen"),
            ],
        )
        .await;
    assert_eq!(stream.status(), 200);
    let ack = frames(&mut stream, 1).await.remove(0);
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        serde_json::json!(["kg://types/Team", "kg://schema"])
    );
    assert!(
        ack["params"]["notifications"]
            .get("toolsListChanged")
            .is_none(),
        "tools never change: not accepted"
    );

    let graph = server.default_graph().await;
    let mut team = graph.read().schema().object_type("Team").unwrap().clone();
    team.description = "A group of people".into();
    graph
        .edit_schema(SchemaEdit::UpsertObjectType { object_type: team }, None)
        .await
        .unwrap();
    let mut updates: Vec<String> = frames(&mut stream, 2)
        .await
        .iter()
        .map(|frame| {
            assert_eq!(frame["method"], "notifications/resources/updated");
            assert_eq!(
                frame["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
                42
            );
            frame["params"]["uri"].as_str().unwrap().to_owned()
        })
        .collect();
    updates.sort();
    assert_eq!(updates, vec!["kg://schema", "kg://types/Team"]);
}
