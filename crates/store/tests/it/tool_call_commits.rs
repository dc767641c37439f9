//! How a tool call's records are committed: a call the rules allowed is created `dispatched`
//! in one commit, and concurrent calls' writes share commits (SQLite's commit queue) while each
//! caller still gets its own outcome — one that fails is rolled back alone. A call's final
//! state, audit row and tool message are one commit: all of them or none.

use crate::fixtures::{new_tool_call, start_conversation, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use switchboard_core::ChatRole;
use switchboard_core::{ConversationId, MessageId, ServerId, ToolCallId, ToolCallState};
use switchboard_store::{
    AuditSearch, MessageStatus, NewAuditEvent, NewMessage, StoreError, ToolCallOutcome,
};

store_test!(
    a_rule_allowed_call_is_created_dispatched,
    concurrent_calls_share_commits_and_fail_alone,
    a_final_state_and_its_tool_message_are_one_commit,
    advancing_from_a_copy_checks_the_stored_state,
);

async fn a_rule_allowed_call_is_created_dispatched(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let id = ToolCallId::generate();
    let call = store
        .create_dispatched_tool_call(
            &workspace.id,
            id.clone(),
            new_tool_call(&conversation.id, None, "call_1"),
        )
        .await
        .unwrap();
    assert_eq!(call.id, id);
    assert_eq!(call.state, ToolCallState::Dispatched);
    assert!(call.decided_at.is_some() && call.dispatched_at == call.decided_at);
    assert_eq!(store.get_tool_call(&workspace.id, &id).await.unwrap(), call);
    let orphan = store
        .create_dispatched_tool_call(
            &workspace.id,
            ToolCallId::generate(),
            new_tool_call(&ConversationId::generate(), None, "call_2"),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            orphan,
            StoreError::NotFound {
                entity: "conversation"
            }
        ),
        "{orphan:?}"
    );
    // Each parent is checked (in one statement), and the missing one is named.
    let mut unknown_message = new_tool_call(&conversation.id, None, "call_4");
    unknown_message.message_id = Some(MessageId::generate());
    let mut unknown_server = new_tool_call(&conversation.id, None, "call_5");
    unknown_server.server_id = Some(ServerId::generate());
    for (new_call, missing) in [(unknown_message, "message"), (unknown_server, "server")] {
        let error = store
            .create_dispatched_tool_call(&workspace.id, ToolCallId::generate(), new_call)
            .await
            .unwrap_err();
        assert!(
            matches!(error, StoreError::NotFound { entity } if entity == missing),
            "{missing}: {error:?}"
        );
    }
    let taken = store
        .create_tool_call_with_id(
            &workspace.id,
            id,
            new_tool_call(&conversation.id, None, "call_3"),
        )
        .await
        .unwrap_err();
    assert!(!matches!(taken, StoreError::NotFound { .. }), "{taken:?}");
}

/// 24 calls at once, every third naming a conversation that does not exist: those fail with
/// `NotFound` and leave nothing; the others are created, dispatched and completed with their
/// audit rows, whatever batches they shared.
async fn concurrent_calls_share_commits_and_fail_alone(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let tasks: Vec<_> = (0..24)
        .map(|index| {
            let store = store.clone();
            let workspace_id = workspace.id.clone();
            let conversation_id = if index % 3 == 0 {
                ConversationId::generate()
            } else {
                conversation.id.clone()
            };
            tokio::spawn(async move {
                let call = store
                    .create_dispatched_tool_call(
                        &workspace_id,
                        ToolCallId::generate(),
                        new_tool_call(&conversation_id, None, &format!("call_{index}")),
                    )
                    .await?;
                let audit = NewAuditEvent {
                    actor: "test".to_owned(),
                    action: "tool_call.completed".to_owned(),
                    target: Some(call.id.as_str().to_owned()),
                    ..NewAuditEvent::default()
                };
                store
                    .advance_tool_call(
                        &workspace_id,
                        &call.id,
                        &[ToolCallState::Completed],
                        ToolCallOutcome::default(),
                        Some(audit),
                    )
                    .await
            })
        })
        .collect();
    let mut completed = Vec::new();
    for (index, task) in tasks.into_iter().enumerate() {
        match task.await.unwrap() {
            Ok(call) => {
                assert_ne!(index % 3, 0, "call {index} should have failed");
                completed.push(call);
            }
            Err(StoreError::NotFound { entity }) => {
                assert_eq!(index % 3, 0, "call {index} failed");
                assert_eq!(entity, "conversation");
            }
            Err(other) => panic!("call {index}: {other:?}"),
        }
    }
    assert_eq!(completed.len(), 16);
    let stored = store
        .list_tool_calls(&workspace.id, &conversation.id)
        .await
        .unwrap();
    assert_eq!(stored.len(), 16);
    assert!(
        stored
            .iter()
            .all(|call| call.state == ToolCallState::Completed)
    );
    let audit = store
        .search_audit(&workspace.id, AuditSearch::default())
        .await
        .unwrap();
    let audited: Vec<_> = audit
        .iter()
        .filter(|row| row.action == "tool_call.completed")
        .filter_map(|row| row.target.clone())
        .collect();
    assert_eq!(audited.len(), 16);
    for call in &completed {
        assert!(
            audited.contains(&call.id.as_str().to_owned()),
            "{}",
            call.id
        );
    }
}

fn tool_message(text: &str) -> NewMessage {
    NewMessage {
        role: ChatRole::Tool,
        content: text.to_owned(),
        tool_calls: Vec::new(),
        tool_call_id: Some("call_1".to_owned()),
        metadata: serde_json::json!({}),
        status: MessageStatus::Complete,
    }
}

