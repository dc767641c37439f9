//! Tool catalogs of registered servers.

use crate::fixtures::{add_stdio_server, tool, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use serde_json::json;
use switchboard_core::{AppResource, ServerId};
use switchboard_store::{StoreError, definition_hash};

store_test!(
    sync_adds_updates_and_removes_tools_and_keeps_enable_switches,
    tool_catalog_input_is_checked,
    server_deletion_removes_its_tools,
    app_meta_and_app_resources_are_kept_per_server_and_replaced_by_a_sync,
);

async fn sync_adds_updates_and_removes_tools_and_keeps_enable_switches(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "kg").await;
    assert!(
        store
            .list_server_tools(&workspace.id, &server.id)
            .await
            .unwrap()
            .is_empty()
    );

    let mut search = tool("search", "Search the graph");
    search.annotations = Some(json!({"readOnlyHint": true}));
    search.output_schema = Some(json!({"type": "object"}));
    let first = store
        .replace_server_tools(
            &workspace.id,
            &server.id,
            &[search.clone(), tool("delete", "Delete")],
        )
        .await
        .unwrap();
    assert_eq!(
        first.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["delete", "search"]
    );
    assert!(first.iter().all(|t| t.is_enabled));
    assert_eq!(first[1].definition(), search);
    assert_eq!(first[1].definition_hash, definition_hash(&search));

    let disabled = store
        .set_tool_enabled(&workspace.id, &server.id, "delete", false)
        .await
        .unwrap();
    assert!(!disabled.is_enabled);

    // Next sync: `search` changed, `delete` unchanged, `create` new, nothing vanished yet.
    let changed_search = tool("search", "Search the graph, now with filters");
    let second = store
        .replace_server_tools(
            &workspace.id,
            &server.id,
            &[
                changed_search.clone(),
                tool("delete", "Delete"),
                tool("create", "Create"),
            ],
        )
        .await
        .unwrap();
    let by_name = |name: &str| second.iter().find(|t| t.name == name).unwrap().clone();
    assert!(!by_name("delete").is_enabled, "a sync keeps the switch");
    assert_eq!(
        by_name("delete").updated_at,
        disabled.updated_at,
        "unchanged tools are not rewritten"
    );
    assert_eq!(
        by_name("search").definition_hash,
        definition_hash(&changed_search)
    );
    assert_ne!(by_name("search").definition_hash, first[1].definition_hash);
    assert_eq!(by_name("search").created_at, first[1].created_at);
    assert!(by_name("create").is_enabled);

    // A sync without `delete` removes it.
    let third = store
        .replace_server_tools(
            &workspace.id,
            &server.id,
            std::slice::from_ref(&changed_search),
        )
        .await
        .unwrap();
    assert_eq!(third.len(), 1);
    let gone = store
        .get_tool(&workspace.id, &server.id, "delete")
        .await
        .unwrap_err();
    assert!(
        matches!(gone, StoreError::NotFound { entity: "tool" }),
        "{gone:?}"
    );
    assert_eq!(
        store.list_workspace_tools(&workspace.id).await.unwrap(),
        third
    );
}

async fn tool_catalog_input_is_checked(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "kg").await;
    let twice = store
        .replace_server_tools(&workspace.id, &server.id, &[tool("a", ""), tool("a", "")])
        .await
        .unwrap_err();
    assert!(
        matches!(twice, StoreError::InvalidInput { field: "tools", .. }),
        "{twice:?}"
    );
    let missing = store
        .replace_server_tools(&workspace.id, &ServerId::generate(), &[tool("a", "")])
        .await
        .unwrap_err();
    assert!(
        matches!(missing, StoreError::NotFound { entity: "server" }),
        "{missing:?}"
    );
    let listing = store
        .list_server_tools(&workspace.id, &ServerId::generate())
        .await
        .unwrap_err();
    assert!(listing.is_not_found());
    let switch = store
        .set_tool_enabled(&workspace.id, &server.id, "nope", false)
        .await
        .unwrap_err();
    assert!(
        matches!(switch, StoreError::NotFound { entity: "tool" }),
        "{switch:?}"
    );
}

async fn server_deletion_removes_its_tools(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "kg").await;
    store
        .replace_server_tools(&workspace.id, &server.id, &[tool("a", "")])
        .await
        .unwrap();
    store
        .delete_server(&workspace.id, &server.id)
        .await
        .unwrap();
    assert!(
        store
            .list_workspace_tools(&workspace.id)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn app_meta_and_app_resources_are_kept_per_server_and_replaced_by_a_sync(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let (other_workspace, _) = workspace_with_owner(store, "other").await;
    let server = add_stdio_server(store, &workspace.id, "charts").await;
    let app = AppResource::new(
        "ui://charts/app.html".to_owned(),
        "text/html;profile=mcp-app".to_owned(),
        "<html>\0chart</html>".to_owned(),
        Some(json!({"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}})),
    );
    let mut show = tool("show", "Show a chart");
    show.meta = serde_json::from_value(json!({"ui": {
        "resourceUri": app.uri, "visibility": ["model", "app"], "resourceSha256": app.sha256,
    }}))
    .unwrap();
    store
        .replace_server_app_resources(&workspace.id, &server.id, std::slice::from_ref(&app))
        .await
        .unwrap();
    let stored = store
        .replace_server_tools(&workspace.id, &server.id, std::slice::from_ref(&show))
        .await
        .unwrap();
    assert_eq!(stored[0].meta, show.meta);
    assert_eq!(stored[0].definition_hash, definition_hash(&show));

    let read = store
        .get_app_resource(&workspace.id, &server.id, &app.uri)
        .await
        .unwrap();
    assert_eq!(
        read.html, "<html>\u{FFFD}chart</html>",
        "U+0000 stored as U+FFFD"
    );
    assert_eq!(
        (read.sha256.as_str(), &read.meta),
        (app.sha256.as_str(), &app.meta)
    );
    let elsewhere = store
        .get_app_resource(&other_workspace.id, &server.id, &app.uri)
        .await
        .unwrap_err();
    assert!(
        matches!(elsewhere, StoreError::NotFound { .. }),
        "{elsewhere:?}"
    );

    store
        .replace_server_app_resources(&workspace.id, &server.id, &[])
        .await
        .unwrap();
    assert!(
        store
            .get_app_resource(&workspace.id, &server.id, &app.uri)
            .await
            .is_err()
    );
}
