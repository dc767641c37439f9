//! The `anthropic` provider's happy paths over real HTTP against the scripted fake Messages
//! API: streamed text, one and parallel tool calls assembled from partial JSON, stop reasons,
//! usage with cache fields, and the request shape (headers, system, tool_result merging,
//! cache_control, tool_choice).

use serde_json::{Value, json};
use switchboard_core::{ChatMessage, ToolCallRequest, ToolSpec};
use switchboard_llm::{
    AnthropicProvider, FinishReason, IndexedToolCall, LlmConfig, LlmEvent, LlmProvider, LlmRequest,
    ProviderKind, TokenUsage, ToolChoice,
};
use switchboard_test_support::fake_anthropic::{
    AnthropicReply, FakeAnthropic, ScriptedToolUse, ScriptedUsage,
};

use crate::support::{drain, text_of};

/// An `anthropic` configuration for the fake, with short backoffs so retries are quick.
pub fn anthropic_config(fake: &FakeAnthropic) -> LlmConfig {
    let config = LlmConfig {
        provider: ProviderKind::Anthropic,
        base_url: fake.base_url(),
        api_key: Some(switchboard_llm::ApiKey::new("sk-ant-test")),
        model: "claude-fake".to_owned(),
        retry_base_delay_ms: 20,
        retry_max_delay_ms: 100,
        stream_idle_timeout_ms: 5_000,
        response_timeout_ms: 5_000,
        ..LlmConfig::default()
    };
    config.validate().unwrap();
    config
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: format!("The {name} tool"),
        parameters: json!({"type": "object", "properties": {"type_name": {"type": "string"}}}),
    }
}

fn calls_of(events: &[LlmEvent]) -> Vec<IndexedToolCall> {
    events
        .iter()
        .filter_map(|event| match event {
            LlmEvent::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn streams_text_with_cache_usage_and_sends_the_documented_request() {
    let fake = FakeAnthropic::start().await;
    fake.enqueue(AnthropicReply::text_with(
        &["Hello", ", ", "world"],
        "end_turn",
        ScriptedUsage {
            input_tokens: 12,
            output_tokens: 3,
            cache_creation_input_tokens: 1500,
            cache_read_input_tokens: 4000,
        },
    ));
    let provider = AnthropicProvider::new(&anthropic_config(&fake)).unwrap();
    assert_eq!(
        provider.endpoint(),
        format!("{}/v1/messages", fake.base_url())
    );

    let stream = provider
        .stream_chat(LlmRequest::new(
            "",
            vec![ChatMessage::system("be brief"), ChatMessage::user("hi")],
        ))
        .await
        .unwrap();
    let (events, error) = drain(stream).await;

    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "Hello, world");
    assert_eq!(
        &events[3..],
        &[
            LlmEvent::Usage(TokenUsage {
                prompt_tokens: 12 + 1500 + 4000,
                completion_tokens: 3,
                total_tokens: 12 + 1500 + 4000 + 3,
                cache_creation_tokens: 1500,
                cache_read_tokens: 4000,
            }),
            LlmEvent::Finished(FinishReason::Stop),
        ]
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None, "no bearer key");
    assert_eq!(
        request.body,
        json!({
            "model": "claude-fake",
            "max_tokens": 4096,
            "system": "be brief",
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
            ]}],
            "stream": true,
        })
    );
}

#[tokio::test]
async fn one_tool_call_is_assembled_from_partial_json() {
    let fake = FakeAnthropic::start().await;
    fake.enqueue(AnthropicReply::tool_use(
        Some("Let me look."),
        &[ScriptedToolUse::new(
            "toolu_01",
            "kg__type_info",
            json!({"type_name": "Document", "note": "with \"quotes\" and ü"}),
        )],
    ));
    let provider = AnthropicProvider::new(&anthropic_config(&fake)).unwrap();
    let request = LlmRequest::new(
        "claude-other",
        vec![ChatMessage::user("what is a Document?")],
    )
    .with_tools(vec![tool("kg__type_info")])
    .with_tool_choice(ToolChoice::Function {
        name: "kg__type_info".into(),
    });

    let (events, error) = drain(provider.stream_chat(request).await.unwrap()).await;

    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "Let me look.");
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].index, calls[0].call.id.as_str()), (0, "toolu_01"));
    assert_eq!(
        serde_json::from_str::<Value>(&calls[0].call.arguments).unwrap(),
        json!({"type_name": "Document", "note": "with \"quotes\" and ü"})
    );
    assert_eq!(
        events.last(),
        Some(&LlmEvent::Finished(FinishReason::ToolCalls))
    );
    let body = &fake.requests()[0].body;
    assert_eq!(body["model"], "claude-other");
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "kg__type_info"})
    );
    assert_eq!(
        body["tools"],
        json!([{"name": "kg__type_info", "description": "The kg__type_info tool",
                "input_schema": {"type": "object", "properties": {"type_name": {"type": "string"}}},
                "cache_control": {"type": "ephemeral"}}])
    );
}

