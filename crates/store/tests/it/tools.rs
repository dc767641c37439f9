//! Tool catalogs of registered servers.

use crate::fixtures::{stdio_server, tool, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use serde_json::json;
use switchboard_core::ServerId;
use switchboard_store::{StoreError, definition_hash};

store_test!(
    sync_adds_updates_and_removes_tools_and_keeps_enable_switches,
    tool_catalog_input_is_checked,
    server_deletion_removes_its_tools,
);

async fn sync_adds_updates_and_removes_tools_and_keeps_enable_switches(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let server = store
        .create_server(&workspace.id, stdio_server("kg"))
        .await
        .unwrap();
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
    let server = store
        .create_server(&workspace.id, stdio_server("kg"))
        .await
        .unwrap();
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
    let server = store
        .create_server(&workspace.id, stdio_server("kg"))
        .await
        .unwrap();
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
