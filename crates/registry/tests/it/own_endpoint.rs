//! Our own knowledge-graph endpoint across starts: each start points the marked server at its
//! own listener and keeps its service token working, writing only what differs — a restart at
//! the same address writes nothing, one at another address (another replica, a new port)
//! rewrites the URL without moving the row's version, so an admin's edit made with the version
//! read before either start still succeeds.

use crate::support::{free_port, quick_config, registry_with, store};
use serde_json::json;
use std::net::SocketAddr;
use switchboard_core::TransportKind;
use switchboard_registry::{OWN_ENDPOINT_MARKER, ServerRegistry};
use switchboard_store::{
    NewServer, ServerConnectionConfig, ServerPatch, ServerRecord, ServerSecrets, Store,
};
use url::Url;

/// One process start: the registry learns its listener and prepares our own endpoint.
async fn start(store: &Store, port: u16) -> ServerRegistry {
    let registry = registry_with(store, quick_config());
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    registry.set_own_listener(address);
    let url = Url::parse(&format!("http://{address}/mcp")).unwrap();
    assert_eq!(registry.prepare_own_endpoints(&url).await.unwrap(), 1);
    registry
}

async fn stored(store: &Store, record: &ServerRecord) -> (ServerRecord, Option<String>) {
    let server = store
        .get_server(&record.workspace_id, &record.id)
        .await
        .unwrap();
    let token = store
        .server_secrets(&record.workspace_id, &record.id)
        .await
        .unwrap()
        .api_key;
    (server, token)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_rewrites_only_what_differs_and_never_makes_an_admins_edit_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let (store, workspace) = store(&dir).await;
    let (first_port, second_port) = (free_port(), free_port());
    assert_ne!(first_port, second_port);
    let mut connection = ServerConnectionConfig::default();
    connection
        .extra
        .insert(OWN_ENDPOINT_MARKER.into(), json!(true));
    let kg = store
        .create_server(
            &workspace,
            NewServer {
                name: "kg".into(),
                transport: TransportKind::StreamableHttp,
                url: Some(format!("http://127.0.0.1:{first_port}/mcp")),
                command: None,
                args: vec![],
                connection,
                secrets: ServerSecrets::default(),
                is_active: true,
            },
        )
        .await
        .unwrap();

    // The first start issues the service token (a configuration change of its own).
    start(&store, first_port).await.shutdown().await;
    // An admin opens the server now: this is the version their edit will carry.
    let (read, token) = stored(&store, &kg).await;
    assert!(token.is_some());

    // A restart at the same address writes nothing.
    start(&store, first_port).await.shutdown().await;
    let (after, token_after) = stored(&store, &kg).await;
    assert_eq!(
        (after.version, after.updated_at, &after.url, &token_after),
        (read.version, read.updated_at, &read.url, &token)
    );

    // A start at another address rewrites the URL, and only the URL.
    start(&store, second_port).await.shutdown().await;
    let (after, token_after) = stored(&store, &kg).await;
    let second_url = format!("http://127.0.0.1:{second_port}/mcp");
    assert_eq!(after.url.as_deref(), Some(second_url.as_str()));
    assert_eq!(
        (after.version, after.updated_at, &token_after),
        (read.version, read.updated_at, &token)
    );

    // The admin's edit, with the version read before both restarts: no conflict, and the
    // URL the last start wrote stays.
    let mut edited_connection = read.connection.clone();
    edited_connection.timeout_ms = Some(20_000);
    let edited = store
        .update_server(
            &workspace,
            &kg.id,
            read.version,
            ServerPatch {
                connection: Some(edited_connection),
                ..ServerPatch::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(edited.version, read.version + 1);
    let (after, _) = stored(&store, &kg).await;
    assert_eq!(after.connection.timeout_ms, Some(20_000));
    assert_eq!(after.url.as_deref(), Some(second_url.as_str()));
    assert!(ServerRegistry::is_marked_own_endpoint(&after));
}
