//! `LlmError`: everything that can go wrong between the chat engine and a model, typed so the
//! chat engine can tell the user precisely what happened (and decide what is worth retrying).
//!
//! Foreign errors (reqwest, serde_json, SSE decoding) are converted in the provider modules
//! that meet them; nothing outside this crate sees them.

use std::time::Duration;

use thiserror::Error;

/// Which wait ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the TCP/TLS connection.
    Connect,
    /// Waiting for the response status and headers.
    ResponseHeaders,
    /// Waiting for the next streamed event after the previous one.
    StreamIdle,
}

impl std::fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Connect => "connecting",
            TimeoutPhase::ResponseHeaders => "waiting for the response headers",
            TimeoutPhase::StreamIdle => "waiting for the next streamed event",
        })
    }
}

#[derive(Debug, Error)]
pub enum LlmError {
    /// The upstream answered 429 and retries were exhausted, or it asked us to wait longer
    /// than we are willing to.
    #[error("the LLM provider is rate limiting requests (HTTP 429{}): {body_excerpt}", retry_after_text(*.retry_after))]
    RateLimited {
        retry_after: Option<Duration>,
        body_excerpt: String,
    },

    /// The upstream answered with a non-success status (after retries, for 5xx).
    #[error("the LLM provider answered HTTP {status}: {body_excerpt}")]
    UpstreamStatus { status: u16, body_excerpt: String },

    /// A wait ran out.
    #[error("the LLM provider timed out after {} ms while {phase}", after.as_millis())]
    Timeout {
        phase: TimeoutPhase,
        after: Duration,
    },

    /// The connection could not be made or broke (DNS, refused, reset, TLS).
    #[error("could not reach the LLM provider at {url}: {detail}")]
    Connection { url: String, detail: String },

    /// The stream did not follow the provider's streaming format.
    #[error("the LLM provider sent a malformed stream: {detail}")]
    MalformedStream { detail: String },

    /// The connection broke while the answer was streaming.
    #[error("the connection to the LLM provider broke mid-stream: {detail}")]
    StreamInterrupted { detail: String },

    /// The upstream closed the stream before finishing the answer.
    #[error("the LLM provider closed the stream before the answer was finished")]
    StreamEndedEarly,

    /// The upstream reported an error inside the stream (an `error` object in a chunk, or
    /// Anthropic's `error` event).
    #[error("the LLM provider reported an error mid-stream: {message}")]
    UpstreamReportedError { message: String },

    /// The request itself cannot be sent (caller's mistake).
    #[error("invalid LLM request: {0}")]
    InvalidRequest(String),

    /// The provider is misconfigured (bad base URL, unsupported option).
    #[error("invalid LLM configuration: {0}")]
    Configuration(String),
}

impl LlmError {
    /// A stable machine-readable code for SSE `error` events and logs.
    pub fn code(&self) -> &'static str {
        match self {
            LlmError::RateLimited { .. } => "llm_rate_limited",
            LlmError::UpstreamStatus { .. } => "llm_upstream_status",
            LlmError::Timeout { .. } => "llm_timeout",
            LlmError::Connection { .. } => "llm_unreachable",
            LlmError::MalformedStream { .. } => "llm_malformed_stream",
            LlmError::StreamInterrupted { .. } => "llm_stream_interrupted",
            LlmError::StreamEndedEarly => "llm_stream_ended_early",
            LlmError::UpstreamReportedError { .. } => "llm_upstream_error",
            LlmError::InvalidRequest(_) => "llm_invalid_request",
            LlmError::Configuration(_) => "llm_configuration",
        }
    }

    /// Whether another provider is worth asking instead (a fallback chain): the provider is
    /// unavailable or overloaded (5xx, 529, 429, a timeout, no connection, an `overloaded`
    /// error event), not the request at fault (4xx, malformed request or configuration).
    /// Only meaningful before anything was streamed.
    pub fn warrants_fallback(&self) -> bool {
        match self {
            LlmError::RateLimited { .. }
            | LlmError::Timeout { .. }
            | LlmError::Connection { .. }
            | LlmError::StreamEndedEarly
            | LlmError::StreamInterrupted { .. } => true,
            LlmError::UpstreamStatus { status, .. } => *status >= 500,
            LlmError::UpstreamReportedError { message } => {
                message.to_ascii_lowercase().contains("overloaded")
            }
            LlmError::MalformedStream { .. }
            | LlmError::InvalidRequest(_)
            | LlmError::Configuration(_) => false,
        }
    }
}

fn retry_after_text(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(wait) => format!(", retry after {} s", wait.as_secs_f64().ceil() as u64),
        None => String::new(),
    }
}

/// Cuts an upstream body to a readable excerpt: the `error.message` of an OpenAI- or
/// Anthropic-style error object when there is one, else the text, at most `MAX_CHARS` characters.
pub(crate) fn body_excerpt(body: &str) -> String {
    const MAX_CHARS: usize = 500;
    let from_json = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|value| {
            let error = value.get("error")?;
            error
                .get("message")
                .and_then(|message| message.as_str())
                .map(str::to_owned)
                .or_else(|| error.as_str().map(str::to_owned))
        });
    let text = from_json.unwrap_or_else(|| body.trim().to_owned());
    if text.is_empty() {
        return "(empty body)".to_owned();
    }
    let mut excerpt: String = text.chars().take(MAX_CHARS).collect();
    if text.chars().count() > MAX_CHARS {
        excerpt.push('…');
    }
    excerpt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_excerpt_prefers_the_openai_error_message_and_truncates() {
        assert_eq!(
            body_excerpt(
                r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#
            ),
            "Incorrect API key provided"
        );
        assert_eq!(
            body_excerpt(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(body_excerpt("  \n"), "(empty body)");
        let long = "x".repeat(600);
        let excerpt = body_excerpt(&long);
        assert_eq!(excerpt.chars().count(), 501);
        assert!(excerpt.ends_with('…'));
    }

    #[test]
    fn messages_say_what_happened() {
        let error = LlmError::RateLimited {
            retry_after: Some(Duration::from_millis(1500)),
            body_excerpt: "slow down".to_owned(),
        };
        assert_eq!(
            error.to_string(),
            "the LLM provider is rate limiting requests (HTTP 429, retry after 2 s): slow down"
        );
        assert_eq!(error.code(), "llm_rate_limited");
        let timeout = LlmError::Timeout {
            phase: TimeoutPhase::StreamIdle,
            after: Duration::from_millis(250),
        };
        assert_eq!(
            timeout.to_string(),
            "the LLM provider timed out after 250 ms while waiting for the next streamed event"
        );
    }

    #[test]
    fn only_unavailable_or_overloaded_providers_warrant_a_fallback() {
        let status = |status| LlmError::UpstreamStatus {
            status,
            body_excerpt: String::new(),
        };
        assert!(status(503).warrants_fallback());
        assert!(status(529).warrants_fallback());
        assert!(!status(400).warrants_fallback());
        assert!(!status(401).warrants_fallback());
        let overloaded = LlmError::UpstreamReportedError {
            message: "Overloaded (overloaded_error)".to_owned(),
        };
        assert!(overloaded.warrants_fallback());
        assert!(!LlmError::InvalidRequest("x".to_owned()).warrants_fallback());
    }
}
