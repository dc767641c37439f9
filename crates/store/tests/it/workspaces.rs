//! Workspaces and users.

use crate::harness::{Backend, TestStore, store_test};
use switchboard_core::{UserId, WorkspaceId};
use switchboard_store::{StoreError, UserRole};

store_test!(
    workspaces_are_created_found_and_listed,
    workspace_names_are_unique_and_validated,
    users_are_unique_per_workspace,
    users_need_an_existing_workspace,
    ping_answers,
    writes_are_durable_when_acknowledged,
);

async fn workspaces_are_created_found_and_listed(test: TestStore) {
    let store = &test.store;
    assert!(store.list_workspaces().await.unwrap().is_empty());
    let first = store.create_workspace("acme").await.unwrap();
    let second = store.create_workspace("globex").await.unwrap();
    assert_eq!(store.get_workspace(&first.id).await.unwrap(), first);
    assert_eq!(
        store.find_workspace_by_name("globex").await.unwrap(),
        Some(second.clone())
    );
    assert_eq!(store.find_workspace_by_name("initech").await.unwrap(), None);
    assert_eq!(store.list_workspaces().await.unwrap(), vec![first, second]);
    let missing = store
        .get_workspace(&WorkspaceId::generate())
        .await
        .unwrap_err();
    assert!(
        matches!(
            missing,
            StoreError::NotFound {
                entity: "workspace"
            }
        ),
        "{missing:?}"
    );
}

async fn workspace_names_are_unique_and_validated(test: TestStore) {
    let store = &test.store;
    store.create_workspace("acme").await.unwrap();
    let duplicate = store.create_workspace("acme").await.unwrap_err();
    assert!(
        matches!(
            duplicate,
            StoreError::UniqueViolation {
                entity: "workspace",
                field: "name"
            }
        ),
        "{duplicate:?}"
    );
    let invalid = store.create_workspace("has space").await.unwrap_err();
    assert!(
        matches!(invalid, StoreError::InvalidInput { field: "name", .. }),
        "{invalid:?}"
    );
}

async fn users_are_unique_per_workspace(test: TestStore) {
    let store = &test.store;
    let acme = store.create_workspace("acme").await.unwrap();
    let globex = store.create_workspace("globex").await.unwrap();
    let alice = store
        .create_user(&acme.id, "alice", UserRole::Owner)
        .await
        .unwrap();
    let bob = store
        .create_user(&acme.id, "bob", UserRole::Member)
        .await
        .unwrap();
    // The same name is fine in another workspace.
    store
        .create_user(&globex.id, "alice", UserRole::Member)
        .await
        .unwrap();
    let duplicate = store
        .create_user(&acme.id, "alice", UserRole::Member)
        .await
        .unwrap_err();
    assert!(
        matches!(
            duplicate,
            StoreError::UniqueViolation {
                entity: "user",
                field: "name"
            }
        ),
        "{duplicate:?}"
    );
    assert_eq!(store.get_user(&acme.id, &alice.id).await.unwrap(), alice);
    assert_eq!(store.list_users(&acme.id).await.unwrap(), vec![alice, bob]);
    let missing = store
        .get_user(&acme.id, &UserId::generate())
        .await
        .unwrap_err();
    assert!(missing.is_not_found());
}

async fn users_need_an_existing_workspace(test: TestStore) {
    let error = test
        .store
        .create_user(&WorkspaceId::generate(), "alice", UserRole::Owner)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::NotFound {
                entity: "workspace"
            }
        ),
        "{error:?}"
    );
}

async fn ping_answers(test: TestStore) {
    test.store.ping().await.unwrap();
    assert_eq!(test.store.known_migration_versions()[0], 1);
    // Migrating again is a no-op.
    test.store.migrate().await.unwrap();
}

async fn writes_are_durable_when_acknowledged(test: TestStore) {
    let settings = test.store.durability_settings().await.unwrap();
    let expected: &[(&str, &str)] = match test.backend {
        Backend::Sqlite => &[
            ("journal_mode", "wal"),
            ("synchronous", "full"),
            ("foreign_keys", "on"),
        ],
        Backend::Postgres => &[("synchronous_commit", "on"), ("fsync", "on")],
    };
    for (name, value) in expected {
        assert_eq!(
            settings.get(name).map(String::as_str),
            Some(*value),
            "{settings:?}"
        );
    }
}
