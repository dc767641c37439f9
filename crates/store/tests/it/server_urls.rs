//! The one server URL Switchboard maintains itself (its own endpoint's, rewritten by each start):
//! recording it moves neither `version` nor `updated_at`, and a configuration edit made with the
//! version read before keeps it unless the edit names another URL.

use crate::fixtures::{http_server_with_secrets, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use switchboard_core::ServerId;
use switchboard_store::{ServerPatch, StoreError};

store_test!(a_recorded_url_moves_no_version_and_survives_an_edit_of_something_else,);

async fn a_recorded_url_moves_no_version_and_survives_an_edit_of_something_else(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let read = store
        .create_server(&workspace.id, http_server_with_secrets("kg", "key", "h"))
        .await
        .unwrap();
    let moved = "http://127.0.0.1:8123/mcp";
    store
        .record_server_url(&workspace.id, &read.id, moved)
        .await
        .unwrap();
    let stored = store.get_server(&workspace.id, &read.id).await.unwrap();
    assert_eq!(stored.url.as_deref(), Some(moved));
    assert_eq!(
        (stored.version, stored.updated_at),
        (read.version, read.updated_at)
    );

    // An edit made with the version read before: no conflict, and the recorded URL stays.
    let edited = store
        .update_server(
            &workspace.id,
            &read.id,
            read.version,
            ServerPatch {
                is_active: Some(false),
                ..ServerPatch::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(edited.version, read.version + 1);
    let stored = store.get_server(&workspace.id, &read.id).await.unwrap();
    assert_eq!(stored.url.as_deref(), Some(moved));
    assert!(!stored.is_active);

    // An edit that names a URL writes it, and the version still guards edits.
    let elsewhere = "https://elsewhere.example.com/mcp";
    store
        .update_server(
            &workspace.id,
            &read.id,
            edited.version,
            ServerPatch {
                url: Some(Some(elsewhere.to_owned())),
                ..ServerPatch::default()
            },
        )
        .await
        .unwrap();
    let stored = store.get_server(&workspace.id, &read.id).await.unwrap();
    assert_eq!(stored.url.as_deref(), Some(elsewhere));
    let stale = store
        .update_server(
            &workspace.id,
            &read.id,
            edited.version,
            ServerPatch::default(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(stale, StoreError::VersionConflict { .. }),
        "{stale:?}"
    );

    let missing = store
        .record_server_url(&workspace.id, &ServerId::generate(), moved)
        .await
        .unwrap_err();
    assert!(
        matches!(missing, StoreError::NotFound { .. }),
        "{missing:?}"
    );
}
