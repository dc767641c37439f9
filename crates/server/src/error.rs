//! `ApiError`: the one way a handler fails. Each variant maps to an HTTP status and a stable
//! machine-readable `code`, rendered as `{"error":{"code":"…","message":"…"}}`. Server-side
//! failures (5xx) are logged here, once, inside the request's span; their details never reach
//! the client.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchboard_core::Scope;
use utoipa::ToSchema;

/// Boxed cause of an internal error, kept for the log line.
pub type BoxedCause = Box<dyn std::error::Error + Send + Sync + 'static>;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request is malformed (bad JSON, bad query parameter).
    #[error("{0}")]
    BadRequest(String),
    /// No bearer token, or one that is unknown, revoked or expired.
    #[error("{0}")]
    Unauthorized(String),
    /// The token is valid but lacks a scope the route needs.
    #[error("this token lacks the `{missing}` scope")]
    MissingScope { missing: Scope },
    /// The caller may see the thing but not act on it (e.g. someone else's approval request).
    #[error("{0}")]
    Forbidden(String),
    /// The thing does not exist, or exists in another workspace (we never say which).
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with current state (duplicate name, stale version).
    #[error("{0}")]
    Conflict(String),
    /// Well-formed but semantically invalid input (a validation error).
    #[error("{0}")]
    Unprocessable(String),
    /// The body exceeds the configured limit.
    #[error("request body is larger than the limit of {limit_bytes} bytes")]
    PayloadTooLarge { limit_bytes: usize },
    /// The request body did not arrive within `server.body_read_timeout_secs`.
    #[error("the request body did not arrive within {timeout_secs} s")]
    RequestTimeout { timeout_secs: u64 },
    /// An upstream (MCP server, LLM provider) failed.
    #[error("{0}")]
    BadGateway(String),
    /// A dependency is down (the store does not answer).
    #[error("{0}")]
    Unavailable(String),
    /// A monthly token budget is used up: 429 with the budget and when it resets
    /// ([`BudgetExceededBody`]).
    #[error("{0}")]
    BudgetExceeded(Box<switchboard_chat::BudgetExceeded>),
    /// A bug or an unexpected failure. The cause is logged, never returned.
    #[error("internal server error")]
    Internal(#[source] BoxedCause),
}

impl ApiError {
    pub fn internal(cause: impl Into<BoxedCause>) -> Self {
        ApiError::Internal(cause.into())
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::MissingScope { .. } => StatusCode::FORBIDDEN,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RequestTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            ApiError::BadGateway(_) => StatusCode::BAD_GATEWAY,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::BudgetExceeded(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable `error.code` clients can branch on.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest(_) => "bad_request",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::MissingScope { .. } => "insufficient_scope",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound(_) => "not_found",
            ApiError::Conflict(_) => "conflict",
            ApiError::Unprocessable(_) => "invalid_request",
            ApiError::PayloadTooLarge { .. } => "payload_too_large",
            ApiError::RequestTimeout { .. } => "request_timeout",
            ApiError::BadGateway(_) => "upstream_error",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::BudgetExceeded(_) => "token_budget_exceeded",
            ApiError::Internal(_) => "internal",
        }
    }
}

/// The JSON error document of every refusal: `{"error":{"code":…,"message":…}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong: a stable `code` to branch on and a sentence for people.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable and machine-readable (`not_found`, `insufficient_scope`, `needs_auth`…).
    pub code: String,
    pub message: String,
    /// Precise reasons, where the failure has them (an upstream's `invalid_arguments`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub details: Option<serde_json::Value>,
}

/// The document as JSON text (for the layers that write bodies by hand).
impl std::fmt::Display for ErrorBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
        f.write_str(&text)
    }
}

/// The answer to a new question past a monthly token budget: the error document and the
/// budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BudgetExceededBody {
    pub error: ErrorDetail,
    pub budget: TokenBudget,
}

