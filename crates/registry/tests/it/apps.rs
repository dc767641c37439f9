//! MCP Apps (extension `io.modelcontextprotocol/ui`) against the official example server
//! `@modelcontextprotocol/server-basic-vanillajs` over stdio: a sync reads the `ui://` resource
//! its tool names, stores it, and writes its hash into the tool's definition (so a changed app
//! is a changed definition hash).

use crate::support::{basic_app_js, node, quick_config, registry_with, store};
use std::collections::BTreeMap;
use switchboard_core::{TransportKind, UI_RESOURCE_MIME_TYPE};
use switchboard_store::{NewServer, ServerConnectionConfig, ServerSecrets, definition_hash};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_reads_and_pins_the_ui_resource_of_an_app_tool() {
    let dir = tempfile::tempdir().unwrap();
    let (store, workspace) = store(&dir).await;
    let registry = registry_with(&store, quick_config());
    let server = store
        .create_server(
            &workspace,
            NewServer {
                name: "basic-app".to_owned(),
                transport: TransportKind::Stdio,
                url: None,
                command: Some(node()),
                args: vec![basic_app_js().to_str().unwrap().into(), "--stdio".into()],
                connection: ServerConnectionConfig::default(),
                secrets: ServerSecrets {
                    env: BTreeMap::new(),
                    ..ServerSecrets::default()
                },
                is_active: true,
            },
        )
        .await
        .unwrap();
    let report = registry.sync_record(&server).await;
    assert!(report.error.is_none(), "{:?}", report.error);

    let tools = store
        .list_server_tools(&workspace, &server.id)
        .await
        .unwrap();
    let get_time = tools.iter().find(|tool| tool.name == "get-time").unwrap();
    let ui = get_time
        .meta
        .ui
        .as_ref()
        .expect("the tool's _meta.ui is kept");
    assert_eq!(
        ui.resource_uri.as_deref(),
        Some("ui://get-time/mcp-app.html")
    );
    let sha256 = ui
        .resource_sha256
        .clone()
        .expect("the app's hash is pinned");
    assert_eq!(
        get_time.definition_hash,
        definition_hash(&get_time.definition()),
        "the stored hash covers the _meta read back"
    );
    let mut without_app = get_time.definition();
    without_app.meta = Default::default();
    assert_ne!(definition_hash(&without_app), get_time.definition_hash);

    let app = store
        .get_app_resource(&workspace, &server.id, "ui://get-time/mcp-app.html")
        .await
        .unwrap();
    assert_eq!(app.sha256, sha256);
    assert!(app.mime_type.starts_with(UI_RESOURCE_MIME_TYPE));
    assert!(
        app.html.contains("<html") || app.html.contains("<!doctype"),
        "{}",
        &app.html[..200.min(app.html.len())]
    );
    assert!(
        store
            .get_app_resource(&workspace, &server.id, "ui://other/app.html")
            .await
            .is_err()
    );
    // The model still sees the tool (no visibility restriction).
    let usable = registry.usable_tools(&server).await.unwrap();
    assert!(usable.iter().any(|tool| tool.name == "get-time"));
    registry.shutdown().await;
}
