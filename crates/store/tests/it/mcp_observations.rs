//! The MCP client's observations of upstreams: recorded, replaced, listed per workspace,
//! refused for unknown servers, isolated between workspaces and removed with the server.

use crate::fixtures::{add_stdio_server, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use switchboard_core::ServerId;
use switchboard_store::{McpObservation, StoreError};

store_test!(
    observations_are_recorded_replaced_and_listed,
    observations_belong_to_a_server_of_the_workspace,
);

async fn observations_are_recorded_replaced_and_listed(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let first = add_stdio_server(store, &workspace.id, "first").await;
    let second = add_stdio_server(store, &workspace.id, "second").await;
    assert_eq!(
        store
            .get_mcp_observation(&workspace.id, &first.id)
            .await
            .unwrap(),
        None
    );

    let connected = McpObservation {
        protocol_version: Some("2025-06-18".into()),
        server_name: Some("mcp-servers/everything".into()),
        server_version: Some("2.0.0".into()),
        error_code: None,
    };
    store
        .record_mcp_observation(&workspace.id, &first.id, &connected)
        .await
        .unwrap();
    let stored = store
        .get_mcp_observation(&workspace.id, &first.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.observation, connected);
    assert_eq!(stored.server_id, first.id);

    let refused = McpObservation {
        error_code: Some("needs_auth".into()),
        ..connected.clone()
    };
    store
        .record_mcp_observation(&workspace.id, &first.id, &refused)
        .await
        .unwrap();
    store
        .record_mcp_observation(&workspace.id, &second.id, &McpObservation::default())
        .await
        .unwrap();
    let replaced = store
        .get_mcp_observation(&workspace.id, &first.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        replaced.observation.error_code.as_deref(),
        Some("needs_auth")
    );
    assert!(replaced.observed_at >= stored.observed_at);

    let listed = store.list_mcp_observations(&workspace.id).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(
        listed.iter().any(|record| record.server_id == second.id
            && record.observation == McpObservation::default())
    );

    store.delete_server(&workspace.id, &first.id).await.unwrap();
    assert_eq!(
        store
            .get_mcp_observation(&workspace.id, &first.id)
            .await
            .unwrap(),
        None
    );
}

async fn observations_belong_to_a_server_of_the_workspace(test: TestStore) {
    let store = &test.store;
    let (acme, _) = workspace_with_owner(store, "acme").await;
    let (globex, _) = workspace_with_owner(store, "globex").await;
    let server = add_stdio_server(store, &acme.id, "files").await;
    let observation = McpObservation {
        protocol_version: Some("2025-11-25".into()),
        ..McpObservation::default()
    };
    let error = store
        .record_mcp_observation(&globex.id, &server.id, &observation)
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::NotFound { entity: "server" }),
        "{error:?}"
    );
    let error = store
        .record_mcp_observation(&acme.id, &ServerId::from("missing"), &observation)
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::NotFound { entity: "server" }),
        "{error:?}"
    );
    store
        .record_mcp_observation(&acme.id, &server.id, &observation)
        .await
        .unwrap();
    assert_eq!(
        store
            .get_mcp_observation(&globex.id, &server.id)
            .await
            .unwrap(),
        None
    );
    assert!(
        store
            .list_mcp_observations(&globex.id)
            .await
            .unwrap()
            .is_empty()
    );
}
