//! The `openai` provider: OpenAI-compatible Chat Completions over reqwest, streamed as SSE.
//!
//! Covers OpenAI, Ollama, vLLM, llama.cpp server, LM Studio and Gemini's OpenAI-compatible
//! endpoint. Owns: the HTTP exchange, retries (429/5xx/connection failures, exponential
//! backoff honouring `Retry-After`, only before any token reached the caller), timeouts
//! (connect, response headers, idle between events), and cancellation (dropping the stream
//! drops the response body, which closes the connection and so aborts the generation).
//!
//! Why a focused client rather than `async-openai` (0.43, which does use reqwest 0.13, so no
//! second HTTP stack): its typed chunks require `index` on tool-call deltas, which Gemini's
//! endpoint omits, so those streams fail to deserialize; its retry layer does not know
//! whether tokens were already streamed; its stream errors lose the status and body we report
//! in `LlmError`; and with its bring-your-own-types mode it would reduce to the `POST` that
//! reqwest already does. What we need — one endpoint, lenient chunk parsing, our retry rule —
//! is a few hundred lines here; SSE framing comes from `sse-stream`.

mod chunk_decoder;
mod tool_call_assembly;
mod wire;

use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use sse_stream::SseByteStream;

use crate::config::LlmConfig;
use crate::error::{LlmError, TimeoutPhase};
use crate::http::{HttpEndpoint, endpoint_url, error_chain, sensitive};
use crate::provider::{LlmEvent, LlmEventStream, LlmProvider, LlmRequest};
use chunk_decoder::ChunkDecoder;

/// The `[llm] base_url` of the `openai` provider when none is configured.
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// An OpenAI-compatible Chat Completions endpoint. Cheap to clone.
#[derive(Clone, Debug)]
pub struct OpenAiProvider {
    inner: Arc<OpenAiInner>,
}

#[derive(Debug)]
struct OpenAiInner {
    /// `{base_url}/chat/completions`, with the bearer key when one is configured.
    http: HttpEndpoint,
    model: String,
    include_usage: bool,
    /// `openai` or `azure_openai`.
    name: &'static str,
    /// Azure's deployment endpoint, whose URL names the model; `None`: always `http.url`.
    deployment: Option<AzureDeployment>,
}

/// `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version={api_version}`.
#[derive(Debug)]
struct AzureDeployment {
    endpoint: url::Url,
    api_version: String,
}

impl AzureDeployment {
    fn url(&self, deployment: &str) -> String {
        let mut url = self.endpoint.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().extend([
                "openai",
                "deployments",
                deployment,
                "chat",
                "completions",
            ]);
        }
        url.query_pairs_mut()
            .clear()
            .append_pair("api-version", &self.api_version);
        url.to_string()
    }
}

impl OpenAiProvider {
    /// Builds the provider from an already validated configuration.
    pub fn new(config: &LlmConfig) -> Result<Self, LlmError> {
        let base_url = config.base_url_or(DEFAULT_OPENAI_BASE_URL);
        let endpoint = endpoint_url(base_url, "/chat/completions")?;
        let mut headers = HeaderMap::new();
        if let Some(key) = config
            .api_key
            .as_ref()
            .filter(|key| !key.expose().is_empty())
        {
            let value =
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    LlmError::Configuration("llm.api_key is not a valid header value".to_owned())
                })?;
            headers.insert(AUTHORIZATION, sensitive(value));
        }
        Ok(Self {
            inner: Arc::new(OpenAiInner {
                http: HttpEndpoint::new(config, endpoint, headers)?,
                model: config.model.clone(),
                include_usage: config.include_usage,
                name: "openai",
                deployment: None,
            }),
        })
    }

    /// Azure OpenAI (`azure_openai`): the same Chat Completions wire; the key goes in the
    /// `api-key` header, and requests go to the deployment named by the model
    /// (`{endpoint}/openai/deployments/{model}/chat/completions?api-version=…`) when
    /// `api_version` is set, else to the v1 endpoint (`{endpoint}/openai/v1/chat/completions`,
    /// model in the body).
    pub fn azure(config: &LlmConfig) -> Result<Self, LlmError> {
        let endpoint = url::Url::parse(&config.base_url).map_err(|error| {
            LlmError::Configuration(format!(
                "the Azure OpenAI endpoint '{}' is not a URL: {error}",
                config.base_url
            ))
        })?;
        let key = config
            .api_key
            .as_ref()
            .filter(|key| !key.expose().trim().is_empty())
            .ok_or_else(|| {
                LlmError::Configuration("an azure_openai provider needs its api_key".to_owned())
            })?;
        let key = HeaderValue::from_str(key.expose()).map_err(|_| {
            LlmError::Configuration("llm.api_key is not a valid header value".to_owned())
        })?;
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("api-key"), sensitive(key));
        let v1_url = endpoint_url(endpoint.as_str(), "/openai/v1/chat/completions")?;
        let deployment = (!config.api_version.trim().is_empty()).then(|| AzureDeployment {
            endpoint,
            api_version: config.api_version.trim().to_owned(),
        });
        Ok(Self {
            inner: Arc::new(OpenAiInner {
                http: HttpEndpoint::new(config, v1_url, headers)?,
                model: config.model.clone(),
                include_usage: config.include_usage,
                name: "azure_openai",
                deployment,
            }),
        })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.inner.http.url
    }
}

