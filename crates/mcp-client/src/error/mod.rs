//! `UpstreamError`, the one error type at this crate's boundary. rmcp's and the transports'
//! errors are converted into it in one place (`from_rmcp`, with `causes` reading their
//! source chains), so nothing above this crate ever sees an SDK type name; `from_process`
//! adds what a stdio child said and how it ended.
//!
//! Every variant has a stable `code()` (used in API answers and metrics) and a `Display` that
//! is a sentence for the person who registered the server: what failed, where (the URL without
//! credentials or query, or the command) and why (connection refused, HTTP 401, the process
//! exited with status 3 and its last stderr line, …).

pub(crate) mod causes;
pub(crate) mod from_process;
pub(crate) mod from_rmcp;

use crate::server::ServerConfigError;
use crate::url_policy::UrlPolicyError;
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
    /// `target`: the URL (without credentials, query or fragment) or the command.
    #[error("could not connect to {target}: {reason}")]
    Connect { target: String, reason: String },
    /// `reason`: what it answered ("HTTP 401 Unauthorized"); `challenge`: its
    /// `WWW-Authenticate`, from which the host starts (or steps up) an OAuth authorization.
    #[error("{target} answered {reason}: it asks for credentials or refused the configured ones")]
    AuthRequired {
        target: String,
        reason: String,
        challenge: Option<AuthChallenge>,
    },
    #[error("{target} did not finish initializing within {}", human_duration(*after))]
    InitTimeout { target: String, after: Duration },
    #[error("could not initialize a session with {target}: {reason}")]
    Initialize { target: String, reason: String },
    #[error("{message} (the server is in error; the next attempt is in {retry_in_secs} s)")]
    SessionUnavailable { message: String, retry_in_secs: u64 },
    #[error("the connection to the upstream was lost: {0}")]
    ConnectionLost(String),
    #[error(
        "the call did not finish within {}; the upstream was told to cancel it",
        human_duration(*.0)
    )]
    Timeout(Duration),
    #[error("the call was cancelled")]
    Cancelled,
    #[error(
        "the upstream's answer was larger than the {} limit and was refused",
        human_bytes(*limit)
    )]
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
    #[error(
        "too many calls in flight (the {scope} limit is {limit}); waited {}",
        human_duration(*waited)
    )]
    Busy {
        scope: &'static str,
        limit: usize,
        waited: Duration,
    },
    #[error("the upstream broke the protocol: {0}")]
    Protocol(String),
    #[error("the MCP client is shutting down")]
    ShuttingDown,
    /// The upstream's call asked for input (2026-07-28's `input_required`: a form, a model's
    /// completion) that no one here could give.
    #[error("the tool asked for {method}, which could not be answered: {reason}")]
    InputUnanswered {
        method: &'static str,
        reason: String,
    },
    /// A task (the call's `tools/call` answered with one) ended `failed` or `cancelled`
    /// upstream, or asked for input the host cannot give.
    #[error("the tool's task {task_id} {reason}")]
    TaskFailed { task_id: String, reason: String },
    /// A task outlived `mcp.task_max_secs` or its own `ttl`: it was cancelled upstream.
    #[error(
        "the tool's task {task_id} did not finish within {} ({limit}); it was cancelled",
        human_duration(*after)
    )]
    TaskExpired {
        task_id: String,
        after: Duration,
        limit: &'static str,
    },
    /// The caller's `detach` fired while a task worked: it was left running upstream, not
    /// cancelled, for whoever follows its id next (a host that stops keeps it for its
    /// restart). The call has no outcome yet.
    #[error("the tool's task {task_id} was left running upstream, to be followed again")]
    TaskDetached { task_id: String },
}

/// An upstream's `WWW-Authenticate` challenge (RFC 6750, RFC 9728 `resource_metadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthChallenge {
    /// The header's value, as received.
    pub www_authenticate: String,
    /// A 403 `insufficient_scope`: the token is valid but lacks a scope (a step-up is due).
    pub insufficient_scope: bool,
}

impl UpstreamError {
    /// The upstream's challenge, when it asked for (other) credentials with one.
    pub fn auth_challenge(&self) -> Option<&AuthChallenge> {
        match self {
            UpstreamError::AuthRequired { challenge, .. } => challenge.as_ref(),
            _ => None,
        }
    }

    /// Stable snake_case identifier for API answers, metrics labels and the chat engine.
    pub fn code(&self) -> &'static str {
        match self {
            UpstreamError::Config(_) => "invalid_config",
            UpstreamError::UrlPolicy(_) => "url_policy",
            UpstreamError::Spawn { .. } => "spawn_failed",
            UpstreamError::Connect { .. } => "connect_failed",
            UpstreamError::AuthRequired { .. } => "needs_auth",
            UpstreamError::InitTimeout { .. } => "init_timeout",
            UpstreamError::Initialize { .. } => "init_failed",
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
            UpstreamError::InputUnanswered { .. } => "input_unanswered",
            UpstreamError::TaskFailed { .. } => "task_failed",
            UpstreamError::TaskExpired { .. } => "task_expired",
            UpstreamError::TaskDetached { .. } => "task_detached",
        }
    }

    /// Whether starting the session again soon may succeed. Configuration, policy, missing
    /// programs and refused credentials do not fix themselves, so they are not retried.
    pub fn is_retryable_start(&self) -> bool {
        matches!(
            self,
            UpstreamError::Connect { .. }
                | UpstreamError::InitTimeout { .. }
                | UpstreamError::Initialize { .. }
                | UpstreamError::ConnectionLost(_)
                | UpstreamError::Protocol(_)
        )
    }

    /// Whether the request certainly never reached the upstream because its server could not
    /// be reached (connection refused, unresolvable name, TLS handshake, connect timeout):
    /// the call did not run, and sending it again is safe.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, UpstreamError::Connect { .. })
    }

    /// Whether the failure means the session's transport is gone.
    pub fn is_connection_failure(&self) -> bool {
        matches!(self, UpstreamError::ConnectionLost(_))
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
}

/// "10 s", "1.5 s", "700 ms" — as people write durations.
pub fn human_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        format!("{millis} ms")
    } else if millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

/// "10 MiB", "64 KiB", "1500 bytes".
pub fn human_bytes(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthesized_size_errors_map_to_response_too_large() {
        let error =
            UpstreamError::from_error_data(RESPONSE_TOO_LARGE_CODE, "too big".into(), None, 1024);
        assert!(matches!(
            error,
            UpstreamError::ResponseTooLarge { limit: 1024 }
        ));
        assert_eq!(
            error.to_string(),
            "the upstream's answer was larger than the 1 KiB limit and was refused"
        );
        let error = UpstreamError::from_error_data(-32602, "bad params".into(), None, 1024);
        assert_eq!(error.code(), "upstream_error");
    }

    #[test]
    fn durations_and_sizes_read_as_people_write_them() {
        assert_eq!(human_duration(Duration::from_secs(10)), "10 s");
        assert_eq!(human_duration(Duration::from_millis(700)), "700 ms");
        assert_eq!(human_duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(human_bytes(10 * 1024 * 1024), "10 MiB");
        assert_eq!(human_bytes(1500), "1500 bytes");
        let timeout = UpstreamError::InitTimeout {
            target: "http://127.0.0.1:9/mcp".into(),
            after: Duration::from_secs(10),
        };
        assert_eq!(
            timeout.to_string(),
            "http://127.0.0.1:9/mcp did not finish initializing within 10 s"
        );
    }
}
