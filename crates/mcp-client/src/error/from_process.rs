//! Errors explained by a stdio child's fate: a command that could not be started, and the
//! child's exit status and stderr tail added to (or, when it exited, replacing) a transport's
//! words. Used by the session's connect and by calls on a live session.

use super::UpstreamError;
use crate::transport::stdio_process::ProcessReport;

/// A stdio child that could not be started, in words for the person who registered it.
pub(crate) fn spawn_error(command: &str, error: &std::io::Error) -> UpstreamError {
    let message = match error.kind() {
        std::io::ErrorKind::NotFound => {
            "no such program (is it installed and on the allowed PATH?)".to_owned()
        }
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => error.to_string(),
    };
    UpstreamError::Spawn {
        command: command.to_owned(),
        message,
    }
}

/// Adds what a stdio child said and how it ended to an error's message. When the child
/// exited, that is why the connection failed, so it replaces the transport's own words.
pub(crate) fn with_detail(error: UpstreamError, report: &ProcessReport) -> UpstreamError {
    let text = &report.text;
    let combine = |reason: String| {
        if report.exited {
            text.clone()
        } else {
            format!("{reason}; {text}")
        }
    };
    match error {
        UpstreamError::Initialize { target, reason } => UpstreamError::Initialize {
            target,
            reason: combine(reason),
        },
        UpstreamError::Connect { target, reason } => UpstreamError::Connect {
            target,
            reason: combine(reason),
        },
        UpstreamError::ConnectionLost(message) if report.exited => {
            // "`python3` exited with status 1; its last stderr line: …"
            let target = message.split(": ").next().unwrap_or_default();
            let ending = text.strip_prefix("it ").unwrap_or(text);
            UpstreamError::ConnectionLost(format!("{target} {ending}"))
        }
        UpstreamError::ConnectionLost(message) => UpstreamError::ConnectionLost(combine(message)),
        other => other,
    }
}
