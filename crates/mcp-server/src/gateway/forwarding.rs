//! What an upstream sends during a gateway client's call that is the client's to answer or
//! to hear, passed on by [`GatewayClientLink`]: the upstream's `elicitation/create` (to a
//! client that declared form elicitation) and `sampling/createMessage` (to one that declared
//! sampling), as requests tied to the client's own `tools/call` (they ride its response
//! stream), their answers handed back as JSON; and the upstream's `notifications/message`, at
//! or above the level the session set with `logging/setLevel`, the logger named after the
//! server on an aggregated endpoint (`server/logger`).
//!
//! Only while the call runs and only to that client: the link is made per call and dropped
//! with it. Requests from the server are gone from protocol 2026-07-28 on, so such a client
//! gets none. The session's level lives in [`SessionLogLevel`] (set by the gateway's
//! `logging/setLevel`, shared by the session's calls).

#![allow(deprecated)] // logging and sampling are deprecated by 2026-07-28; this forwards them

use rmcp::model::{
    ClientResult, CreateMessageRequest, CreateMessageRequestParams, ElicitRequest,
    ElicitRequestParams, GetExtensions, LoggingLevel, LoggingMessageNotificationParam,
    ProtocolVersion, RequestId, ServerRequest,
};
use rmcp::service::{OriginatingRequestId, Peer, RequestContext, RoleServer, ServiceError};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// The level a gateway session asked for with `logging/setLevel` (`None`: not set, all
/// messages pass).
#[derive(Clone, Debug, Default)]
pub(super) struct SessionLogLevel(Arc<Mutex<Option<LoggingLevel>>>);

impl SessionLogLevel {
    pub fn set(&self, level: LoggingLevel) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(level);
        }
    }

    fn admits(&self, level: LoggingLevel) -> bool {
        let Ok(slot) = self.0.lock() else {
            return true;
        };
        slot.is_none_or(|threshold| severity(level) >= severity(threshold))
    }
}

fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// A forwarded request the client did not answer: its JSON-RPC error, or why it could not be
/// asked (`code` -32603).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ForwardFailure {
    pub code: i32,
    pub message: String,
}

/// The client of one gateway call, as the upstream's requests and log messages reach it.
#[derive(Clone, Debug)]
pub struct GatewayClientLink {
    peer: Peer<RoleServer>,
    /// The client's `tools/call`: forwarded requests ride its response stream.
    call_id: RequestId,
    elicits: bool,
    samples: bool,
    level: SessionLogLevel,
    /// Set on aggregated endpoints: loggers are named `server/logger`.
    prefix_loggers: bool,
}

impl GatewayClientLink {
    pub(super) fn of(
        context: &RequestContext<RoleServer>,
        level: &SessionLogLevel,
        prefix_loggers: bool,
    ) -> Self {
        let capabilities = context.client_capabilities().unwrap_or_default();
        let asks = context
            .protocol_version()
            .is_some_and(|version| version < ProtocolVersion::V_2026_07_28);
        let elicits = capabilities
            .elicitation
            .as_ref()
            .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
        Self {
            peer: context.peer.clone(),
            call_id: context.id.clone(),
            elicits: asks && elicits,
            samples: asks && capabilities.sampling.is_some(),
            level: level.clone(),
            prefix_loggers,
        }
    }

    /// Whether the client answers `elicitation/create` (it declared form elicitation).
    pub fn elicits(&self) -> bool {
        self.elicits
    }

    /// Whether the client answers `sampling/createMessage` (it declared sampling).
    pub fn samples(&self) -> bool {
        self.samples
    }

    /// Puts an upstream's `elicitation/create` (`params` as it sent them) to the client.
    pub async fn elicit(&self, params: Value) -> Result<Value, ForwardFailure> {
        let params: ElicitRequestParams = serde_json::from_value(params)
            .map_err(|error| internal(format!("not an elicitation/create request: {error}")))?;
        self.ask(ServerRequest::ElicitRequest(ElicitRequest::new(params)))
            .await
    }

    /// Puts an upstream's `sampling/createMessage` to the client.
    pub async fn sample(&self, params: Value) -> Result<Value, ForwardFailure> {
        let params: CreateMessageRequestParams = serde_json::from_value(params)
            .map_err(|error| internal(format!("not a sampling/createMessage request: {error}")))?;
        self.ask(ServerRequest::CreateMessageRequest(
            CreateMessageRequest::new(params),
        ))
        .await
    }

    async fn ask(&self, mut request: ServerRequest) -> Result<Value, ForwardFailure> {
        request
            .extensions_mut()
            .insert(OriginatingRequestId(self.call_id.clone()));
        let answer = self
            .peer
            .send_request(request)
            .await
            .map_err(|error| match error {
                ServiceError::McpError(error) => ForwardFailure {
                    code: error.code.0,
                    message: error.message.into_owned(),
                },
                other => internal(format!("the gateway's client could not be asked: {other}")),
            })?;
        let answer = match answer {
            ClientResult::ElicitResult(result) => serde_json::to_value(result),
            ClientResult::CreateMessageResult(result) => serde_json::to_value(result),
            _ => return Err(internal("the gateway's client answered something else")),
        };
        answer.map_err(|error| internal(error.to_string()))
    }

    /// Passes on an upstream's log message of `server` (`level` as MCP names it), if the
    /// session's level admits it; a client that left is not an error.
    pub async fn log(&self, server: &str, level: &str, logger: Option<String>, data: Value) {
        let level = serde_json::from_value(Value::from(level)).unwrap_or(LoggingLevel::Info);
        if !self.level.admits(level) {
            return;
        }
        let logger = match (self.prefix_loggers, logger) {
            (true, Some(logger)) => Some(format!("{server}/{logger}")),
            (true, None) => Some(server.to_owned()),
            (false, logger) => logger,
        };
        let mut params = LoggingMessageNotificationParam::new(level, data);
        params.logger = logger;
        if let Err(error) = self.peer.notify_logging_message(params).await {
            tracing::debug!(%error, "could not forward a log message to the gateway's client");
        }
    }
}

fn internal(message: impl Into<String>) -> ForwardFailure {
    ForwardFailure {
        code: -32603,
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_level_filters_by_severity() {
        let level = SessionLogLevel::default();
        assert!(level.admits(LoggingLevel::Debug));
        level.set(LoggingLevel::Warning);
        assert!(!level.admits(LoggingLevel::Info));
        assert!(level.admits(LoggingLevel::Warning));
        assert!(level.admits(LoggingLevel::Emergency));
    }
}