/// A monthly token budget (`chat.monthly_token_budget_workspace` or `…_user`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TokenBudget {
    /// `workspace` or `user`.
    pub scope: String,
    /// Input plus output tokens allowed per calendar month (UTC).
    pub limit_tokens: u64,
    /// Used since `period_start`.
    pub used_tokens: u64,
    pub period_start: DateTime<Utc>,
    /// When new answers are accepted again (the next month's first instant).
    pub resets_at: DateTime<Utc>,
}

impl BudgetExceededBody {
    fn new(exceeded: &switchboard_chat::BudgetExceeded) -> Self {
        Self {
            error: ErrorDetail {
                code: "token_budget_exceeded".to_owned(),
                message: exceeded.to_string(),
                details: None,
            },
            budget: TokenBudget {
                scope: exceeded.scope.as_str().to_owned(),
                limit_tokens: exceeded.limit_tokens,
                used_tokens: exceeded.used_tokens,
                period_start: exceeded.period_start,
                resets_at: exceeded.resets_at,
            },
        }
    }
}

/// 429 with [`BudgetExceededBody`] and `Retry-After` (seconds until the budget resets).
fn budget_response(exceeded: &switchboard_chat::BudgetExceeded) -> Response {
    let mut response = (
        StatusCode::TOO_MANY_REQUESTS,
        axum::Json(BudgetExceededBody::new(exceeded)),
    )
        .into_response();
    let wait = (exceeded.resets_at - Utc::now()).num_seconds().max(1);
    if let Ok(value) = HeaderValue::from_str(&wait.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// The JSON error document: `{"error":{"code":…,"message":…}}`.
pub fn error_body(code: &str, message: &str) -> ErrorBody {
    ErrorBody {
        error: ErrorDetail {
            code: code.to_owned(),
            message: message.to_owned(),
            details: None,
        },
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::BudgetExceeded(exceeded) = &self {
            return budget_response(exceeded);
        }
        let status = self.status();
        if status.is_server_error() {
            tracing::error!(error = %switchboard_core::log_text(&ErrorChain(&self).to_string()), code = self.code(), "request failed");
        }
        let body = error_body(self.code(), &self.to_string());
        let mut response = (status, axum::Json(body)).into_response();
        let challenge = match &self {
            ApiError::Unauthorized(_) => Some(r#"Bearer realm="switchboard""#.to_owned()),
            ApiError::MissingScope { missing } => Some(format!(
                r#"Bearer realm="switchboard", error="insufficient_scope", scope="{missing}""#
            )),
            _ => None,
        };
        if let Some(value) = challenge.and_then(|value| HeaderValue::from_str(&value).ok()) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// Displays an error with its whole `source()` chain, for the single log line of a 5xx.
struct ErrorChain<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

/// The one place store failures become HTTP answers: missing rows are 404 (also for rows of
/// another workspace), uniqueness and version clashes 409, refused input 422, the rest 500.
impl From<switchboard_store::StoreError> for ApiError {
    fn from(error: switchboard_store::StoreError) -> Self {
        use switchboard_store::StoreError;
        match error {
            StoreError::NotFound { .. } => ApiError::NotFound(error.to_string()),
            StoreError::UniqueViolation { .. }
            | StoreError::VersionConflict { .. }
            | StoreError::Conflict(_) => ApiError::Conflict(error.to_string()),
            StoreError::InvalidInput { .. } => ApiError::Unprocessable(error.to_string()),
            other => ApiError::internal(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_scope_names_the_scope_in_message_and_challenge() {
        let response = ApiError::MissingScope {
            missing: Scope::ServersWrite,
        }
        .into_response();
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
        let challenge = response.headers()[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap();
        assert!(
            challenge.contains(r#"scope="servers:write""#),
            "{challenge}"
        );
        assert_eq!(
            ApiError::MissingScope {
                missing: Scope::ServersWrite
            }
            .to_string(),
            "this token lacks the `servers:write` scope"
        );
    }

    #[test]
    fn internal_errors_hide_their_cause() {
        let error = ApiError::internal(std::io::Error::other("disk on fire"));
        assert_eq!(error.to_string(), "internal server error");
        assert_eq!(error.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
