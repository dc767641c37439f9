//! Token totals summed from the stored usage of assistant messages: by provider and model,
//! per conversation, per owner and from an instant on; messages without usage and other roles
//! are not counted.

use crate::fixtures::{start_conversation, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use serde_json::json;
use switchboard_core::{ChatMessage, ChatRole};
use switchboard_store::{MessageStatus, NewMessage, UsageFilter, UserRole};

store_test!(usage_totals_sum_the_stored_usage_by_provider_and_model);

fn answer(provider: &str, model: &str, usage: serde_json::Value) -> NewMessage {
    NewMessage {
        role: ChatRole::Assistant,
        content: "answer".to_owned(),
        tool_calls: Vec::new(),
        tool_call_id: None,
        metadata: json!({"provider": "openai", "provider_name": provider, "model": model,
            "usage": usage}),
        status: MessageStatus::Complete,
    }
}

async fn usage_totals_sum_the_stored_usage_by_provider_and_model(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let other = store
        .create_user(&workspace.id, "other", UserRole::Member)
        .await
        .unwrap();
    let mine = start_conversation(store, &workspace.id, &owner).await;
    let theirs = start_conversation(store, &workspace.id, &other).await;
    let steps = [
        (
            &mine,
            answer(
                "default",
                "m1",
                json!({"prompt_tokens": 100, "completion_tokens": 10,
            "total_tokens": 110, "cache_read_tokens": 40}),
            ),
        ),
        (
            &mine,
            answer(
                "default",
                "m1",
                json!({"prompt_tokens": 50, "completion_tokens": 5,
            "total_tokens": 55, "cache_creation_tokens": 7}),
            ),
        ),
        (
            &mine,
            answer(
                "claude",
                "c1",
                json!({"prompt_tokens": 3, "completion_tokens": 2,
            "total_tokens": 5}),
            ),
        ),
        (
            &theirs,
            answer(
                "default",
                "m1",
                json!({"prompt_tokens": 1000, "completion_tokens": 1,
            "total_tokens": 1001}),
            ),
        ),
    ];
    for (conversation, message) in steps {
        store
            .append_message(&workspace.id, &conversation.id, message)
            .await
            .unwrap();
    }
    // Not counted: a question, and an answer without usage.
    store
        .append_message(
            &workspace.id,
            &mine.id,
            NewMessage::from_chat(ChatMessage::user("hi")),
        )
        .await
        .unwrap();
    let mut no_usage = answer("default", "m1", json!(null));
    no_usage.metadata = json!({"provider_name": "default", "model": "m1"});
    store
        .append_message(&workspace.id, &mine.id, no_usage)
        .await
        .unwrap();

    let by_conversation = store
        .usage_totals(
            &workspace.id,
            &UsageFilter {
                conversation_id: Some(mine.id.clone()),
                ..UsageFilter::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(by_conversation.len(), 2, "{by_conversation:?}");
    assert_eq!(by_conversation[0].provider, "claude");
    assert_eq!(by_conversation[0].input_tokens, 3);
    let default = &by_conversation[1];
    assert_eq!(
        (default.provider.as_str(), default.model.as_str()),
        ("default", "m1")
    );
    assert_eq!(default.steps, 2);
    assert_eq!(default.input_tokens, 150);
    assert_eq!(default.output_tokens, 15);
    assert_eq!(default.cache_read_tokens, 40);
    assert_eq!(default.cache_write_tokens, 7);

    let theirs_only = store
        .usage_totals(
            &workspace.id,
            &UsageFilter {
                owner_user_id: Some(other.id.clone()),
                ..UsageFilter::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(theirs_only.len(), 1);
    assert_eq!(theirs_only[0].input_tokens, 1000);

    let workspace_rows = store
        .usage_totals(&workspace.id, &UsageFilter::default())
        .await
        .unwrap();
    let input: i64 = workspace_rows.iter().map(|row| row.input_tokens).sum();
    assert_eq!(input, 1153);

    let future = store
        .usage_totals(
            &workspace.id,
            &UsageFilter {
                since: Some(chrono::Utc::now() + chrono::Duration::hours(1)),
                ..UsageFilter::default()
            },
        )
        .await
        .unwrap();
    assert!(future.is_empty(), "{future:?}");
}
