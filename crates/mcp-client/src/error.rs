//! `UpstreamError`, the one error type at this crate's boundary, and the single place where
//! rmcp's and the transports' errors are converted into it.
//!
//! Every variant has a stable `code()` (used in API answers and metrics) and a message precise
//! enough to show to the person who registered the server.

use crate::server::ServerConfigError;
use crate::url_policy::UrlPolicyError;
use rmcp::service::{ClientInitializeError, ServiceError};
use serde_json::Value;
use std::time::Duration;

/// JSON-RPC error code our own transports put in a synthesized error response when the
/// upstream's answer was larger than the configured cap (the answer itself is never buffered).
pub const RESPONSE_TOO_LARGE_CODE: i32 = -32098;

#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    #[error("invalid server configuration: {0}")]
    Config(#[from] ServerConfigError),
    #[error("the URL policy refused the connection: {0}")]
    UrlPolicy(#[from] UrlPolicyError),
    #[error("could not start `{command}`: {message}")]
    Spawn { command: String, message: String },
    #[error("could not connect: {0}")]
    Connect(String),
    #[error("the upstream requires credentials or refused them: {0}")]
    AuthRequired(String),
    #[error("the session did not initialize within {0:?}")]
    InitTimeout(Duration),
    #[error("initialization failed: {0}")]
    Initialize(String),
    #[error("the server is in ERROR (next attempt in {retry_in_secs} s): {message}")]
    SessionUnavailable { message: String, retry_in_secs: u64 },
    #[error("the connection to the upstream was lost: {0}")]
    ConnectionLost(String),
    #[error("the call did not finish within {0:?}; cancellation was sent to the upstream")]
    Timeout(Duration),
    #[error("the call was cancelled")]
    Cancelled,
    #[error("the upstream's response exceeded the {limit} byte limit and was refused")]
    ResponseTooLarge { limit: usize },
    #[error("the upstream answered with error {code}: {message}")]
    Rpc {
        code: i32,
        message: String,
        data: Option<Value>,
    },
    #[error("invalid arguments for tool '{tool}': {}", details.join("; "))]
    InvalidArguments { tool: String, details: Vec<String> },
    #[error("the server has no tool named '{0}'")]
    UnknownTool(String),
    #[error("too many calls in flight ({scope} limit {limit}); waited {waited:?}")]
    Busy {
        scope: &'static str,
        limit: usize,
        waited: Duration,
    },
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error("the MCP client is shutting down")]
    ShuttingDown,
}

impl UpstreamError {
    /// Stable snake_case identifier for API answers, metrics labels and the chat engine.
    pub fn code(&self) -> &'static str {
        match self {
            UpstreamError::Config(_) => "invalid_config",
            UpstreamError::UrlPolicy(_) => "url_policy",
            UpstreamError::Spawn { .. } => "spawn_failed",
            UpstreamError::Connect(_) => "connect_failed",
            UpstreamError::AuthRequired(_) => "needs_auth",
            UpstreamError::InitTimeout(_) => "init_timeout",
            UpstreamError::Initialize(_) => "init_failed",
            UpstreamError::SessionUnavailable { .. } => "server_unavailable",
            UpstreamError::ConnectionLost(_) => "connection_lost",
            UpstreamError::Timeout(_) => "timeout",
            UpstreamError::Cancelled => "cancelled",
            UpstreamError::ResponseTooLarge { .. } => "response_too_large",
            UpstreamError::Rpc { .. } => "upstream_error",
            UpstreamError::InvalidArguments { .. } => "invalid_arguments",
            UpstreamError::UnknownTool(_) => "unknown_tool",
            UpstreamError::Busy { .. } => "busy",
            UpstreamError::Protocol(_) => "protocol_error",
            UpstreamError::ShuttingDown => "shutting_down",
        }
    }

    /// Whether starting the session again soon may succeed. Configuration, policy, missing
    /// programs and refused credentials do not fix themselves, so they are not retried.
    pub fn is_retryable_start(&self) -> bool {
        matches!(
            self,
            UpstreamError::Connect(_)
                | UpstreamError::InitTimeout(_)
                | UpstreamError::Initialize(_)
                | UpstreamError::ConnectionLost(_)
                | UpstreamError::Protocol(_)
        )
    }

    /// Whether the failure means the session's transport is gone.
    pub fn is_connection_failure(&self) -> bool {
        matches!(self, UpstreamError::ConnectionLost(_))
    }

    pub(crate) fn from_service_error(error: ServiceError, limit: usize) -> Self {
        match error {
            ServiceError::McpError(data) => {
                Self::from_error_data(data.code.0, data.message.to_string(), data.data, limit)
            }
            ServiceError::TransportSend(transport_error) => classify_chain(&transport_error, limit)
                .unwrap_or_else(|| UpstreamError::ConnectionLost(chain_message(&transport_error))),
            ServiceError::TransportClosed => {
                UpstreamError::ConnectionLost("the transport closed".to_owned())
            }
            ServiceError::Timeout { timeout } => UpstreamError::Timeout(timeout),
            ServiceError::Cancelled { .. } => UpstreamError::Cancelled,
            ServiceError::UnexpectedResponse => {
                UpstreamError::Protocol("the upstream sent a response of the wrong type".to_owned())
            }
            other => UpstreamError::Protocol(other.to_string()),
        }
    }

    pub(crate) fn from_error_data(
        code: i32,
        message: String,
        data: Option<Value>,
        limit: usize,
    ) -> Self {
        if code == RESPONSE_TOO_LARGE_CODE {
            return UpstreamError::ResponseTooLarge { limit };
        }
        UpstreamError::Rpc {
            code,
            message,
            data,
        }
    }

    pub(crate) fn from_initialize_error(error: ClientInitializeError, limit: usize) -> Self {
        if error.is_authorization_required() {
            return UpstreamError::AuthRequired(chain_message(&error));
        }
        match error {
            ClientInitializeError::TransportError { error, context } => {
                classify_chain(&error, limit).unwrap_or_else(|| {
                    UpstreamError::Connect(format!("{} ({context})", chain_message(&error)))
                })
            }
            ClientInitializeError::ConnectionClosed(context) => UpstreamError::Initialize(format!(
                "the connection closed while waiting for the {context}"
            )),
            ClientInitializeError::JsonRpcError(data) => UpstreamError::Initialize(format!(
                "the server refused to initialize: {} (code {})",
                data.message, data.code.0
            )),
            ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
                Self::from_initialize_error(*fallback, limit)
            }
            other => UpstreamError::Initialize(other.to_string()),
        }
    }
}

