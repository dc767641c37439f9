//! Registered MCP servers: CRUD, optimistic locking, secrets, status and sync records.

use crate::fixtures::{
    add_stdio_server, http_server_with_secrets, stdio_server, workspace_with_owner,
};
use crate::harness::{TestStore, store_test};
use chrono::Utc;
use serde_json::json;
use switchboard_core::{ServerId, SessionScope, TransportKind};
use switchboard_store::{
    ServerConnectionConfig, ServerPatch, ServerStatus, ServerSync, StoreError, SyncStatus,
};

store_test!(
    servers_are_created_read_listed_and_deleted,
    server_names_are_unique_per_workspace,
    server_configuration_is_validated_by_field,
    stale_versions_are_refused_with_a_version_conflict,
    concurrent_updates_at_one_version_let_exactly_one_win,
    status_and_sync_reports_leave_the_version_alone,
);

async fn servers_are_created_read_listed_and_deleted(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let everything = add_stdio_server(store, &workspace.id, "everything").await;
    assert_eq!(everything.version, 1);
    assert_eq!(everything.status, ServerStatus::Disconnected);
    assert_eq!(everything.sync_status, SyncStatus::NeverSynced);
    assert_eq!(
        everything.args,
        vec!["-y", "@modelcontextprotocol/server-everything"]
    );
    let remote = store
        .create_server(
            &workspace.id,
            http_server_with_secrets("remote", "key", "header"),
        )
        .await
        .unwrap();
    assert_eq!(remote.connection.timeout_ms, Some(5_000));
    assert_eq!(
        store
            .get_server(&workspace.id, &everything.id)
            .await
            .unwrap(),
        everything
    );
    assert_eq!(
        store
            .find_server_by_name(&workspace.id, "remote")
            .await
            .unwrap(),
        Some(remote.clone())
    );
    assert_eq!(
        store.list_servers(&workspace.id).await.unwrap(),
        vec![everything.clone(), remote.clone()]
    );
    store
        .delete_server(&workspace.id, &everything.id)
        .await
        .unwrap();
    assert!(
        store
            .get_server(&workspace.id, &everything.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    let again = store
        .delete_server(&workspace.id, &everything.id)
        .await
        .unwrap_err();
    assert!(
        matches!(again, StoreError::NotFound { entity: "server" }),
        "{again:?}"
    );
    assert_eq!(
        store.list_servers(&workspace.id).await.unwrap(),
        vec![remote]
    );
}

async fn server_names_are_unique_per_workspace(test: TestStore) {
    let store = &test.store;
    let (acme, _) = workspace_with_owner(store, "acme").await;
    let (globex, _) = workspace_with_owner(store, "globex").await;
    add_stdio_server(store, &acme.id, "github").await;
    add_stdio_server(store, &globex.id, "github").await;
    let duplicate = store
        .create_server(&acme.id, stdio_server("github"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            duplicate,
            StoreError::UniqueViolation {
                entity: "server",
                field: "name"
            }
        ),
        "{duplicate:?}"
    );
    // Renaming onto a taken name is refused the same way.
    let other = add_stdio_server(store, &acme.id, "other").await;
    let rename = ServerPatch {
        name: Some("github".into()),
        ..ServerPatch::default()
    };
    let error = store
        .update_server(&acme.id, &other.id, 1, rename)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::UniqueViolation {
                entity: "server",
                field: "name"
            }
        ),
        "{error:?}"
    );
}

async fn server_configuration_is_validated_by_field(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let mut no_url = stdio_server("remote");
    no_url.transport = TransportKind::Sse;
    no_url.command = None;
    let error = store
        .create_server(&workspace.id, no_url)
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::InvalidInput { field: "url", .. }),
        "{error:?}"
    );
    let error = store
        .create_server(&workspace.id, stdio_server("bad name"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::InvalidInput { field: "name", .. }),
        "{error:?}"
    );
    let server = add_stdio_server(store, &workspace.id, "local").await;
    let to_websocket_without_url = ServerPatch {
        transport: Some(TransportKind::Websocket),
        ..ServerPatch::default()
    };
    let error = store
        .update_server(&workspace.id, &server.id, 1, to_websocket_without_url)
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::InvalidInput { field: "url", .. }),
        "{error:?}"
    );
    let to_websocket = ServerPatch {
        transport: Some(TransportKind::Websocket),
        url: Some(Some("ws://127.0.0.1:9000/mcp".into())),
        command: Some(None),
        args: Some(Vec::new()),
        ..ServerPatch::default()
    };
    let updated = store
        .update_server(&workspace.id, &server.id, 1, to_websocket)
        .await
        .unwrap();
    assert_eq!(updated.transport, TransportKind::Websocket);
    assert_eq!(updated.command, None);
    assert_eq!(
        store.get_server(&workspace.id, &server.id).await.unwrap(),
        updated
    );
}

