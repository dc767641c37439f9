//! The HTTP exchange the network providers share (`openai`, `anthropic`): one POST of a JSON
//! body with the provider's own headers, a response-header timeout, and retries of 429, 5xx
//! (Anthropic's 529 "overloaded" included) and connection failures with the backoff of
//! [`crate::retry`], honouring `Retry-After`. Each provider keeps its own wire format and
//! stream decoding; only this part is the same for all of them.

use std::error::Error as _;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use serde_json::Value;

use crate::config::LlmConfig;
use crate::error::{LlmError, TimeoutPhase, body_excerpt};
use crate::retry::{self, RetryDecision, RetryPolicy, is_retryable_status};

/// Where a provider posts, with what headers, and how patiently.
#[derive(Debug)]
pub(crate) struct HttpEndpoint {
    client: reqwest::Client,
    /// The full URL requests go to.
    pub url: String,
    /// Sent on every request (authentication, API version).
    headers: HeaderMap,
    response_timeout: Duration,
    pub stream_idle_timeout: Duration,
    pub retry_policy: RetryPolicy,
}

impl HttpEndpoint {
    /// An endpoint at `url` with `headers`, timeouts and retries from `config`.
    pub fn new(config: &LlmConfig, url: String, mut headers: HeaderMap) -> Result<Self, LlmError> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout())
            .user_agent(concat!("switchboard/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| {
                LlmError::Configuration(format!("cannot build the HTTP client: {error}"))
            })?;
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        Ok(Self {
            client,
            url,
            headers,
            response_timeout: config.response_timeout(),
            stream_idle_timeout: config.stream_idle_timeout(),
            retry_policy: RetryPolicy::from_config(config),
        })
    }

    /// Sends the request, retrying retryable failures. Returns the successful response and
    /// how many retries were spent (counting from `retries_done`).
    pub async fn send_with_retries(
        &self,
        body: &Value,
        retries_done: u32,
    ) -> Result<(reqwest::Response, u32), LlmError> {
        self.send_with_retries_to(&self.url, body, retries_done)
            .await
    }

    /// [`HttpEndpoint::send_with_retries`] to another URL with this endpoint's headers,
    /// timeouts and retries (an Azure deployment's URL, which depends on the model).
    pub async fn send_with_retries_to(
        &self,
        url: &str,
        body: &Value,
        mut retries_done: u32,
    ) -> Result<(reqwest::Response, u32), LlmError> {
        loop {
            let (error, retry_after) = match self.send_once(url, body).await {
                Ok(response) if response.status().is_success() => {
                    return Ok((response, retries_done));
                }
                Ok(response) => {
                    let status = response.status();
                    let retry_after = retry::retry_after(response.headers());
                    let excerpt = read_error_excerpt(response).await;
                    let error = if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
                        LlmError::RateLimited {
                            retry_after,
                            body_excerpt: excerpt,
                        }
                    } else {
                        LlmError::UpstreamStatus {
                            status: status.as_u16(),
                            body_excerpt: excerpt,
                        }
                    };
                    if !is_retryable_status(status) {
                        return Err(error);
                    }
                    (error, retry_after)
                }
                Err(error @ LlmError::Connection { .. }) => (error, None),
                Err(error) => return Err(error),
            };
            match self.retry_policy.decide(retries_done, retry_after) {
                RetryDecision::RetryAfter(wait) => {
                    tracing::warn!(
                        endpoint = %url,
                        attempt = retries_done + 1,
                        wait_ms = wait.as_millis() as u64,
                        %error,
                        "LLM request failed, retrying"
                    );
                    tokio::time::sleep(wait).await;
                    retries_done += 1;
                }
                RetryDecision::GiveUp => return Err(error),
            }
        }
    }

    async fn send_once(&self, url: &str, body: &Value) -> Result<reqwest::Response, LlmError> {
        let request = self
            .client
            .post(url)
            .headers(self.headers.clone())
            .json(body);
        match tokio::time::timeout(self.response_timeout, request.send()).await {
            Err(_) => Err(LlmError::Timeout {
                phase: TimeoutPhase::ResponseHeaders,
                after: self.response_timeout,
            }),
            Ok(Ok(response)) => Ok(response),
            Ok(Err(error)) if error.is_timeout() && error.is_connect() => Err(LlmError::Timeout {
                phase: TimeoutPhase::Connect,
                after: self.response_timeout,
            }),
            Ok(Err(error)) => Err(LlmError::Connection {
                url: url.to_owned(),
                detail: error_chain(&error),
            }),
        }
    }
}

/// Reads at most a few KiB of an error response, quickly.
async fn read_error_excerpt(response: reqwest::Response) -> String {
    const MAX_BYTES: usize = 16 * 1024;
    let mut collected = Vec::new();
    let mut chunks = response.bytes_stream();
    let read = async {
        while let Some(Ok(chunk)) = chunks.next().await {
            collected.extend_from_slice(&chunk);
            if collected.len() >= MAX_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(5), read).await;
    body_excerpt(&String::from_utf8_lossy(&collected))
}

/// "outer: inner: innermost", without repeating reqwest's URL prefix noise twice.
pub(crate) fn error_chain(error: &reqwest::Error) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = error.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        source = inner.source();
    }
    parts.join(": ")
}

/// The endpoint URL: `base_url` (trailing slashes dropped) followed by `path`.
pub(crate) fn endpoint_url(base_url: &str, path: &str) -> Result<String, LlmError> {
    let base = url::Url::parse(base_url).map_err(|error| {
        LlmError::Configuration(format!("llm.base_url '{base_url}' is not a URL: {error}"))
    })?;
    Ok(format!("{}{path}", base.as_str().trim_end_matches('/')))
}

/// Marks a header value (a key) as secret so it is never printed.
pub(crate) fn sensitive(mut value: HeaderValue) -> HeaderValue {
    value.set_sensitive(true);
    value
}