fn audit_row(action: &str) -> NewAuditEvent {
    NewAuditEvent {
        actor: "test".to_owned(),
        action: action.to_owned(),
        ..NewAuditEvent::default()
    }
}

/// The final state, the audit row and the message land together; a call someone else already
/// finished (a conflict) gets none of them, and a message its conversation refuses (metadata
/// that is not an object) leaves the state where it was.
async fn a_final_state_and_its_tool_message_are_one_commit(test: TestStore) {
    let store = &test.store;
    let (workspace, conversation, call) = dispatched_call(store).await;
    let (finished, message) = store
        .finish_tool_call_with_message(
            &workspace.id,
            &call.id,
            Some(ToolCallState::Completed),
            ToolCallOutcome::default(),
            Some(audit_row("tool_call.completed")),
            tool_message("42"),
        )
        .await
        .unwrap();
    assert_eq!(finished.state, ToolCallState::Completed);
    assert_eq!(message.seq, 1);
    let again = store
        .finish_tool_call_with_message(
            &workspace.id,
            &call.id,
            Some(ToolCallState::Failed),
            ToolCallOutcome::default(),
            Some(audit_row("tool_call.failed")),
            tool_message("again"),
        )
        .await
        .unwrap_err();
    assert!(matches!(again, StoreError::Conflict(_)), "{again:?}");
    let mut refused = tool_message("bad");
    refused.metadata = serde_json::json!([1]);
    let second = store
        .create_dispatched_tool_call(
            &workspace.id,
            ToolCallId::generate(),
            new_tool_call(&conversation.id, None, "call_2"),
        )
        .await
        .unwrap();
    let invalid = store
        .finish_tool_call_with_message(
            &workspace.id,
            &second.id,
            Some(ToolCallState::Completed),
            ToolCallOutcome::default(),
            Some(audit_row("tool_call.completed")),
            refused,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(invalid, StoreError::InvalidInput { .. }),
        "{invalid:?}"
    );
    let messages = store
        .list_messages(&workspace.id, &conversation.id)
        .await
        .unwrap();
    assert_eq!(
        messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>(),
        ["42"]
    );
    let states: Vec<_> = store
        .list_tool_calls(&workspace.id, &conversation.id)
        .await
        .unwrap()
        .into_iter()
        .map(|call| call.state)
        .collect();
    assert_eq!(
        states,
        [ToolCallState::Completed, ToolCallState::Dispatched]
    );
    let audited = store
        .search_audit(&workspace.id, AuditSearch::default())
        .await
        .unwrap();
    assert_eq!(
        audited
            .iter()
            .filter(|row| row.action.starts_with("tool_call."))
            .count(),
        1
    );
}

/// `advance_tool_call_from` moves a current copy without reading it, decides on the stored row
/// when the copy is stale (a copy still `proposed` of a call now `dispatched` completes it), and
/// is a conflict when someone else finished the call first — nothing written, the audit row
/// neither.
async fn advancing_from_a_copy_checks_the_stored_state(test: TestStore) {
    let store = &test.store;
    let (workspace, conversation, current) = dispatched_call(store).await;
    let done = store
        .advance_tool_call_from(
            &current,
            &[ToolCallState::Completed],
            ToolCallOutcome {
                result: Some(serde_json::json!({"answer": 42})),
                error: None,
            },
            Some(audit_row("tool_call.completed")),
        )
        .await
        .unwrap();
    assert_eq!(done.state, ToolCallState::Completed);
    assert_eq!(
        store
            .get_tool_call(&workspace.id, &current.id)
            .await
            .unwrap(),
        done
    );
    // `current` is now stale: someone else finished the call.
    let late = store
        .advance_tool_call_from(
            &current,
            &[ToolCallState::Failed],
            ToolCallOutcome::default(),
            Some(audit_row("tool_call.failed")),
        )
        .await
        .unwrap_err();
    assert!(matches!(late, StoreError::Conflict(_)), "{late:?}");
    assert_eq!(
        store
            .get_tool_call(&workspace.id, &current.id)
            .await
            .unwrap(),
        done
    );
    let proposed = store
        .create_tool_call_with_id(
            &workspace.id,
            ToolCallId::generate(),
            new_tool_call(&conversation.id, None, "call_2"),
        )
        .await
        .unwrap();
    store
        .advance_tool_call(
            &workspace.id,
            &proposed.id,
            &[ToolCallState::Approved, ToolCallState::Dispatched],
            ToolCallOutcome::default(),
            None,
        )
        .await
        .unwrap();
    let completed = store
        .advance_tool_call_from(
            &proposed,
            &[ToolCallState::Completed],
            ToolCallOutcome::default(),
            Some(audit_row("tool_call.completed")),
        )
        .await
        .unwrap();
    assert_eq!(completed.state, ToolCallState::Completed);
    assert!(completed.dispatched_at.is_some(), "{completed:?}");
    let audited = store
        .search_audit(&workspace.id, AuditSearch::default())
        .await
        .unwrap();
    let actions: Vec<_> = audited.iter().map(|row| row.action.as_str()).collect();
    assert_eq!(actions, ["tool_call.completed", "tool_call.completed"]);
}

/// A workspace, a conversation of its owner and a call in it, created `dispatched`.
async fn dispatched_call(
    store: &switchboard_store::Store,
) -> (
    switchboard_store::WorkspaceRecord,
    switchboard_store::ConversationRecord,
    switchboard_store::ToolCallRecord,
) {
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let call = store
        .create_dispatched_tool_call(
            &workspace.id,
            ToolCallId::generate(),
            new_tool_call(&conversation.id, None, "call_1"),
        )
        .await
        .unwrap();
    (workspace, conversation, call)
}
