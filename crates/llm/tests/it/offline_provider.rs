//! The offline provider through the public trait, as the chat engine will drive it: built
//! from the default configuration, streaming a tool call, then the answer.

use serde_json::json;
use switchboard_core::{ChatMessage, ToolSpec};
use switchboard_llm::{
    FinishReason, LlmConfig, LlmEvent, LlmRequest, OFFLINE_MODEL_NAME, build_provider,
};

use crate::support::{drain, text_of};

fn kg_tools() -> Vec<ToolSpec> {
    serde_json::from_str(include_str!("../fixtures/kg_tools.json")).unwrap()
}

#[tokio::test]
async fn the_default_configuration_answers_with_no_key_through_the_event_stream() {
    let config = LlmConfig::default();
    config.validate().unwrap();
    let provider = build_provider(&config).unwrap();
    assert_eq!(provider.provider_name(), "offline");
    assert_eq!(provider.default_model(), OFFLINE_MODEL_NAME);

    let mut messages = vec![ChatMessage::user("What's the schema version?")];
    let request = LlmRequest::new("", messages.clone()).with_tools(kg_tools());
    let (events, error) = drain(provider.stream_chat(request).await.unwrap()).await;
    assert!(error.is_none());
    let LlmEvent::ToolCall(call) = &events[0] else {
        panic!("expected a tool call, got {events:?}");
    };
    assert_eq!(call.index, 0);
    assert_eq!(call.call.name, "kg__schema_version");
    assert_eq!(call.call.arguments, "{}");
    assert!(call.call.id.starts_with("call_"));
    assert_eq!(events[1], LlmEvent::Finished(FinishReason::ToolCalls));

    messages.push(ChatMessage::assistant("", vec![call.call.clone()]));
    messages.push(ChatMessage::tool_result(
        call.call.id.clone(),
        json!({"version": "57c52257693ae983", "created_at": "2026-11-15T09:30:00Z", "object_type_count": 5, "relationship_type_count": 7}).to_string(),
    ));
    let request = LlmRequest::new("", messages).with_tools(kg_tools());
    let (events, error) = drain(provider.stream_chat(request).await.unwrap()).await;
    assert!(error.is_none());
    assert!(events.len() > 1, "the answer streams as several deltas");
    assert_eq!(events.last(), Some(&LlmEvent::Finished(FinishReason::Stop)));
    assert_eq!(
        text_of(&events),
        "The knowledge-graph schema is at version `57c52257693ae983`, created 2026-11-15 09:30 UTC. It defines 5 object types and 7 relationship types.\n"
    );
}

#[tokio::test]
async fn without_tools_it_says_so_instead_of_pretending() {
    let provider = build_provider(&LlmConfig::default()).unwrap();
    let request = LlmRequest::new("", vec![ChatMessage::user("Write me a poem")]);
    let (events, _) = drain(provider.stream_chat(request).await.unwrap()).await;
    let text = text_of(&events);
    assert!(text.contains("no tools are available"), "{text}");
    assert!(text.contains("[llm]"), "{text}");
}

/// Questions with multi-byte characters where the planner looks at fixed byte positions (a date
/// is read from a token's first ten bytes): the fuzzer found `WhatSholaԜp…` panicking the
/// planner mid-character ("end byte index 10 is not a char boundary"). None may panic.
#[test]
fn questions_with_multi_byte_characters_never_panic_the_planner() {
    let provider = switchboard_llm::offline::OfflineProvider::default();
    for question in [
        "WhatSholaԜp\u{15}tal tj\u{0}\u{0}\u{0}l c changed \u{1e}\u{1e}\u{1e} No\u{0}\u{0}\u{0}1er 0?",
        "Show 2026-11-0Ԝ changes",
        "changes since 2026ԜԜ-11-01",
        "Projects named ÄÖÜäöüßéè since Nov 1",
        "🙂🙂🙂🙂🙂 since last week",
        "\"quoted Ԝ phrase\" version 1.2.3Ԝ",
    ] {
        let request = LlmRequest::new("", vec![ChatMessage::user(question)]).with_tools(kg_tools());
        provider.plan_events(&request).unwrap();
    }
}
