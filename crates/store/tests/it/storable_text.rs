//! U+0000 in content (PostgreSQL refuses it in TEXT and JSONB) is stored as U+FFFD on both
//! backends; names refuse it.

use crate::fixtures::{new_conversation, new_tool_call, plain_bud, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use serde_json::json;
use switchboard_core::{ChatMessage, ToolCallRequest, ToolCallState};
use switchboard_store::{NewAuditEvent, NewMessage, StoreError, ToolCallOutcome};

store_test!(nul_characters_in_content_are_stored_as_replacement_characters);

async fn nul_characters_in_content_are_stored_as_replacement_characters(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = store
        .create_conversation(
            &workspace.id,
            switchboard_store::NewConversation {
                title: "t\0itle".into(),
                ..new_conversation(&alice)
            },
        )
        .await
        .unwrap();
    assert_eq!(conversation.title, "t\u{FFFD}itle");
    let request = ToolCallRequest {
        id: "call\0".into(),
        name: "kg__x".into(),
        arguments: "{\"q\":\"a\0\"}".into(),
    };
    let message = store
        .append_message(
            &workspace.id,
            &conversation.id,
            NewMessage {
                metadata: json!({"note": "n\0"}),
                ..NewMessage::from_chat(ChatMessage::assistant("said\0", vec![request]))
            },
        )
        .await
        .unwrap();
    let call = store
        .create_tool_call(
            &workspace.id,
            new_tool_call(&conversation.id, None, "call\0"),
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
    store
        .transition_tool_call(
            &workspace.id,
            &call.id,
            ToolCallState::Dispatched,
            ToolCallOutcome::default(),
        )
        .await
        .unwrap();
    let finished = store
        .transition_tool_call(
            &workspace.id,
            &call.id,
            ToolCallState::Failed,
            ToolCallOutcome {
                result: Some(json!({"content": [{"type": "text", "text": "bad\0"}]})),
                error: Some("err\0".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        store.get_tool_call(&workspace.id, &call.id).await.unwrap(),
        finished
    );
    assert_eq!(finished.llm_call_id, "call\u{FFFD}");
    assert_eq!(finished.error.as_deref(), Some("err\u{FFFD}"));
    assert_eq!(
        finished.result.unwrap()["content"][0]["text"],
        "bad\u{FFFD}"
    );
    let stored = store
        .list_messages(&workspace.id, &conversation.id)
        .await
        .unwrap();
    assert_eq!(stored, std::slice::from_ref(&message));
    assert_eq!(message.content, "said\u{FFFD}");
    assert_eq!(message.tool_calls[0].id, "call\u{FFFD}");
    assert_eq!(message.tool_calls[0].arguments, "{\"q\":\"a\u{FFFD}\"}");
    assert_eq!(message.metadata["note"], "n\u{FFFD}");
    let event = store
        .append_audit_event(
            &workspace.id,
            NewAuditEvent {
                actor: "system".into(),
                action: "tool_call.failed".into(),
                tool_name: Some("x\0".into()),
                details: json!({"arguments": {"q": "a\0"}}),
                ..NewAuditEvent::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(event.tool_name.as_deref(), Some("x\u{FFFD}"));
    assert_eq!(event.details["arguments"]["q"], "a\u{FFFD}");

    let refused = store
        .create_bud(&workspace.id, plain_bud("b\0ud"))
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, StoreError::InvalidInput { .. })
            && refused.to_string().contains("U+0000"),
        "{refused}"
    );
}
