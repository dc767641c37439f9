//! Workspace isolation: with workspace A's id, no call sees, changes or deletes B's rows.
//! Every area adds its rows to `Tenant` and its probes to the test below.

use crate::fixtures::{http_server_with_secrets, new_token, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use switchboard_core::WorkspaceId;
use switchboard_store::{
    IssuedToken, ServerPatch, ServerRecord, ServerStatus, Store, UserRecord, WorkspaceRecord,
};

store_test!(a_workspace_never_sees_another_workspaces_rows);

/// One workspace with a row in every area.
struct Tenant {
    workspace: WorkspaceRecord,
    user: UserRecord,
    token: IssuedToken,
    server: ServerRecord,
}

async fn tenant(store: &Store, name: &str) -> Tenant {
    let (workspace, user) = workspace_with_owner(store, name).await;
    let token = store
        .create_token(&workspace.id, new_token(&user, "admin"))
        .await
        .unwrap();
    let server = store
        .create_server(
            &workspace.id,
            http_server_with_secrets("shared-name", &format!("{name}-key"), "h"),
        )
        .await
        .unwrap();
    Tenant {
        workspace,
        user,
        token,
        server,
    }
}

async fn a_workspace_never_sees_another_workspaces_rows(test: TestStore) {
    let store = &test.store;
    let a = tenant(store, "alpha").await;
    let b = tenant(store, "beta").await;
    let a_id: &WorkspaceId = &a.workspace.id;

    // users
    assert_eq!(store.list_users(a_id).await.unwrap(), vec![a.user.clone()]);
    assert!(
        store
            .get_user(a_id, &b.user.id)
            .await
            .unwrap_err()
            .is_not_found()
    );

    // tokens
    let a_tokens = store.list_tokens(a_id).await.unwrap();
    assert_eq!(a_tokens, vec![a.token.record.clone()]);
    assert!(
        store
            .get_token(a_id, &b.token.record.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .revoke_token(a_id, &b.token.record.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    let b_principal = store
        .authenticate(b.token.plaintext.expose())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        b_principal.workspace_id, b.workspace.id,
        "B's token still works, for B only"
    );

    // servers
    assert_eq!(
        store
            .list_servers(a_id)
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect::<Vec<_>>(),
        vec![a.server.id.clone()]
    );
    assert!(
        store
            .get_server(a_id, &b.server.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert_eq!(
        store
            .find_server_by_name(a_id, "shared-name")
            .await
            .unwrap()
            .unwrap()
            .id,
        a.server.id
    );
    assert!(
        store
            .server_secrets(a_id, &b.server.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    let patch = ServerPatch {
        is_active: Some(false),
        ..ServerPatch::default()
    };
    assert!(
        store
            .update_server(a_id, &b.server.id, 1, patch)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .record_server_status(a_id, &b.server.id, ServerStatus::Error, Some("x"))
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .delete_server(a_id, &b.server.id)
            .await
            .unwrap_err()
            .is_not_found()
    );

    // B is untouched by all of the above.
    assert_eq!(
        store
            .get_server(&b.workspace.id, &b.server.id)
            .await
            .unwrap(),
        b.server
    );
    assert_eq!(
        store
            .server_secrets(&b.workspace.id, &b.server.id)
            .await
            .unwrap()
            .api_key
            .as_deref(),
        Some("beta-key")
    );
    assert_eq!(
        store
            .get_token(&b.workspace.id, &b.token.record.id)
            .await
            .unwrap()
            .revoked_at,
        None
    );
}
