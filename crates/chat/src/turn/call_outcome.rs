//! How a tool call ends, decided without IO: the model's arguments parsed into an object,
//! and an upstream outcome mapped to its final recorded state — a definite answer is
//! `completed` (or `failed` when the tool reported an error), a call that never reached the
//! upstream is `failed`, a call that may have run but whose answer we lack is `unknown`.

use serde_json::{Map, Value};
use std::time::Duration;
use switchboard_core::ToolCallState;
use switchboard_mcp_client::{ToolResult, UpstreamError, json_kind};

/// How a call ended, before it is written down.
pub(crate) struct Settled {
    pub state: ToolCallState,
    pub result: Option<ToolResult>,
    /// (code, message) of a failure.
    pub error: Option<(String, String)>,
    pub duration: Option<Duration>,
}

pub(crate) fn failure(state: ToolCallState, code: &str, message: String) -> Settled {
    Settled {
        state,
        result: None,
        error: Some((code.to_owned(), message)),
        duration: None,
    }
}

/// Where a dispatched call ends: a definite answer is `completed` (or `failed` when the tool
/// reported an error); a call that never reached the upstream is `failed`; a call that may
/// have run but whose answer we do not have (connection lost, timeout, cancellation) is
/// `unknown`.
pub(crate) fn settle(outcome: Result<ToolResult, UpstreamError>, duration: Duration) -> Settled {
    match outcome {
        Ok(result) if result.is_error => Settled {
            state: ToolCallState::Failed,
            error: Some(("tool_error".to_owned(), result.text_for_model())),
            result: Some(result),
            duration: Some(duration),
        },
        Ok(result) => Settled {
            state: ToolCallState::Completed,
            result: Some(result),
            error: None,
            duration: Some(duration),
        },
        Err(error) => {
            let state = match error {
                UpstreamError::ConnectionLost(_)
                | UpstreamError::Timeout(_)
                | UpstreamError::Cancelled
                | UpstreamError::Protocol(_) => ToolCallState::Unknown,
                _ => ToolCallState::Failed,
            };
            let mut message = error.to_string();
            if state == ToolCallState::Unknown {
                message.push_str(" (the call may have run upstream; its outcome is unknown and it is not retried)");
            } else if error.is_unreachable() {
                message.push_str(
                    " (the server is unreachable: the call was not sent, so it did not run)",
                );
            }
            Settled {
                state,
                result: None,
                error: Some((error.code().to_owned(), message)),
                duration: Some(duration),
            }
        }
    }
}

/// The model's arguments text as a JSON object (`""` counts as `{}`).
pub(crate) fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(Value::Object(map)),
        Ok(other) => Err(format!(
            "the arguments must be a JSON object, got {}",
            json_kind(&other)
        )),
        Err(error) => Err(format!("the arguments are not valid JSON: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_must_be_a_json_object() {
        assert_eq!(parse_arguments("").unwrap(), json!({}));
        assert_eq!(parse_arguments("{\"a\":1}").unwrap(), json!({"a": 1}));
        assert!(parse_arguments("[1]").unwrap_err().contains("an array"));
        assert!(
            parse_arguments("{\"a\":")
                .unwrap_err()
                .contains("not valid JSON")
        );
    }

    #[test]
    fn lost_answers_are_unknown_and_refusals_are_failed() {
        let unknown = settle(
            Err(UpstreamError::ConnectionLost("eof".into())),
            Duration::ZERO,
        );
        assert_eq!(unknown.state, ToolCallState::Unknown);
        assert!(unknown.error.unwrap().1.contains("not retried"));
        let timeout = settle(
            Err(UpstreamError::Timeout(Duration::from_secs(1))),
            Duration::ZERO,
        );
        assert_eq!(timeout.state, ToolCallState::Unknown);
        let refused = settle(
            Err(UpstreamError::Connect {
                target: "http://127.0.0.1:9/mcp".into(),
                reason: "connection refused".into(),
            }),
            Duration::ZERO,
        );
        assert_eq!(refused.state, ToolCallState::Failed);
        assert!(refused.error.unwrap().1.contains("unreachable"));
        let tool_error = settle(Ok(ToolResult::error_text("bad")), Duration::ZERO);
        assert_eq!(tool_error.state, ToolCallState::Failed);
        assert_eq!(tool_error.error.unwrap().0, "tool_error");
    }
}
