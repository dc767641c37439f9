//! The `openai` provider's happy paths over real HTTP: streamed text, parallel tool calls,
//! server quirks, non-streamed answers, cancellation by dropping the stream.

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use switchboard_core::{ChatMessage, ToolSpec};
use switchboard_llm::{
    FinishReason, LlmEvent, LlmProvider, LlmRequest, OpenAiProvider, TokenUsage, ToolChoice,
};
use switchboard_test_support::fake_openai::{
    FakeOpenAi, ScriptedReply, ScriptedToolCall, StreamEnding, tool_call_delta_chunk,
};

use crate::support::{config_for, drain, text_of};

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: format!("The {name} tool"),
        parameters: json!({"type": "object", "properties": {"type_name": {"type": "string"}}}),
    }
}

#[tokio::test]
async fn streams_text_and_usage_and_sends_an_openai_shaped_request() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text(&["Hello", ", ", "world"]));
    let provider = OpenAiProvider::new(&config_for(&fake)).unwrap();

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
                prompt_tokens: 11,
                completion_tokens: 3,
                total_tokens: 14,
                ..TokenUsage::default()
            }),
            LlmEvent::Finished(FinishReason::Stop),
        ]
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(request.body["model"], "fake-model", "default model used");
    assert_eq!(request.body["stream"], true);
    assert_eq!(
        request.body["stream_options"],
        json!({"include_usage": true})
    );
    assert_eq!(
        request.body["messages"],
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])
    );
    assert!(request.body.get("tools").is_none());
}

#[tokio::test]
async fn assembles_parallel_tool_calls_from_interleaved_argument_deltas() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[
        ScriptedToolCall::new("call_a", "kg__type_info", json!({"type_name": "Document"})),
        ScriptedToolCall::new(
            "call_b",
            "kg__relationship_info",
            json!({"from_type": "Document", "to_type": "Project"}),
        ),
    ]));
    let provider = OpenAiProvider::new(&config_for(&fake)).unwrap();
    let request = LlmRequest::new("gpt-test", vec![ChatMessage::user("tell me")])
        .with_tools(vec![tool("kg__type_info"), tool("kg__relationship_info")])
        .with_tool_choice(ToolChoice::Required);

    let (events, error) = drain(provider.stream_chat(request).await.unwrap()).await;

    assert!(error.is_none(), "{error:?}");
    let calls: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            LlmEvent::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].index, 0);
    assert_eq!(calls[0].call.id, "call_a");
    assert_eq!(calls[0].call.name, "kg__type_info");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&calls[0].call.arguments).unwrap(),
        json!({"type_name": "Document"})
    );
    assert_eq!(calls[1].index, 1);
    assert_eq!(calls[1].call.id, "call_b");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&calls[1].call.arguments).unwrap(),
        json!({"from_type": "Document", "to_type": "Project"})
    );
    assert_eq!(
        events.last(),
        Some(&LlmEvent::Finished(FinishReason::ToolCalls))
    );
    let body = &fake.requests()[0].body;
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["tool_choice"], "required");
    let offered: Vec<_> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        offered,
        ["kg__relationship_info", "kg__type_info"],
        "sorted"
    );
}

#[tokio::test]
async fn gemini_style_stream_without_index_with_null_content_and_usage_only_final_chunk() {
    let fake = FakeOpenAi::start().await;
    let mut first = tool_call_delta_chunk(None, Some(""), Some("kg__schema_version"), "{}");
    first["choices"][0]["delta"]["content"] = json!(null);
    first["choices"][0]["delta"]["role"] = json!("assistant");
    let second = tool_call_delta_chunk(
        None,
        Some(""),
        Some("kg__type_info"),
        "{\"type_name\":\"Team\"}",
    );
    fake.enqueue(ScriptedReply::raw_stream(
        vec![
            first,
            second,
            json!({"choices": [{"index": 0, "delta": {"content": null}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}}),
        ],
        StreamEnding::Done,
    ));
    let provider = OpenAiProvider::new(&config_for(&fake)).unwrap();

    let (events, error) = drain(
        provider
            .stream_chat(LlmRequest::new(
                "gemini-2.5-flash",
                vec![ChatMessage::user("x")],
            ))
            .await
            .unwrap(),
    )
    .await;

    assert!(error.is_none(), "{error:?}");
    let names: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            LlmEvent::ToolCall(call) => {
                Some((call.index, call.call.name.clone(), call.call.id.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(names.len(), 2);
    assert_eq!((names[0].0, names[0].1.as_str()), (0, "kg__schema_version"));
    assert_eq!((names[1].0, names[1].1.as_str()), (1, "kg__type_info"));
    assert!(
        !names[0].2.is_empty() && names[0].2 != names[1].2,
        "ids generated"
    );
    assert!(events.contains(&LlmEvent::Usage(TokenUsage {
        prompt_tokens: 9,
        completion_tokens: 4,
        total_tokens: 13,
        ..TokenUsage::default()
    })));
    assert_eq!(
        events.last(),
        Some(&LlmEvent::Finished(FinishReason::ToolCalls))
    );
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_is_understood() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::Json(json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole answer"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    })));
    let provider = OpenAiProvider::new(&config_for(&fake)).unwrap();
    let (events, error) = drain(
        provider
            .stream_chat(LlmRequest::new("", vec![ChatMessage::user("x")]))
            .await
            .unwrap(),
    )
    .await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "whole answer");
    assert_eq!(events.last(), Some(&LlmEvent::Finished(FinishReason::Stop)));
}

#[tokio::test]
async fn dropping_the_stream_aborts_the_upstream_request() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text_then_hang(&["thinking"]));
    let provider = OpenAiProvider::new(&config_for(&fake)).unwrap();
    let mut stream = provider
        .stream_chat(LlmRequest::new("", vec![ChatMessage::user("x")]))
        .await
        .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first, LlmEvent::TextDelta("thinking".into()));
    assert_eq!(fake.streams_abandoned_by_client(), 0);

    drop(stream);

    assert!(
        fake.wait_for_abandoned_streams(1, Duration::from_secs(5))
            .await,
        "the fake server saw the client go away"
    );
}
