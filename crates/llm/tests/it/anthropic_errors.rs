//! The `anthropic` provider when things go wrong: an `error` event mid-stream, 429 with
//! `retry-after` then success, 529 overloaded retried, 400 with the API's message, a missing
//! key — each a typed `LlmError` carrying the API's own message.

use std::time::Duration;

use switchboard_core::ChatMessage;
use switchboard_llm::{
    AnthropicProvider, LlmConfig, LlmError, LlmProvider, LlmRequest, ProviderKind,
};
use switchboard_test_support::fake_anthropic::{AnthropicReply, FakeAnthropic};

use crate::anthropic_streaming::anthropic_config;
use crate::support::{drain, text_of};

fn hello() -> LlmRequest {
    LlmRequest::new("", vec![ChatMessage::user("hello")])
}

#[tokio::test]
async fn an_error_event_mid_stream_ends_the_stream_with_the_api_message() {
    let fake = FakeAnthropic::start().await;
    fake.enqueue(AnthropicReply::text_then_error(
        &["Par", "tial"],
        "overloaded_error",
        "Overloaded",
    ));
    let provider = AnthropicProvider::new(&anthropic_config(&fake)).unwrap();

    let (events, error) = drain(provider.stream_chat(hello()).await.unwrap()).await;

    assert_eq!(text_of(&events), "Partial");
    let error = error.expect("the stream ends with an error");
    assert!(
        matches!(error, LlmError::UpstreamReportedError { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the LLM provider reported an error mid-stream: Overloaded (overloaded_error)"
    );
    assert_eq!(fake.requests().len(), 1, "nothing is retried after tokens");
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out_then_the_answer_streams() {
    let fake = FakeAnthropic::start().await;
    fake.enqueue(AnthropicReply::rate_limited(1));
    fake.enqueue(AnthropicReply::overloaded());
    fake.enqueue(AnthropicReply::text(&["after the wait"]));
    let provider = AnthropicProvider::new(&anthropic_config(&fake)).unwrap();

    let (events, error) = drain(provider.stream_chat(hello()).await.unwrap()).await;

    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "after the wait");
    let requests = fake.requests();
    assert_eq!(
        requests.len(),
        3,
        "429, then 529 overloaded, then the answer"
    );
    let waited = requests[1].received_at - requests[0].received_at;
    assert!(
        waited >= Duration::from_millis(950),
        "retry-after: 1 honoured over the 20 ms backoff, waited {waited:?}"
    );
    assert_eq!(requests[0].body, requests[2].body, "same request resent");
}

#[tokio::test]
async fn a_400_reports_the_api_message_and_is_not_retried() {
    let fake = FakeAnthropic::start().await;
    fake.enqueue(AnthropicReply::error_status(
        400,
        "invalid_request_error",
        "messages.1.content.0.tool_result: unexpected tool_use_id",
    ));
    let provider = AnthropicProvider::new(&anthropic_config(&fake)).unwrap();

    let error = provider.stream_chat(hello()).await.err().unwrap();

    match &error {
        LlmError::UpstreamStatus {
            status,
            body_excerpt,
        } => {
            assert_eq!(*status, 400);
            assert_eq!(
                body_excerpt,
                "messages.1.content.0.tool_result: unexpected tool_use_id"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn overload_that_outlasts_the_retries_is_reported() {
    let fake = FakeAnthropic::start().await;
    let config = LlmConfig {
        max_retries: 1,
        ..anthropic_config(&fake)
    };
    fake.enqueue(AnthropicReply::overloaded());
    fake.enqueue(AnthropicReply::overloaded());
    let provider = AnthropicProvider::new(&config).unwrap();
    let error = provider.stream_chat(hello()).await.err().unwrap();
    assert_eq!(
        error.to_string(),
        "the LLM provider answered HTTP 529: Overloaded"
    );
    assert_eq!(fake.requests().len(), 2);
}

#[test]
fn configuration_requires_model_key_and_an_http_url() {
    let anthropic = |extra: &str| -> LlmConfig {
        toml::from_str(&format!("provider = \"anthropic\"\n{extra}")).unwrap()
    };
    let error = anthropic("api_key = \"k\"").validate().unwrap_err();
    assert_eq!(error.key, "model");
    assert!(
        error.to_string().contains("provider = \"anthropic\""),
        "{error}"
    );
    let error = anthropic("model = \"claude-x\"").validate().unwrap_err();
    assert_eq!(error.key, "api_key");
    assert!(error.to_string().contains("x-api-key"), "{error}");
    let error =
        anthropic("model = \"claude-x\"\napi_key = \"k\"\nbase_url = \"ftp://example.com\"")
            .validate()
            .unwrap_err();
    assert_eq!(error.key, "base_url");
    assert_eq!(
        anthropic("model = \"claude-x\"\napi_key = \"k\"\nmax_tokens = 0")
            .validate()
            .unwrap_err()
            .key,
        "max_tokens"
    );
    let config = anthropic("model = \"claude-x\"\napi_key = \"k\"");
    config.validate().unwrap();
    assert_eq!(config.provider, ProviderKind::Anthropic);
    let provider = AnthropicProvider::new(&config).unwrap();
    assert_eq!(provider.endpoint(), "https://api.anthropic.com/v1/messages");
    assert_eq!(provider.provider_name(), "anthropic");
}