type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;

/// The next cause, looking inside wrappers that do not expose theirs as `source()`.
fn next_cause<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    if let Some(dynamic) = error.downcast_ref::<rmcp::transport::DynamicTransportError>() {
        return Some(dynamic.error.as_ref());
    }
    if let Some(HttpError::Client(inner)) = error.downcast_ref::<HttpError>() {
        return Some(inner);
    }
    error.source()
}

/// Looks through an error's source chain for causes with a precise meaning.
pub(crate) fn classify_chain(
    error: &(dyn std::error::Error + 'static),
    limit: usize,
) -> Option<UpstreamError> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = current {
        if let Some(policy) = cause.downcast_ref::<UrlPolicyError>() {
            return Some(UpstreamError::UrlPolicy(policy.clone()));
        }
        if let Some(upstream) = cause.downcast_ref::<UpstreamError>() {
            return Some(upstream.clone());
        }
        match cause.downcast_ref::<HttpError>() {
            Some(HttpError::AuthRequired(_) | HttpError::InsufficientScope(_)) => {
                return Some(UpstreamError::AuthRequired(chain_message(cause)));
            }
            Some(HttpError::ResponseBodyTooLarge { .. }) => {
                return Some(UpstreamError::ResponseTooLarge { limit });
            }
            _ => {}
        }
        if let Some(status) =
            cause.downcast_ref::<rmcp::transport::streamable_http_client::HttpStatusError>()
            && (status.status == 401 || status.status == 403)
        {
            return Some(UpstreamError::AuthRequired(format!(
                "HTTP {}",
                status.status
            )));
        }
        if cause.to_string().contains("exceeded the maximum size") {
            return Some(UpstreamError::ResponseTooLarge { limit });
        }
        current = next_cause(cause);
    }
    None
}

/// "outer: inner: innermost", without repeating a cause its parent already printed and
/// without the SDK's internal type names.
pub(crate) fn chain_message(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = current {
        if !cause.is::<rmcp::transport::DynamicTransportError>() {
            let text = match cause.downcast_ref::<HttpError>() {
                Some(HttpError::Client(_)) => String::new(),
                _ => cause.to_string(),
            };
            if !text.is_empty() && !parts.iter().any(|part| part.contains(&text)) {
                parts.push(text);
            }
        }
        current = next_cause(cause);
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("connect failed")]
    struct Outer(#[source] UrlPolicyError);

    #[test]
    fn finds_policy_errors_inside_wrapped_errors() {
        let inner = UrlPolicyError::Other("'x' is a loopback address".into());
        let classified = classify_chain(&Outer(inner), 10).unwrap();
        assert_eq!(classified.code(), "url_policy");
        assert!(!classified.is_retryable_start());
    }

    #[test]
    fn synthesized_size_errors_map_to_response_too_large() {
        let error =
            UpstreamError::from_error_data(RESPONSE_TOO_LARGE_CODE, "too big".into(), None, 1024);
        assert!(matches!(
            error,
            UpstreamError::ResponseTooLarge { limit: 1024 }
        ));
        let error = UpstreamError::from_error_data(-32602, "bad params".into(), None, 1024);
        assert_eq!(error.code(), "upstream_error");
    }

    #[test]
    fn chain_messages_do_not_repeat_causes() {
        let message = chain_message(&Outer(UrlPolicyError::MissingHost));
        assert_eq!(message, "connect failed: URL has no host");
    }
}
