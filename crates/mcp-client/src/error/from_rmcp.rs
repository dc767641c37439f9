//! The one place rmcp's errors become [`UpstreamError`]s: a failed handshake
//! (`ClientInitializeError`), a failed request on a live session (`ServiceError`), and a
//! transport failure found inside either. Each conversion knows where it happened (the
//! [`ErrorContext`]'s target) so the message can say so.

use super::UpstreamError;
use super::causes::{Cause, cause_of};
use rmcp::service::{ClientInitializeError, ServiceError};

/// Where a request went, for error messages, and the answer size cap in force there.
#[derive(Clone, Debug)]
pub(crate) struct ErrorContext {
    /// The URL (without credentials, query or fragment) or "`command`".
    pub target: String,
    pub limit: usize,
}

impl ErrorContext {
    pub fn new(target: impl Into<String>, limit: usize) -> Self {
        Self {
            target: target.into(),
            limit,
        }
    }

    /// A transport failure while connecting.
    pub fn connect_failure(&self, error: &(dyn std::error::Error + 'static)) -> UpstreamError {
        self.transport_failure(error, |target, reason| UpstreamError::Connect {
            target: target.to_owned(),
            reason,
        })
    }

    /// A transport failure on a live session: `Connect` when the request never left (its
    /// connection could not be opened), else the connection was lost with it on the way.
    fn lost(&self, error: &(dyn std::error::Error + 'static)) -> UpstreamError {
        if super::causes::never_sent(error) {
            return self.connect_failure(error);
        }
        self.transport_failure(error, |target, reason| {
            UpstreamError::ConnectionLost(format!("{target}: {reason}"))
        })
    }

    /// `error`'s telling cause; a plain reason becomes `plain(target, reason)`.
    fn transport_failure(
        &self,
        error: &(dyn std::error::Error + 'static),
        plain: impl FnOnce(&str, String) -> UpstreamError,
    ) -> UpstreamError {
        match cause_of(error) {
            Cause::Upstream(error) => error,
            Cause::Auth(reason, challenge) => UpstreamError::AuthRequired {
                challenge,
                target: self.target.clone(),
                reason,
            },
            Cause::TooLarge => UpstreamError::ResponseTooLarge { limit: self.limit },
            Cause::Reason(reason) => plain(&self.target, reason),
        }
    }

    fn initialize(&self, reason: impl Into<String>) -> UpstreamError {
        UpstreamError::Initialize {
            target: self.target.clone(),
            reason: reason.into(),
        }
    }

    /// A failed handshake (`server/discover` or `initialize`).
    pub fn handshake_failure(&self, error: ClientInitializeError) -> UpstreamError {
        match error {
            ClientInitializeError::TransportError { error, .. } => self.connect_failure(&error),
            ClientInitializeError::ConnectionClosed(_) => {
                self.initialize("it closed the connection before answering the handshake")
            }
            ClientInitializeError::JsonRpcError(data) => self.initialize(format!(
                "it refused the handshake with error {}: {}",
                data.code.0, data.message
            )),
            ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
                self.handshake_failure(*fallback)
            }
            ClientInitializeError::NoCompatibleProtocolVersion {
                server_supported, ..
            } => {
                let offered: Vec<String> = server_supported
                    .iter()
                    .map(|version| version.to_string())
                    .collect();
                self.initialize(format!(
                    "it speaks no protocol version this client knows (it offers {})",
                    if offered.is_empty() {
                        "none".to_owned()
                    } else {
                        offered.join(", ")
                    }
                ))
            }
            ClientInitializeError::Cancelled => self.initialize("the handshake was cancelled"),
            ClientInitializeError::ExpectedInitResponse(_)
            | ClientInitializeError::ExpectedInitResult(_)
            | ClientInitializeError::ConflictInitResponseId(..)
            | ClientInitializeError::UncorrelatedErrorResponse { .. } => {
                self.initialize("its answer to the handshake was not a handshake result")
            }
            _ => self.initialize("the handshake failed"),
        }
    }

    /// A failed request on a live session.
    pub fn request_failure(&self, error: ServiceError) -> UpstreamError {
        match error {
            ServiceError::McpError(data) => UpstreamError::from_error_data(
                data.code.0,
                data.message.to_string(),
                data.data,
                self.limit,
            ),
            ServiceError::TransportSend(transport_error) => self.lost(&transport_error),
            ServiceError::TransportClosed => {
                UpstreamError::ConnectionLost(format!("{}: it closed the connection", self.target))
            }
            ServiceError::Timeout { timeout } => UpstreamError::Timeout(timeout),
            ServiceError::Cancelled { .. } => UpstreamError::Cancelled,
            ServiceError::UnexpectedResponse => {
                UpstreamError::Protocol("it answered with a result of the wrong type".into())
            }
            ServiceError::InputRequiredRoundsExceeded { max_rounds } => UpstreamError::Protocol(
                format!("it still asked for more input after {max_rounds} rounds"),
            ),
            ServiceError::SubscriptionLagged { .. } => UpstreamError::Protocol(
                "it sent notifications faster than they could be read".into(),
            ),
            _ => UpstreamError::Protocol("the request failed".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_refusals_and_closed_connections_name_the_target() {
        let context = ErrorContext::new("`python3`", 1024);
        let error = context.handshake_failure(ClientInitializeError::ConnectionClosed(
            "initialize response".into(),
        ));
        assert_eq!(
            error.to_string(),
            "could not initialize a session with `python3`: it closed the connection before answering the handshake"
        );
        let error = context.request_failure(ServiceError::TransportClosed);
        assert_eq!(
            error.to_string(),
            "the connection to the upstream was lost: `python3`: it closed the connection"
        );
    }
}
