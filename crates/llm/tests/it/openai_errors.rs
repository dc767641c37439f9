//! The `openai` provider when things go wrong: rate limiting, 5xx, bad keys, broken streams,
//! silences and unreachable servers — each a typed `LlmError`, retried only before any token.

use std::time::{Duration, Instant};

use switchboard_core::ChatMessage;
use switchboard_llm::{
    FinishReason, LlmConfig, LlmError, LlmEvent, LlmProvider, LlmRequest, OpenAiProvider,
    TimeoutPhase,
};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply};

use crate::support::{config_for, config_for_base_url, drain, text_of};

fn hello() -> LlmRequest {
    LlmRequest::new("", vec![ChatMessage::user("hello")])
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out_then_the_answer_streams() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::rate_limited(1));
    fake.enqueue(ScriptedReply::text(&["after the wait"]));
    let provider = OpenAiProvider::new(&config_for(&fake)).unwrap();

    let (events, error) = drain(provider.stream_chat(hello()).await.unwrap()).await;

    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "after the wait");
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let waited = requests[1].received_at - requests[0].received_at;
    assert!(
        waited >= Duration::from_millis(950),
        "Retry-After: 1 honoured over the 20 ms backoff, waited {waited:?}"
    );
    assert_eq!(requests[0].body, requests[1].body, "same request resent");
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff_and_then_reported_with_the_body() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::error_status(503, "overloaded"));
    fake.enqueue(ScriptedReply::text(&["ok"]));
    let provider = OpenAiProvider::new(&config_for(&fake)).unwrap();
    let (events, error) = drain(provider.stream_chat(hello()).await.unwrap()).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "ok");

    let config = LlmConfig {
        max_retries: 2,
        ..config_for(&fake)
    };
    for _ in 0..3 {
        fake.enqueue(ScriptedReply::error_status(502, "bad gateway upstream"));
    }
    let provider = OpenAiProvider::new(&config).unwrap();
    let error = provider.stream_chat(hello()).await.err().unwrap();
    match &error {
        LlmError::UpstreamStatus {
            status,
            body_excerpt,
        } => {
            assert_eq!(*status, 502);
            assert_eq!(body_excerpt, "bad gateway upstream");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(fake.requests().len(), 2 + 3, "1 try + 2 retries");
    assert_eq!(fake.pending_replies(), 0);
}

#[tokio::test]
async fn rate_limiting_that_outlasts_the_retries_is_a_rate_limited_error() {
    let fake = FakeOpenAi::start().await;
    let config = LlmConfig {
        max_retries: 1,
        ..config_for(&fake)
    };
    fake.enqueue(ScriptedReply::rate_limited(0));
    fake.enqueue(ScriptedReply::rate_limited(0));
    let provider = OpenAiProvider::new(&config).unwrap();
    let error = provider.stream_chat(hello()).await.err().unwrap();
    assert!(
        matches!(&error, LlmError::RateLimited { retry_after: Some(wait), body_excerpt } if wait.is_zero() && body_excerpt == "Rate limit reached for requests"),
        "{error:?}"
    );
    assert_eq!(error.code(), "llm_rate_limited");

    // A Retry-After longer than we are willing to wait fails at once.
    fake.enqueue(ScriptedReply::rate_limited(3600));
    let started = Instant::now();
    let error = provider.stream_chat(hello()).await.err().unwrap();
    assert!(
        matches!(error, LlmError::RateLimited { retry_after: Some(wait), .. } if wait == Duration::from_secs(3600))
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(fake.requests().len(), 3);
}

#[tokio::test]
async fn a_bad_key_is_not_retried_and_says_why() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::error_status(
        401,
        "Incorrect API key provided: sk-test-***",
    ));
    let provider = OpenAiProvider::new(&config_for(&fake)).unwrap();
    let error = provider.stream_chat(hello()).await.err().unwrap();
    assert_eq!(
        error.to_string(),
        "the LLM provider answered HTTP 401: Incorrect API key provided: sk-test-***"
    );
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn a_failure_mid_stream_after_tokens_is_reported_not_retried() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text_then_abort(&["partial ", "answer"]));
    fake.enqueue(ScriptedReply::text(&["must not be used"]));
    let provider = OpenAiProvider::new(&config_for(&fake)).unwrap();

    let (events, error) = drain(provider.stream_chat(hello()).await.unwrap()).await;

    assert_eq!(text_of(&events), "partial answer");
    let error = error.expect("the stream ends with an error");
    assert!(
        matches!(
            error,
            LlmError::StreamInterrupted { .. } | LlmError::StreamEndedEarly
        ),
        "{error:?}"
    );
    assert_eq!(
        fake.requests().len(),
        1,
        "no retry after tokens were streamed"
    );
}

#[tokio::test]
async fn a_failure_before_any_token_is_retried() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text_then_abort(&[]));
    fake.enqueue(ScriptedReply::text(&["second try"]));
    let provider = OpenAiProvider::new(&config_for(&fake)).unwrap();
    let (events, error) = drain(provider.stream_chat(hello()).await.unwrap()).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "second try");
    assert_eq!(events.last(), Some(&LlmEvent::Finished(FinishReason::Stop)));
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn a_silent_stream_times_out() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text_then_hang(&["hm"]));
    let config = LlmConfig {
        stream_idle_timeout_ms: 300,
        ..config_for(&fake)
    };
    let provider = OpenAiProvider::new(&config).unwrap();
    let (events, error) = drain(provider.stream_chat(hello()).await.unwrap()).await;
    assert_eq!(text_of(&events), "hm");
    assert!(
        matches!(
            error,
            Some(LlmError::Timeout {
                phase: TimeoutPhase::StreamIdle,
                ..
            })
        ),
        "keep-alive comments do not count as progress: {error:?}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_waiting_for_headers() {
    // Accepted by the kernel's backlog, never answered.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let config = LlmConfig {
        response_timeout_ms: 300,
        ..config_for_base_url(&base_url)
    };
    let provider = OpenAiProvider::new(&config).unwrap();
    let error = provider.stream_chat(hello()).await.err().unwrap();
    assert!(
        matches!(
            error,
            LlmError::Timeout {
                phase: TimeoutPhase::ResponseHeaders,
                ..
            }
        ),
        "{error:?}"
    );
    drop(listener);
}

#[tokio::test]
async fn an_unreachable_server_is_a_connection_error_naming_the_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let config = LlmConfig {
        max_retries: 1,
        ..config_for_base_url(&base_url)
    };
    let provider = OpenAiProvider::new(&config).unwrap();
    let error = provider.stream_chat(hello()).await.err().unwrap();
    match error {
        LlmError::Connection { url, .. } => {
            assert_eq!(url, format!("{base_url}/chat/completions"))
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn a_forced_function_that_is_not_offered_is_refused_before_sending() {
    let fake = FakeOpenAi::start().await;
    let provider = OpenAiProvider::new(&config_for(&fake)).unwrap();
    let error = provider
        .stream_chat(
            hello().with_tool_choice(switchboard_llm::ToolChoice::Function {
                name: "nope".into(),
            }),
        )
        .await
        .err()
        .unwrap();
    assert_eq!(error.code(), "llm_invalid_request");
    assert!(fake.requests().is_empty());
}
