//! First start on an empty store.

use crate::harness::{TestStore, store_test};
use switchboard_core::{Scope, ScopeSet};
use switchboard_store::{DEFAULT_WORKSPACE_NAME, StoreError, UserRole};

store_test!(
    bootstrap_creates_default_workspace_owner_and_admin_token_once,
    bootstrap_uses_the_operator_token_when_given,
    bootstrap_does_nothing_on_a_store_with_workspaces,
    concurrent_bootstraps_create_exactly_one_workspace,
);

async fn bootstrap_creates_default_workspace_owner_and_admin_token_once(test: TestStore) {
    let store = &test.store;
    let created = store
        .bootstrap_default(None)
        .await
        .unwrap()
        .expect("first start bootstraps");
    assert_eq!(created.workspace.name, DEFAULT_WORKSPACE_NAME);
    assert_eq!(created.owner.role, UserRole::Owner);
    assert_eq!(created.token.scopes, ScopeSet::all());
    let principal = store
        .authenticate(created.plaintext.expose())
        .await
        .unwrap()
        .expect("bootstrap token works");
    assert_eq!(principal.workspace_id, created.workspace.id);
    assert_eq!(principal.user_id, created.owner.id);
    assert!(Scope::ALL.into_iter().all(|scope| principal.allows(scope)));
    assert!(store.bootstrap_default(None).await.unwrap().is_none());
    assert_eq!(store.list_workspaces().await.unwrap().len(), 1);
    assert_eq!(
        store
            .list_tokens(&created.workspace.id)
            .await
            .unwrap()
            .len(),
        1
    );
}

async fn bootstrap_uses_the_operator_token_when_given(test: TestStore) {
    let store = &test.store;
    let chosen = "automation-admin-token-42";
    let created = store
        .bootstrap_default(Some(chosen.to_owned()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(created.plaintext.expose(), chosen);
    assert!(
        store
            .authenticate(chosen)
            .await
            .unwrap()
            .unwrap()
            .is_admin()
    );
    let too_short = test
        .store
        .bootstrap_default(Some("abc".into()))
        .await
        .unwrap_err();
    assert!(
        matches!(too_short, StoreError::InvalidInput { field: "token", .. }),
        "{too_short:?}"
    );
}

async fn bootstrap_does_nothing_on_a_store_with_workspaces(test: TestStore) {
    let store = &test.store;
    store.create_workspace("acme").await.unwrap();
    assert!(store.bootstrap_default(None).await.unwrap().is_none());
    assert_eq!(
        store
            .find_workspace_by_name(DEFAULT_WORKSPACE_NAME)
            .await
            .unwrap(),
        None
    );
}

async fn concurrent_bootstraps_create_exactly_one_workspace(test: TestStore) {
    let attempts: Vec<_> = (0..4)
        .map(|_| {
            let store = test.store.clone();
            tokio::spawn(async move { store.bootstrap_default(None).await })
        })
        .collect();
    let mut created = 0;
    for attempt in attempts {
        if attempt.await.unwrap().unwrap().is_some() {
            created += 1;
        }
    }
    assert_eq!(created, 1);
    assert_eq!(test.store.list_workspaces().await.unwrap().len(), 1);
}