async fn stale_versions_are_refused_with_a_version_conflict(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "local").await;
    let patch = ServerPatch {
        args: Some(vec!["--verbose".into()]),
        connection: Some(ServerConnectionConfig {
            session_scope: SessionScope::PerConversation,
            ..ServerConnectionConfig::default()
        }),
        is_active: Some(false),
        ..ServerPatch::default()
    };
    let updated = store
        .update_server(&workspace.id, &server.id, server.version, patch.clone())
        .await
        .unwrap();
    assert_eq!(updated.version, 2);
    assert!(!updated.is_active);
    assert_eq!(
        updated.connection.session_scope,
        SessionScope::PerConversation
    );
    assert_eq!(
        store.get_server(&workspace.id, &server.id).await.unwrap(),
        updated
    );
    let stale = store
        .update_server(&workspace.id, &server.id, server.version, patch)
        .await
        .unwrap_err();
    match stale {
        StoreError::VersionConflict {
            entity: "server",
            expected: 1,
            current: 2,
        } => {}
        other => panic!("expected a version conflict, got {other:?}"),
    }
    assert_eq!(
        store.get_server(&workspace.id, &server.id).await.unwrap(),
        updated
    );
    let missing = store
        .update_server(
            &workspace.id,
            &ServerId::generate(),
            1,
            ServerPatch::default(),
        )
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing:?}");
}

async fn concurrent_updates_at_one_version_let_exactly_one_win(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "local").await;
    let writers: Vec<_> = (0..6)
        .map(|writer| {
            let store = store.clone();
            let workspace_id = workspace.id.clone();
            let server_id = server.id.clone();
            tokio::spawn(async move {
                let patch = ServerPatch {
                    args: Some(vec![format!("--writer={writer}")]),
                    ..ServerPatch::default()
                };
                store
                    .update_server(&workspace_id, &server_id, 1, patch)
                    .await
            })
        })
        .collect();
    let mut winners = Vec::new();
    for writer in writers {
        match writer.await.unwrap() {
            Ok(record) => winners.push(record),
            Err(StoreError::VersionConflict {
                expected: 1,
                current: 2,
                ..
            }) => {}
            Err(other) => panic!("unexpected error: {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one writer wins");
    let stored = store.get_server(&workspace.id, &server.id).await.unwrap();
    assert_eq!(stored.version, 2);
    assert_eq!(stored.args, winners[0].args);
}

async fn status_and_sync_reports_leave_the_version_alone(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "local").await;
    store
        .record_server_status(
            &workspace.id,
            &server.id,
            ServerStatus::Error,
            Some("spawn failed: npx not found"),
        )
        .await
        .unwrap();
    let tools = json!([{"name": "echo", "inputSchema": {"type": "object"}}]);
    let synced_at = Utc::now();
    store
        .record_server_sync(
            &workspace.id,
            &server.id,
            ServerSync {
                sync_status: SyncStatus::Synced,
                tools: Some(tools.clone()),
                resources: Some(json!([])),
                prompts: None,
                synced_at,
                error: None,
            },
        )
        .await
        .unwrap();
    let after_sync = store.get_server(&workspace.id, &server.id).await.unwrap();
    assert_eq!(after_sync.version, 1);
    assert_eq!(after_sync.status, ServerStatus::Error);
    assert_eq!(after_sync.sync_status, SyncStatus::Synced);
    assert_eq!(after_sync.tools_cache, Some(tools.clone()));
    assert_eq!(after_sync.resources_cache, Some(json!([])));
    assert_eq!(after_sync.prompts_cache, None);
    let recorded = after_sync.last_synced_at.expect("synced time recorded");
    assert!((recorded - synced_at).num_microseconds().unwrap().abs() < 1);
    // A failed sync keeps the previous caches and sync time, and records the error.
    store
        .record_server_sync(
            &workspace.id,
            &server.id,
            ServerSync {
                sync_status: SyncStatus::Failed,
                tools: None,
                resources: None,
                prompts: None,
                synced_at: Utc::now(),
                error: Some("timeout".into()),
            },
        )
        .await
        .unwrap();
    let after_failure = store.get_server(&workspace.id, &server.id).await.unwrap();
    assert_eq!(after_failure.sync_status, SyncStatus::Failed);
    assert_eq!(after_failure.tools_cache, Some(tools));
    assert_eq!(after_failure.last_synced_at, Some(recorded));
    assert_eq!(after_failure.last_error.as_deref(), Some("timeout"));
    assert_eq!(after_failure.version, 1);
    // The version still guards configuration edits as before.
    store
        .update_server(
            &workspace.id,
            &server.id,
            1,
            ServerPatch {
                is_active: Some(false),
                ..ServerPatch::default()
            },
        )
        .await
        .unwrap();
    let missing = store
        .record_server_status(
            &workspace.id,
            &ServerId::generate(),
            ServerStatus::Connected,
            None,
        )
        .await
        .unwrap_err();
    assert!(missing.is_not_found());
}