#[tokio::test]
async fn parallel_tool_calls_then_their_results_go_back_merged_into_one_user_turn() {
    let fake = FakeAnthropic::start().await;
    fake.enqueue(AnthropicReply::tool_use(
        None,
        &[
            ScriptedToolUse::new("toolu_a", "kg__type_info", json!({"type_name": "Team"})),
            ScriptedToolUse::new("toolu_b", "kg__schema_version", json!({})),
        ],
    ));
    fake.enqueue(AnthropicReply::text(&["Teams have members."]));
    let provider = AnthropicProvider::new(&anthropic_config(&fake)).unwrap();
    let tools = vec![tool("kg__type_info"), tool("kg__schema_version")];
    let mut history = vec![
        ChatMessage::system("use tools"),
        ChatMessage::user("teams?"),
    ];
    let request = LlmRequest::new("", history.clone())
        .with_tools(tools.clone())
        .with_tool_choice(ToolChoice::Required);

    let (events, error) = drain(provider.stream_chat(request).await.unwrap()).await;
    assert!(error.is_none(), "{error:?}");
    let calls = calls_of(&events);
    let summary: Vec<_> = calls
        .iter()
        .map(|call| (call.index, call.call.id.as_str(), call.call.name.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            (0, "toolu_a", "kg__type_info"),
            (1, "toolu_b", "kg__schema_version")
        ]
    );
    assert_eq!(calls[0].call.arguments, r#"{"type_name":"Team"}"#);
    assert_eq!(calls[1].call.arguments, "{}");

    history.push(ChatMessage::assistant(
        "",
        calls
            .iter()
            .map(|call| call.call.clone())
            .collect::<Vec<ToolCallRequest>>(),
    ));
    history.push(ChatMessage::tool_result("toolu_a", "{\"name\":\"Team\"}"));
    history.push(ChatMessage::tool_error("toolu_b", "the kg server is down"));
    let request = LlmRequest::new("", history).with_tools(tools);
    let (events, error) = drain(provider.stream_chat(request).await.unwrap()).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "Teams have members.");

    let second = &fake.requests()[1].body;
    assert_eq!(second["system"], "use tools");
    assert_eq!(second["tool_choice"], json!({"type": "auto"}));
    assert_eq!(
        second["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "teams?"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_a", "name": "kg__type_info", "input": {"type_name": "Team"}},
                {"type": "tool_use", "id": "toolu_b", "name": "kg__schema_version", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "{\"name\":\"Team\"}"},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "the kg server is down",
                 "is_error": true, "cache_control": {"type": "ephemeral"}},
            ]},
        ])
    );
    let tools = second["tools"].as_array().unwrap();
    assert!(tools[0].get("cache_control").is_none());
    assert_eq!(tools[1]["cache_control"], json!({"type": "ephemeral"}));
}

#[tokio::test]
async fn stop_reasons_map_to_finish_reasons() {
    let fake = FakeAnthropic::start().await;
    for (stop_reason, expected) in [
        ("end_turn", FinishReason::Stop),
        ("max_tokens", FinishReason::Length),
        ("stop_sequence", FinishReason::Stop),
        ("refusal", FinishReason::ContentFilter),
        ("pause_turn", FinishReason::Other("pause_turn".into())),
    ] {
        fake.enqueue(AnthropicReply::text_with(
            &["x"],
            stop_reason,
            ScriptedUsage::default(),
        ));
        let provider = AnthropicProvider::new(&anthropic_config(&fake)).unwrap();
        let request = LlmRequest::new("", vec![ChatMessage::user("q")]);
        let (events, error) = drain(provider.stream_chat(request).await.unwrap()).await;
        assert!(error.is_none(), "{error:?}");
        assert_eq!(
            events.last(),
            Some(&LlmEvent::Finished(expected)),
            "{stop_reason}"
        );
    }
}