#[async_trait]
impl LlmProvider for OpenAiProvider {
    fn provider_name(&self) -> &str {
        self.inner.name
    }

    fn default_model(&self) -> &str {
        &self.inner.model
    }

    async fn stream_chat(&self, request: LlmRequest) -> Result<LlmEventStream, LlmError> {
        request.validate()?;
        let model = request.model_or(&self.inner.model)?;
        let body = Arc::new(wire::request_body(
            &request,
            model,
            self.inner.include_usage,
        ));
        let url = match &self.inner.deployment {
            Some(deployment) => deployment.url(model),
            None => self.inner.http.url.clone(),
        };
        let (response, retries_done) = self.inner.http.send_with_retries_to(&url, &body, 0).await?;
        let state = ResponseStream::start(self.inner.clone(), url, body, response, retries_done);
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

/// One streaming response being decoded; reconnects (with the same body) if the connection
/// breaks before any event was handed out and retries remain.
struct ResponseStream {
    inner: Arc<OpenAiInner>,
    /// Where the request went (the same again on a reconnect).
    url: String,
    body: Arc<Value>,
    source: ResponseSource,
    decoder: ChunkDecoder,
    handed_out_any_event: bool,
    retries_done: u32,
    ended: bool,
}

enum ResponseSource {
    Sse(SseEvents),
    /// A server that ignored `stream: true` and answered one JSON document.
    WholeJson(Option<reqwest::Response>),
}

impl ResponseStream {
    fn start(
        inner: Arc<OpenAiInner>,
        url: String,
        body: Arc<Value>,
        response: reqwest::Response,
        retries_done: u32,
    ) -> Self {
        Self {
            inner,
            url,
            body,
            source: ResponseSource::from_response(response),
            decoder: ChunkDecoder::default(),
            handed_out_any_event: false,
            retries_done,
            ended: false,
        }
    }

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
                if !self.handed_out_any_event && self.is_worth_reconnecting(&error) {
                    match self.reconnect(error).await {
                        Ok(()) => continue,
                        Err(error) => return Some(Err(self.end_with(error))),
                    }
                }
                return Some(Err(self.end_with(error)));
            }
        }
    }

    fn end_with(&mut self, error: LlmError) -> LlmError {
        self.ended = true;
        error
    }

    /// Reads the next piece of the response into the decoder.
    async fn advance(&mut self) -> Result<(), LlmError> {
        let idle_timeout = self.inner.http.stream_idle_timeout;
        match &mut self.source {
            ResponseSource::Sse(events) => {
                match tokio::time::timeout(idle_timeout, events.next()).await {
                    Err(_) => Err(LlmError::Timeout {
                        phase: TimeoutPhase::StreamIdle,
                        after: idle_timeout,
                    }),
                    Ok(None) => self.decoder.on_end_of_stream(),
                    Ok(Some(Ok(event))) => match event.data {
                        Some(data) => self.decoder.on_data(&data),
                        None => Ok(()),
                    },
                    Ok(Some(Err(sse_stream::Error::Body(error)))) => {
                        Err(LlmError::StreamInterrupted {
                            detail: error.to_string(),
                        })
                    }
                    Ok(Some(Err(error))) => Err(LlmError::MalformedStream {
                        detail: error.to_string(),
                    }),
                }
            }
            ResponseSource::WholeJson(response) => {
                let Some(response) = response.take() else {
                    return self.decoder.on_end_of_stream();
                };
                let text = tokio::time::timeout(idle_timeout, response.text())
                    .await
                    .map_err(|_| LlmError::Timeout {
                        phase: TimeoutPhase::StreamIdle,
                        after: idle_timeout,
                    })?
                    .map_err(|error| LlmError::StreamInterrupted {
                        detail: error_chain(&error),
                    })?;
                self.decoder.on_data(&text)?;
                self.decoder.finish();
                Ok(())
            }
        }
    }

    fn is_worth_reconnecting(&self, error: &LlmError) -> bool {
        matches!(
            error,
            LlmError::StreamInterrupted { .. } | LlmError::StreamEndedEarly
        ) && self.retries_done < self.inner.http.retry_policy.max_retries
    }

    async fn reconnect(&mut self, error: LlmError) -> Result<(), LlmError> {
        let wait = self.inner.http.retry_policy.backoff(self.retries_done);
        tracing::warn!(
            endpoint = %self.url,
            wait_ms = wait.as_millis() as u64,
            %error,
            "LLM stream broke before any token, retrying"
        );
        tokio::time::sleep(wait).await;
        let (response, retries_done) = self
            .inner
            .http
            .send_with_retries_to(&self.url, &self.body, self.retries_done + 1)
            .await?;
        self.retries_done = retries_done;
        self.source = ResponseSource::from_response(response);
        self.decoder = ChunkDecoder::default();
        Ok(())
    }
}

impl ResponseSource {
    fn from_response(response: reqwest::Response) -> Self {
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("application/json"));
        if is_json {
            ResponseSource::WholeJson(Some(response))
        } else {
            ResponseSource::Sse(SseByteStream::new(response.bytes_stream()).boxed())
        }
    }
}
