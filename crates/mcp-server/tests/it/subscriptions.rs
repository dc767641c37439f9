//! `resources/subscribe`: a schema change reaches subscribed sessions as
//! `notifications/resources/updated`.

use crate::{DEFAULT_WORKSPACE, SCHEMA_READER, TestServer};
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

    let graph = server
        .graphs
        .workspace(&DEFAULT_WORKSPACE.into())
        .await
        .unwrap();
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
