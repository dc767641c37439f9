//! Tool approval policies.

use crate::fixtures::{add_stdio_server, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use switchboard_core::{ApprovalPolicy, ServerId};
use switchboard_store::{NewToolPolicy, StoreError};

store_test!(
    policies_are_set_replaced_listed_and_deleted,
    policies_need_a_server_of_the_workspace
);

async fn policies_are_set_replaced_listed_and_deleted(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let kg = add_stdio_server(store, &workspace.id, "kg").await;
    let web = add_stdio_server(store, &workspace.id, "web").await;
    assert_eq!(
        store
            .get_tool_policy(&workspace.id, &kg.id, "search")
            .await
            .unwrap(),
        None
    );
    let allow = store
        .set_tool_policy(
            &workspace.id,
            NewToolPolicy {
                server_id: kg.id.clone(),
                tool_name: "search".into(),
                policy: ApprovalPolicy::AlwaysAllow,
                pinned_definition_hash: Some("abc123".into()),
                updated_by: Some(alice.id.clone()),
            },
        )
        .await
        .unwrap();
    assert_eq!(allow.policy, ApprovalPolicy::AlwaysAllow);
    assert_eq!(
        store
            .get_tool_policy(&workspace.id, &kg.id, "search")
            .await
            .unwrap(),
        Some(allow.clone())
    );
    // Setting again replaces, keeping the creation time.
    let deny = store
        .set_tool_policy(
            &workspace.id,
            NewToolPolicy {
                server_id: kg.id.clone(),
                tool_name: "search".into(),
                policy: ApprovalPolicy::AlwaysDeny,
                pinned_definition_hash: None,
                updated_by: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(deny.policy, ApprovalPolicy::AlwaysDeny);
    assert_eq!(deny.pinned_definition_hash, None);
    assert_eq!(deny.created_at, allow.created_at);
    store
        .set_tool_policy(
            &workspace.id,
            NewToolPolicy {
                server_id: web.id.clone(),
                tool_name: "fetch".into(),
                policy: ApprovalPolicy::AskUser,
                pinned_definition_hash: None,
                updated_by: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .list_tool_policies(&workspace.id, None)
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        store
            .list_tool_policies(&workspace.id, Some(&kg.id))
            .await
            .unwrap(),
        vec![deny]
    );
    store
        .delete_tool_policy(&workspace.id, &kg.id, "search")
        .await
        .unwrap();
    assert_eq!(
        store
            .get_tool_policy(&workspace.id, &kg.id, "search")
            .await
            .unwrap(),
        None
    );
    let again = store
        .delete_tool_policy(&workspace.id, &kg.id, "search")
        .await
        .unwrap_err();
    assert!(
        matches!(
            again,
            StoreError::NotFound {
                entity: "tool policy"
            }
        ),
        "{again:?}"
    );
    // Deleting a server deletes its policies.
    store.delete_server(&workspace.id, &web.id).await.unwrap();
    assert!(
        store
            .list_tool_policies(&workspace.id, None)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn policies_need_a_server_of_the_workspace(test: TestStore) {
    let store = &test.store;
    let (acme, _) = workspace_with_owner(store, "acme").await;
    let (globex, _) = workspace_with_owner(store, "globex").await;
    let theirs = add_stdio_server(store, &globex.id, "kg").await;
    for server_id in [theirs.id.clone(), ServerId::generate()] {
        let error = store
            .set_tool_policy(
                &acme.id,
                NewToolPolicy {
                    server_id,
                    tool_name: "search".into(),
                    policy: ApprovalPolicy::AlwaysAllow,
                    pinned_definition_hash: None,
                    updated_by: None,
                },
            )
            .await
            .unwrap_err();
        assert!(
            matches!(error, StoreError::NotFound { entity: "server" }),
            "{error:?}"
        );
    }
}
