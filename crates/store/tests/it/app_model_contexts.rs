//! MCP Apps' model contexts: one per tool call, replaced by each update, listed per
//! conversation, scoped by workspace, gone with their conversation.

use crate::fixtures::{new_tool_call, start_conversation, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use serde_json::json;
use switchboard_store::StoreError;

store_test!(an_apps_context_is_replaced_listed_scoped_and_deleted_with_its_conversation);

async fn an_apps_context_is_replaced_listed_scoped_and_deleted_with_its_conversation(
    test: TestStore,
) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let (other_workspace, _) = workspace_with_owner(store, "other").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let call = store
        .create_tool_call(
            &workspace.id,
            new_tool_call(&conversation.id, None, "call_1"),
        )
        .await
        .unwrap();
    let first = json!({"content": [{"type": "text", "text": "blue\u{0}"}]});
    let stored = store
        .set_app_model_context(&workspace.id, &conversation.id, &call.id, &first)
        .await
        .unwrap();
    assert_eq!(stored.context["content"][0]["text"], "blue\u{fffd}");
    let second = json!({"content": [], "structuredContent": {"colour": "green"}});
    store
        .set_app_model_context(&workspace.id, &conversation.id, &call.id, &second)
        .await
        .unwrap();
    let listed = store
        .list_app_model_contexts(&workspace.id, &conversation.id)
        .await
        .unwrap();
    assert_eq!(listed.len(), 1, "an update replaces the last one");
    assert_eq!(listed[0].context, second);
    assert_eq!(listed[0].tool_call_id, call.id);

    // Another workspace sees nothing and can write nothing.
    assert!(
        store
            .list_app_model_contexts(&other_workspace.id, &conversation.id)
            .await
            .unwrap()
            .is_empty()
    );
    let refused = store
        .set_app_model_context(&other_workspace.id, &conversation.id, &call.id, &first)
        .await;
    assert!(
        matches!(refused, Err(StoreError::NotFound { .. })),
        "{refused:?}"
    );

    store
        .delete_conversation(&workspace.id, &conversation.id)
        .await
        .unwrap();
    assert!(
        store
            .list_app_model_contexts(&workspace.id, &conversation.id)
            .await
            .unwrap()
            .is_empty()
    );
}
