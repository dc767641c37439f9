//! Conversations and their messages.

use crate::fixtures::{new_conversation, plain_bud, start_conversation, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use serde_json::json;
use switchboard_core::{BudId, ChatMessage, ConversationId, ToolCallRequest, UserId};
use switchboard_store::{
    ConversationPatch, MessageStatus, MessageUpdate, ModelChoice, NewConversation, NewMessage,
    StoreError, UserRole,
};

store_test!(
    conversations_are_created_listed_changed_and_deleted,
    conversation_owner_and_bud_must_be_in_the_workspace,
    messages_keep_their_order_and_round_trip_as_history,
    concurrent_appends_get_distinct_gap_free_positions,
    a_streamed_message_is_completed_in_place,
    concurrent_metadata_edits_of_one_message_all_stay,
);

async fn conversations_are_created_listed_changed_and_deleted(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let bob = store
        .create_user(&workspace.id, "bob", UserRole::Member)
        .await
        .unwrap();
    let first = start_conversation(store, &workspace.id, &alice).await;
    let second = start_conversation(store, &workspace.id, &alice).await;
    let bobs = start_conversation(store, &workspace.id, &bob).await;
    assert_eq!(
        store
            .get_conversation(&workspace.id, &first.id)
            .await
            .unwrap(),
        first
    );
    // Activity moves a conversation to the top.
    store
        .append_message(
            &workspace.id,
            &first.id,
            NewMessage::from_chat(ChatMessage::user("hi")),
        )
        .await
        .unwrap();
    let alices: Vec<ConversationId> = store
        .list_conversations(&workspace.id, Some(&alice.id))
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(alices, vec![first.id.clone(), second.id.clone()]);
    assert_eq!(
        store
            .list_conversations(&workspace.id, None)
            .await
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        store
            .list_conversations(&workspace.id, Some(&bob.id))
            .await
            .unwrap()[0]
            .id,
        bobs.id
    );
    let patch = ConversationPatch {
        title: Some("Q4 planning".into()),
        mcp_config_overrides: Some(Some(json!({"disabled_servers": ["web"]}))),
        model_choice: Some(ModelChoice {
            provider: Some("claude".into()),
            model: Some("claude-sonnet-4-5".into()),
        }),
    };
    let updated = store
        .update_conversation(&workspace.id, &second.id, patch)
        .await
        .unwrap();
    assert_eq!(
        store
            .get_conversation(&workspace.id, &second.id)
            .await
            .unwrap(),
        updated
    );
    assert_eq!(updated.model_choice.provider.as_deref(), Some("claude"));
    assert_eq!(
        updated.mcp_config_overrides,
        Some(json!({"disabled_servers": ["web"]}))
    );
    let not_object = ConversationPatch {
        mcp_config_overrides: Some(Some(json!("x"))),
        ..ConversationPatch::default()
    };
    let error = store
        .update_conversation(&workspace.id, &second.id, not_object)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::InvalidInput {
                field: "mcp_config_overrides",
                ..
            }
        ),
        "{error:?}"
    );

    store
        .delete_conversation(&workspace.id, &first.id)
        .await
        .unwrap();
    assert!(
        store
            .get_conversation(&workspace.id, &first.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .list_messages(&workspace.id, &first.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    let again = store
        .delete_conversation(&workspace.id, &first.id)
        .await
        .unwrap_err();
    assert!(
        matches!(
            again,
            StoreError::NotFound {
                entity: "conversation"
            }
        ),
        "{again:?}"
    );
}

async fn conversation_owner_and_bud_must_be_in_the_workspace(test: TestStore) {
    let store = &test.store;
    let (acme, alice) = workspace_with_owner(store, "acme").await;
    let (globex, mallory) = workspace_with_owner(store, "globex").await;
    let globex_bud = store
        .create_bud(&globex.id, plain_bud("Theirs"))
        .await
        .unwrap();
    let foreign_bud = NewConversation {
        bud_id: Some(globex_bud.id.clone()),
        ..new_conversation(&alice)
    };
    let error = store
        .create_conversation(&acme.id, foreign_bud)
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::NotFound { entity: "bud" }),
        "{error:?}"
    );
    let unknown_bud = NewConversation {
        bud_id: Some(BudId::generate()),
        ..new_conversation(&alice)
    };
    let error = store
        .create_conversation(&acme.id, unknown_bud)
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::NotFound { entity: "bud" }),
        "{error:?}"
    );
    let error = store
        .create_conversation(&acme.id, new_conversation(&mallory))
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::NotFound { entity: "user" }),
        "{error:?}"
    );
    let stranger = NewConversation {
        owner_user_id: UserId::generate(),
        ..new_conversation(&alice)
    };
    let error = store
        .create_conversation(&acme.id, stranger)
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::NotFound { entity: "user" }),
        "{error:?}"
    );
    assert!(
        store
            .list_conversations(&acme.id, None)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn messages_keep_their_order_and_round_trip_as_history(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let history = vec![
        ChatMessage::system("You are helpful."),
        ChatMessage::user("What's on the roadmap?"),
        ChatMessage::assistant(
            "",
            vec![ToolCallRequest {
                id: "call_1".into(),
                name: "kg__search".into(),
                arguments: r#"{"q":"roadmap"}"#.into(),
            }],
        ),
        ChatMessage::tool_result("call_1", r#"{"items":[]}"#),
        ChatMessage::assistant("Nothing yet.", Vec::new()),
    ];
    for message in &history {
        store
            .append_message(
                &workspace.id,
                &conversation.id,
                NewMessage::from_chat(message.clone()),
            )
            .await
            .unwrap();
    }
    let stored = store
        .list_messages(&workspace.id, &conversation.id)
        .await
        .unwrap();
    assert_eq!(
        stored.iter().map(|m| m.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert_eq!(
        stored
            .iter()
            .map(|m| m.to_chat_message())
            .collect::<Vec<_>>(),
        history
    );
    assert!(
        stored
            .iter()
            .all(|m| m.status == MessageStatus::Complete && m.metadata == json!({}))
    );
    assert_eq!(
        store
            .get_message(&workspace.id, &stored[2].id)
            .await
            .unwrap(),
        stored[2]
    );
    let error = store
        .append_message(
            &workspace.id,
            &ConversationId::generate(),
            NewMessage::from_chat(ChatMessage::user("x")),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::NotFound {
                entity: "conversation"
            }
        ),
        "{error:?}"
    );
    let bad_metadata = NewMessage {
        metadata: json!(1),
        ..NewMessage::from_chat(ChatMessage::user("x"))
    };
    let error = store
        .append_message(&workspace.id, &conversation.id, bad_metadata)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::InvalidInput {
                field: "metadata",
                ..
            }
        ),
        "{error:?}"
    );
}

async fn concurrent_appends_get_distinct_gap_free_positions(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let writers: Vec<_> = (0..16)
        .map(|index| {
            let store = store.clone();
            let workspace_id = workspace.id.clone();
            let conversation_id = conversation.id.clone();
            tokio::spawn(async move {
                store
                    .append_message(
                        &workspace_id,
                        &conversation_id,
                        NewMessage::from_chat(ChatMessage::user(format!("m{index}"))),
                    )
                    .await
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap().unwrap();
    }
    let stored = store
        .list_messages(&workspace.id, &conversation.id)
        .await
        .unwrap();
    assert_eq!(
        stored.iter().map(|m| m.seq).collect::<Vec<_>>(),
        (1..=16).collect::<Vec<i64>>()
    );
}

async fn a_streamed_message_is_completed_in_place(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let partial = store
        .append_message(
            &workspace.id,
            &conversation.id,
            NewMessage {
                status: MessageStatus::Partial,
                ..NewMessage::from_chat(ChatMessage::assistant("The road", Vec::new()))
            },
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .get_message(&workspace.id, &partial.id)
            .await
            .unwrap()
            .status,
        MessageStatus::Partial
    );
    let complete = store
        .update_message(
            &workspace.id,
            &partial.id,
            MessageUpdate {
                content: Some("The roadmap is empty.".into()),
                metadata: Some(json!({"model": "offline", "citations": []})),
                status: Some(MessageStatus::Complete),
                ..MessageUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(complete.seq, partial.seq);
    assert_eq!(
        store.get_message(&workspace.id, &partial.id).await.unwrap(),
        complete
    );
    assert_eq!(
        store
            .list_messages(&workspace.id, &conversation.id)
            .await
            .unwrap(),
        vec![complete]
    );
}

/// Twelve writers each set their own key of one message's metadata at once (as watchers of two
/// attachments of one question do): every key is there afterwards. An edit that changes
/// nothing writes nothing, and another workspace's message is `NotFound`.
async fn concurrent_metadata_edits_of_one_message_all_stay(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let (elsewhere, _) = workspace_with_owner(store, "globex").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let question = store
        .append_message(
            &workspace.id,
            &conversation.id,
            NewMessage {
                metadata: json!({"kept": true}),
                ..NewMessage::from_chat(ChatMessage::user("What changed?"))
            },
        )
        .await
        .unwrap();
    let writers: Vec<_> = (0..12)
        .map(|writer| {
            let store = store.clone();
            let (workspace_id, message_id) = (workspace.id.clone(), question.id.clone());
            tokio::spawn(async move {
                store
                    .edit_message_metadata(&workspace_id, &message_id, |stored| {
                        let mut metadata = stored.clone();
                        metadata[format!("writer_{writer}")] = json!(writer);
                        Some(metadata)
                    })
                    .await
            })
        })
        .collect();
    for writer in writers {
        assert!(writer.await.unwrap().unwrap());
    }
    let stored = store
        .get_message(&workspace.id, &question.id)
        .await
        .unwrap();
    assert_eq!(stored.metadata["kept"], true);
    for writer in 0..12 {
        assert_eq!(
            stored.metadata[format!("writer_{writer}")],
            writer,
            "{}",
            stored.metadata
        );
    }

    let unchanged = store
        .edit_message_metadata(&workspace.id, &question.id, |stored| Some(stored.clone()))
        .await
        .unwrap();
    assert!(!unchanged);
    assert_eq!(
        store
            .get_message(&workspace.id, &question.id)
            .await
            .unwrap()
            .updated_at,
        stored.updated_at
    );
    let refused = store
        .edit_message_metadata(&workspace.id, &question.id, |_| Some(json!([1])))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, StoreError::InvalidInput { .. }),
        "{refused}"
    );
    let foreign = store
        .edit_message_metadata(&elsewhere.id, &question.id, |_| Some(json!({})))
        .await
        .unwrap_err();
    assert!(foreign.is_not_found(), "{foreign}");
}
