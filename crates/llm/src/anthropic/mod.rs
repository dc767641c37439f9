//! The `anthropic` provider: Anthropic's native Messages API (`POST /v1/messages`,
//! `stream: true`) over reqwest, streamed as SSE.
//!
//! Native rather than through Anthropic's OpenAI-compatible endpoint because only the
//! native API has prompt caching (`cache_control`), `tool_result.is_error`, thinking blocks
//! and cache usage. Owns the wire types (`wire`), our history in its shape (`history`), the
//! event decoder (`event_decoder`) and tool-use assembly (`tool_use_assembly`); the HTTP
//! exchange, retries (429, 529 overloaded, 5xx, honouring `retry-after`) and timeouts are
//! the ones the `openai` provider uses (`crate::http`).
//!
//! Why no crate for the wire format: there is no official Rust SDK, and the community crates
//! (all 0.x) either do not stream yet (`anthropic-rs-sdk`, `anthropic-tools`) or bring their
//! own HTTP client and retry layer (`anthropic-client-rs`, `anthropic-async`), which cannot
//! know whether tokens already reached the user and would duplicate what `crate::http`
//! does. What we need of the format is a few serde types.

mod event_decoder;
mod history;
mod tool_use_assembly;
mod wire;

use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use sse_stream::SseByteStream;

use crate::config::LlmConfig;
use crate::error::{LlmError, TimeoutPhase};
use crate::http::{HttpEndpoint, endpoint_url, sensitive};
use crate::provider::{LlmEvent, LlmEventStream, LlmProvider, LlmRequest};
use event_decoder::EventDecoder;

/// The `[llm] base_url` of the `anthropic` provider when none is configured.
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// The API version we speak, sent as `anthropic-version`.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Anthropic's Messages API. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AnthropicProvider {
    inner: Arc<AnthropicInner>,
}

#[derive(Debug)]
struct AnthropicInner {
    /// `{base_url}/v1/messages` with `x-api-key` and `anthropic-version`.
    http: HttpEndpoint,
    model: String,
    max_tokens: u32,
}

impl AnthropicProvider {
    /// Builds the provider from an already validated configuration.
    pub fn new(config: &LlmConfig) -> Result<Self, LlmError> {
        let url = endpoint_url(
            config.base_url_or(DEFAULT_ANTHROPIC_BASE_URL),
            "/v1/messages",
        )?;
        let key = config
            .api_key
            .as_ref()
            .filter(|key| !key.expose().trim().is_empty())
            .ok_or_else(|| {
                LlmError::Configuration(
                    "llm.api_key is required for the anthropic provider".to_owned(),
                )
            })?;
        let key = HeaderValue::from_str(key.expose()).map_err(|_| {
            LlmError::Configuration("llm.api_key is not a valid header value".to_owned())
        })?;
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-api-key"), sensitive(key));
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        Ok(Self {
            inner: Arc::new(AnthropicInner {
                http: HttpEndpoint::new(config, url, headers)?,
                model: config.model.clone(),
                max_tokens: config.max_tokens,
            }),
        })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.inner.http.url
    }
}

#[async_trait]
impl LlmProvider for AnthropicProvider {
    fn provider_name(&self) -> &str {
        "anthropic"
    }

    fn default_model(&self) -> &str {
        &self.inner.model
    }

    async fn stream_chat(&self, request: LlmRequest) -> Result<LlmEventStream, LlmError> {
        request.validate()?;
        let model = request.model_or(&self.inner.model)?;
        let body = history::messages_request(&request, model, self.inner.max_tokens);
        let body = Arc::new(serde_json::to_value(&body).map_err(|error| {
            LlmError::InvalidRequest(format!("the request cannot be encoded: {error}"))
        })?);
        let (response, retries_done) = self.inner.http.send_with_retries(&body, 0).await?;
        let state = ResponseStream {
            inner: self.inner.clone(),
            body,
            events: sse_events(response),
            decoder: EventDecoder::default(),
            handed_out_any_event: false,
            retries_done,
            ended: false,
        };
        Ok(Box::pin(futures::stream::unfold(
            state,
            |mut state| async move {
                let item = state.next_event().await?;
                Some((item, state))
            },
        )))
    }
}

type SseEvents = futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;

fn sse_events(response: reqwest::Response) -> SseEvents {
    SseByteStream::new(response.bytes_stream()).boxed()
}

/// One streaming response being decoded; reconnects (same body) if the connection breaks
/// before any event was handed out and retries remain.
struct ResponseStream {
    inner: Arc<AnthropicInner>,
    body: Arc<Value>,
    events: SseEvents,
    decoder: EventDecoder,
    handed_out_any_event: bool,
    retries_done: u32,
    ended: bool,
}

impl ResponseStream {
    async fn next_event(&mut self) -> Option<Result<LlmEvent, LlmError>> {
        loop {
            if let Some(event) = self.decoder.pop() {
                self.handed_out_any_event = true;
                return Some(Ok(event));
            }
            if self.ended || self.decoder.is_finished() {
                return None;
            }
            if let Err(error) = self.advance().await {
                let worth_reconnecting = !self.handed_out_any_event
                    && matches!(
                        error,
                        LlmError::StreamInterrupted { .. } | LlmError::StreamEndedEarly
                    )
                    && self.retries_done < self.inner.http.retry_policy.max_retries;
                let error = if worth_reconnecting {
                    match self.reconnect(error).await {
                        Ok(()) => continue,
                        Err(error) => error,
                    }
                } else {
                    error
                };
                self.ended = true;
                return Some(Err(error));
            }
        }
    }

    /// Reads the next SSE event into the decoder.
    async fn advance(&mut self) -> Result<(), LlmError> {
        let idle_timeout = self.inner.http.stream_idle_timeout;
        match tokio::time::timeout(idle_timeout, self.events.next()).await {
            Err(_) => Err(LlmError::Timeout {
                phase: TimeoutPhase::StreamIdle,
                after: idle_timeout,
            }),
            Ok(None) => self.decoder.on_end_of_stream(),
            Ok(Some(Ok(event))) => match event.data {
                Some(data) => self.decoder.on_data(&data),
                None => Ok(()),
            },
            Ok(Some(Err(sse_stream::Error::Body(error)))) => Err(LlmError::StreamInterrupted {
                detail: error.to_string(),
            }),
            Ok(Some(Err(error))) => Err(LlmError::MalformedStream {
                detail: error.to_string(),
            }),
        }
    }

    async fn reconnect(&mut self, error: LlmError) -> Result<(), LlmError> {
        let wait = self.inner.http.retry_policy.backoff(self.retries_done);
        tracing::warn!(
            endpoint = %self.inner.http.url,
            wait_ms = wait.as_millis() as u64,
            %error,
            "LLM stream broke before any token, retrying"
        );
        tokio::time::sleep(wait).await;
        let (response, retries_done) = self
            .inner
            .http
            .send_with_retries(&self.body, self.retries_done + 1)
            .await?;
        self.retries_done = retries_done;
        self.events = sse_events(response);
        self.decoder = EventDecoder::default();
        Ok(())
    }
}
