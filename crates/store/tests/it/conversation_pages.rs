//! Chat area: paging one user's conversations.

use crate::fixtures::{start_conversation, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use switchboard_core::{ChatMessage, ConversationId};
use switchboard_store::{ConversationCursor, NewMessage, UserRole};

store_test!(conversations_page_newest_first_with_a_stable_cursor);

async fn conversations_page_newest_first_with_a_stable_cursor(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let bob = store
        .create_user(&workspace.id, "bob", UserRole::Member)
        .await
        .unwrap();
    let mut created = Vec::new();
    for _ in 0..5 {
        created.push(start_conversation(store, &workspace.id, &alice).await);
    }
    start_conversation(store, &workspace.id, &bob).await;
    // Activity moves the oldest conversation to the top.
    store
        .append_message(
            &workspace.id,
            &created[0].id,
            NewMessage::from_chat(ChatMessage::user("hi")),
        )
        .await
        .unwrap();
    let ids = |page: &[switchboard_store::ConversationRecord]| -> Vec<ConversationId> {
        page.iter()
            .map(|conversation| conversation.id.clone())
            .collect()
    };
    let first = store
        .list_conversations_page(&workspace.id, &alice.id, 2, None)
        .await
        .unwrap();
    assert_eq!(ids(&first), [created[0].id.clone(), created[4].id.clone()]);
    let cursor = ConversationCursor::after(first.last().unwrap());
    let second = store
        .list_conversations_page(&workspace.id, &alice.id, 2, Some(&cursor))
        .await
        .unwrap();
    assert_eq!(ids(&second), [created[3].id.clone(), created[2].id.clone()]);
    let cursor = ConversationCursor::after(second.last().unwrap());
    let third = store
        .list_conversations_page(&workspace.id, &alice.id, 2, Some(&cursor))
        .await
        .unwrap();
    assert_eq!(ids(&third), [created[1].id.clone()]);
    let bobs = store
        .list_conversations_page(&workspace.id, &bob.id, 10, None)
        .await
        .unwrap();
    assert_eq!(bobs.len(), 1);
    let (other_workspace, _) = workspace_with_owner(store, "globex").await;
    assert!(
        store
            .list_conversations_page(&other_workspace.id, &alice.id, 10, None)
            .await
            .unwrap()
            .is_empty()
    );
}
