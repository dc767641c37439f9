//! How registry requests fail: ordinary API errors, or an upstream's failure answered with its
//! precise code (`needs_auth`, `timeout`, `invalid_arguments`…) in the usual error document.

use crate::error::{ApiError, ErrorBody, error_body};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use switchboard_mcp_client::UpstreamError;
use switchboard_registry::RegistryError;
use switchboard_store::StoreError;

#[derive(Debug)]
pub(super) enum Failure {
    Api(ApiError),
    Upstream(UpstreamError),
    /// The caller has not set the server's user fields (409 `needs_user_credentials`).
    NeedsUserCredentials(String),
    /// The caller (or the workspace, for a shared connection) has not connected the server's
    /// OAuth account, or must sign in again (409 `needs_auth`).
    NeedsAuth(String),
}

impl From<ApiError> for Failure {
    fn from(error: ApiError) -> Self {
        Failure::Api(error)
    }
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        Failure::Api(error.into())
    }
}

impl From<UpstreamError> for Failure {
    fn from(error: UpstreamError) -> Self {
        Failure::Upstream(error)
    }
}

impl From<RegistryError> for Failure {
    fn from(error: RegistryError) -> Self {
        match error {
            RegistryError::Store(error) => error.into(),
            RegistryError::Upstream(error) => Failure::Upstream(error),
            RegistryError::Config(error) => {
                Failure::Api(ApiError::Unprocessable(error.to_string()))
            }
            RegistryError::Inactive(_) => Failure::Api(ApiError::Conflict(error.to_string())),
            RegistryError::NeedsUserCredentials { .. } => {
                Failure::NeedsUserCredentials(error.to_string())
            }
            RegistryError::NeedsAuth { .. } => Failure::NeedsAuth(error.to_string()),
            RegistryError::OAuth(error) => Failure::Api(ApiError::BadGateway(error.to_string())),
        }
    }
}

pub(super) fn upstream_status(error: &UpstreamError) -> StatusCode {
    match error {
        UpstreamError::InvalidArguments { .. }
        | UpstreamError::Config(_)
        | UpstreamError::UrlPolicy(_) => StatusCode::UNPROCESSABLE_ENTITY,
        UpstreamError::UnknownTool(_) => StatusCode::NOT_FOUND,
        UpstreamError::Busy { .. } | UpstreamError::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
        UpstreamError::Timeout(_) | UpstreamError::InitTimeout { .. } => {
            StatusCode::GATEWAY_TIMEOUT
        }
        _ => StatusCode::BAD_GATEWAY,
    }
}

/// `{"error": {"code", "message", "details"?}}` for an upstream failure.
pub(super) fn upstream_error_body(error: &UpstreamError) -> ErrorBody {
    let mut body = error_body(error.code(), &error.to_string());
    if let UpstreamError::InvalidArguments { details, .. } = error {
        body.error.details = serde_json::to_value(details).ok();
    }
    body
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        match self {
            Failure::Api(error) => error.into_response(),
            Failure::Upstream(error) => {
                tracing::info!(code = error.code(), error = %switchboard_core::log_text(&error.to_string()), "upstream request failed");
                (
                    upstream_status(&error),
                    axum::Json(upstream_error_body(&error)),
                )
                    .into_response()
            }
            Failure::NeedsUserCredentials(message) => (
                StatusCode::CONFLICT,
                axum::Json(error_body(
                    switchboard_registry::NEEDS_USER_CREDENTIALS,
                    &message,
                )),
            )
                .into_response(),
            Failure::NeedsAuth(message) => (
                StatusCode::CONFLICT,
                axum::Json(error_body(switchboard_registry::NEEDS_AUTH, &message)),
            )
                .into_response(),
        }
    }
}
