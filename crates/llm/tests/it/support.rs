//! Helpers the `openai` tests share: a provider pointed at the scripted fake server, and
//! draining a stream into events, so each test states only its script and what it expects.

use futures::StreamExt;
use switchboard_llm::{LlmConfig, LlmError, LlmEvent, LlmEventStream, ProviderKind};
use switchboard_test_support::fake_openai::FakeOpenAi;

/// An `openai` configuration for the fake, with short backoffs so retries are quick.
pub fn config_for(fake: &FakeOpenAi) -> LlmConfig {
    config_for_base_url(&fake.base_url())
}

pub fn config_for_base_url(base_url: &str) -> LlmConfig {
    let config = LlmConfig {
        provider: ProviderKind::Openai,
        base_url: base_url.to_owned(),
        api_key: Some(switchboard_llm::ApiKey::new("sk-test-key")),
        model: "fake-model".to_owned(),
        retry_base_delay_ms: 20,
        retry_max_delay_ms: 100,
        stream_idle_timeout_ms: 5_000,
        response_timeout_ms: 5_000,
        ..LlmConfig::default()
    };
    config.validate().unwrap();
    config
}

/// Every item of the stream, the error (if any) last.
pub async fn drain(mut stream: LlmEventStream) -> (Vec<LlmEvent>, Option<LlmError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => {
                assert!(stream.next().await.is_none(), "nothing after an error");
                return (events, Some(error));
            }
        }
    }
    (events, None)
}

pub fn text_of(events: &[LlmEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            LlmEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
