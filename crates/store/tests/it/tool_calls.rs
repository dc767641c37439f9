//! Tool-call records and their state machine.

use crate::fixtures::{add_stdio_server, new_tool_call, start_conversation, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use serde_json::json;
use switchboard_core::{ChatMessage, ConversationId, MessageId, ServerId, ToolCallState};
use switchboard_store::{
    AuditSearch, NewAuditEvent, NewMessage, NewToolCall, StoreError, ToolCallOutcome,
};

store_test!(
    a_call_walks_the_happy_path_with_timings,
    forbidden_transitions_are_conflicts,
    only_one_of_two_racing_dispatches_wins,
    call_parents_must_be_in_the_workspace,
    deleting_the_server_keeps_the_history,
    restart_recovery_marks_in_flight_calls,
    steps_and_the_audit_row_are_one_commit,
);

async fn a_call_walks_the_happy_path_with_timings(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "kg").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let message = store
        .append_message(
            &workspace.id,
            &conversation.id,
            NewMessage::from_chat(ChatMessage::assistant("", Vec::new())),
        )
        .await
        .unwrap();
    let call = store
        .create_tool_call(
            &workspace.id,
            NewToolCall {
                message_id: Some(message.id.clone()),
                ..new_tool_call(&conversation.id, Some(&server), "call_1")
            },
        )
        .await
        .unwrap();
    assert_eq!(call.state, ToolCallState::Proposed);
    assert_eq!(
        store.get_tool_call(&workspace.id, &call.id).await.unwrap(),
        call
    );
    let approved = store
        .transition_tool_call(
            &workspace.id,
            &call.id,
            ToolCallState::Approved,
            ToolCallOutcome::default(),
        )
        .await
        .unwrap();
    assert!(approved.decided_at.is_some() && approved.dispatched_at.is_none());
    let dispatched = store
        .transition_tool_call(
            &workspace.id,
            &call.id,
            ToolCallState::Dispatched,
            ToolCallOutcome::default(),
        )
        .await
        .unwrap();
    assert!(dispatched.dispatched_at.is_some());
    let result = json!({"content": [{"type": "text", "text": "3 items"}], "isError": false});
    let completed = store
        .transition_tool_call(
            &workspace.id,
            &call.id,
            ToolCallState::Completed,
            ToolCallOutcome {
                result: Some(result.clone()),
                error: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(completed.result, Some(result));
    assert!(completed.finished_at.is_some());
    assert!(
        completed.decided_at <= completed.dispatched_at
            && completed.dispatched_at <= completed.finished_at
    );
    assert_eq!(
        store.get_tool_call(&workspace.id, &call.id).await.unwrap(),
        completed
    );
    assert_eq!(
        store
            .list_tool_calls(&workspace.id, &conversation.id)
            .await
            .unwrap(),
        vec![completed]
    );
}

async fn forbidden_transitions_are_conflicts(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let call = store
        .create_tool_call(&workspace.id, new_tool_call(&conversation.id, None, "c"))
        .await
        .unwrap();
    let skip = store
        .transition_tool_call(
            &workspace.id,
            &call.id,
            ToolCallState::Dispatched,
            ToolCallOutcome::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(skip, StoreError::Conflict(_)), "{skip:?}");
    assert!(
        skip.to_string().contains("proposed") && skip.to_string().contains("dispatched"),
        "{skip}"
    );
    let denied = store
        .transition_tool_call(
            &workspace.id,
            &call.id,
            ToolCallState::Denied,
            ToolCallOutcome {
                result: None,
                error: Some("user denied".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(denied.error.as_deref(), Some("user denied"));
    let after_terminal = store
        .transition_tool_call(
            &workspace.id,
            &call.id,
            ToolCallState::Approved,
            ToolCallOutcome::default(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(after_terminal, StoreError::Conflict(_)),
        "{after_terminal:?}"
    );
    assert_eq!(
        store.get_tool_call(&workspace.id, &call.id).await.unwrap(),
        denied
    );
}

async fn only_one_of_two_racing_dispatches_wins(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    for round in 0..5 {
        let call = store
            .create_tool_call(
                &workspace.id,
                new_tool_call(&conversation.id, None, &format!("c{round}")),
            )
            .await
            .unwrap();
        store
            .transition_tool_call(
                &workspace.id,
                &call.id,
                ToolCallState::Approved,
                ToolCallOutcome::default(),
            )
            .await
            .unwrap();
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let store = store.clone();
                let workspace_id = workspace.id.clone();
                let call_id = call.id.clone();
                tokio::spawn(async move {
                    store
                        .transition_tool_call(
                            &workspace_id,
                            &call_id,
                            ToolCallState::Dispatched,
                            ToolCallOutcome::default(),
                        )
                        .await
                })
            })
            .collect();
        let mut wins = 0;
        for racer in racers {
            match racer.await.unwrap() {
                Ok(_) => wins += 1,
                Err(StoreError::Conflict(_)) => {}
                Err(other) => panic!("unexpected error: {other:?}"),
            }
        }
        assert_eq!(wins, 1, "round {round}: exactly one dispatch");
    }
}

async fn call_parents_must_be_in_the_workspace(test: TestStore) {
    let store = &test.store;
    let (acme, alice) = workspace_with_owner(store, "acme").await;
    let (globex, mallory) = workspace_with_owner(store, "globex").await;
    let conversation = start_conversation(store, &acme.id, &alice).await;
    let theirs = start_conversation(store, &globex.id, &mallory).await;
    let their_server = add_stdio_server(store, &globex.id, "kg").await;
    let their_message = store
        .append_message(
            &globex.id,
            &theirs.id,
            NewMessage::from_chat(ChatMessage::user("x")),
        )
        .await
        .unwrap();
    let cases: [(NewToolCall, &str); 5] = [
        (new_tool_call(&theirs.id, None, "c"), "conversation"),
        (
            new_tool_call(&ConversationId::generate(), None, "c"),
            "conversation",
        ),
        (
            new_tool_call(&conversation.id, Some(&their_server), "c"),
            "server",
        ),
        (
            NewToolCall {
                server_id: Some(ServerId::generate()),
                ..new_tool_call(&conversation.id, None, "c")
            },
            "server",
        ),
        (
            NewToolCall {
                message_id: Some(their_message.id.clone()),
                ..new_tool_call(&conversation.id, None, "c")
            },
            "message",
        ),
    ];
    for (new_call, entity) in cases {
        match store.create_tool_call(&acme.id, new_call).await {
            Err(StoreError::NotFound { entity: named }) => assert_eq!(named, entity),
            other => panic!("expected NotFound {entity}, got {other:?}"),
        }
    }
    let unknown_message = NewToolCall {
        message_id: Some(MessageId::generate()),
        ..new_tool_call(&conversation.id, None, "c")
    };
    assert!(
        store
            .create_tool_call(&acme.id, unknown_message)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .list_tool_calls(&acme.id, &conversation.id)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn deleting_the_server_keeps_the_history(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "kg").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let call = store
        .create_tool_call(
            &workspace.id,
            new_tool_call(&conversation.id, Some(&server), "c"),
        )
        .await
        .unwrap();
    store
        .delete_server(&workspace.id, &server.id)
        .await
        .unwrap();
    let kept = store.get_tool_call(&workspace.id, &call.id).await.unwrap();
    assert_eq!(kept.server_id, None);
    assert_eq!(kept.server_name, "kg");
}

async fn restart_recovery_marks_in_flight_calls(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let mut calls = Vec::new();
    for (index, path) in [
        vec![],
        vec![ToolCallState::Approved],
        vec![ToolCallState::Approved, ToolCallState::Dispatched],
        vec![
            ToolCallState::Approved,
            ToolCallState::Dispatched,
            ToolCallState::Completed,
        ],
    ]
    .into_iter()
    .enumerate()
    {
        let call = store
            .create_tool_call(
                &workspace.id,
                new_tool_call(&conversation.id, None, &format!("c{index}")),
            )
            .await
            .unwrap();
        for state in path {
            store
                .transition_tool_call(&workspace.id, &call.id, state, ToolCallOutcome::default())
                .await
                .unwrap();
        }
        calls.push(call.id);
    }
    assert_eq!(store.recover_interrupted_tool_calls().await.unwrap(), 3);
    let mut states = Vec::new();
    for id in &calls {
        let call = store.get_tool_call(&workspace.id, id).await.unwrap();
        states.push(call.state);
        if call.state != ToolCallState::Completed {
            assert!(
                call.error.as_deref().unwrap().contains("restart"),
                "{call:?}"
            );
            assert!(call.finished_at.is_some());
        }
    }
    use ToolCallState::*;
    assert_eq!(states, [Failed, Failed, Unknown, Completed]);
    assert_eq!(store.recover_interrupted_tool_calls().await.unwrap(), 0);
}

/// `approved`+`dispatched` in one call, then the final state with its audit row; a step the
/// state machine refuses writes nothing, the audit row neither.
async fn steps_and_the_audit_row_are_one_commit(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let call = store
        .create_tool_call(
            &workspace.id,
            new_tool_call(&conversation.id, None, "call_1"),
        )
        .await
        .unwrap();
    let dispatched = store
        .advance_tool_call(
            &workspace.id,
            &call.id,
            &[ToolCallState::Approved, ToolCallState::Dispatched],
            ToolCallOutcome::default(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(dispatched.state, ToolCallState::Dispatched);
    assert!(dispatched.decided_at.is_some() && dispatched.dispatched_at.is_some());
    let audit = |status: &str| NewAuditEvent {
        actor: alice.id.as_str().to_owned(),
        action: format!("tool_call.{status}"),
        status: Some(status.to_owned()),
        details: json!({"arguments": {"token": "SECRET"}}),
        ..NewAuditEvent::default()
    };
    let refused = store
        .advance_tool_call(
            &workspace.id,
            &call.id,
            &[ToolCallState::Approved],
            ToolCallOutcome::default(),
            Some(audit("approved")),
        )
        .await
        .unwrap_err();
    assert!(matches!(refused, StoreError::Conflict(_)), "{refused:?}");
    let completed = store
        .advance_tool_call(
            &workspace.id,
            &call.id,
            &[ToolCallState::Completed],
            ToolCallOutcome {
                result: Some(json!({"content": []})),
                error: None,
            },
            Some(audit("completed")),
        )
        .await
        .unwrap();
    assert_eq!(
        store.get_tool_call(&workspace.id, &call.id).await.unwrap(),
        completed
    );
    let rows = store
        .search_audit(&workspace.id, AuditSearch::default())
        .await
        .unwrap();
    let actions: Vec<&str> = rows.iter().map(|row| row.action.as_str()).collect();
    assert_eq!(actions, ["tool_call.completed"]);
    assert_eq!(rows[0].details["arguments"]["token"], "[REDACTED]");
}
