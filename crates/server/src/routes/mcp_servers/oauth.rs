//! Connecting an OAuth server: `POST /mcp/servers/{id}/oauth/authorize` → `{authorization_url}`
//! (the caller's own connection for a `per_user` server; the workspace's for a `shared` one,
//! admins only) and `DELETE /mcp/servers/{id}/oauth` (revoked at the authorization server when
//! it offers revocation, then forgotten). The flow ends at the public `GET /oauth/callback`
//! (`crate::oauth`). Any person who may chat may connect their own account: `chat:use`.

use crate::auth::{Scoped, scopes};
use crate::error::{ErrorBody, error_body};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use switchboard_core::ServerId;
use switchboard_registry::oauth::{OAuthService, OAuthServiceError};
use utoipa::ToSchema;

/// Where to send the person to sign in.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuthorizationUrl {
    /// The authorization server's page, with PKCE (S256), `state`, `resource` and the exact
    /// `redirect_uri`; valid for 10 minutes, once.
    pub authorization_url: String,
}

/// What a disconnect did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Disconnected {
    /// `revoked` (the authorization server accepted the revocation), `not_offered` (it offers
    /// none, or it failed: the tokens were forgotten here anyway) or `nothing_stored`.
    pub revocation: &'static str,
}

/// Starts connecting the caller's account (or the workspace's, for a shared server).
#[utoipa::path(
    post,
    path = "/mcp/servers/{id}/oauth/authorize",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The server")),
    responses(
        (status = 200, description = "Send the person to `authorization_url`", body = AuthorizationUrl),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`, or the server's connection is shared and the caller is not an admin (`admin_only`)", body = ErrorBody),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 409, description = "The server does not use OAuth (`not_oauth`)", body = ErrorBody),
        (status = 422, description = "An OAuth URL is refused by the URL policy, or the server has no usable URL", body = ErrorBody),
        (status = 502, description = "The authorization server could not be discovered or used (its code, e.g. `oauth_discovery`)", body = ErrorBody),
        (status = 503, description = "OAuth is not running in this process", body = ErrorBody),
    )
)]
pub(super) async fn authorize_server(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(id): Path<String>,
) -> Result<Json<AuthorizationUrl>, OAuthFailure> {
    let service = service(&state)?;
    let authorization_url = service.authorize(&principal, &ServerId::from(id)).await?;
    Ok(Json(AuthorizationUrl { authorization_url }))
}

/// Disconnects the caller's account (or the workspace's, for a shared server).
#[utoipa::path(
    delete,
    path = "/mcp/servers/{id}/oauth",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The server")),
    responses(
        (status = 200, description = "Forgotten (and revoked where offered)", body = Disconnected),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`, or the connection is shared and the caller is not an admin (`admin_only`)", body = ErrorBody),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 409, description = "The server does not use OAuth (`not_oauth`)", body = ErrorBody),
        (status = 503, description = "OAuth is not running in this process", body = ErrorBody),
    )
)]
pub(super) async fn disconnect_server(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(id): Path<String>,
) -> Result<Json<Disconnected>, OAuthFailure> {
    let service = service(&state)?;
    let revocation = service.disconnect(&principal, &ServerId::from(id)).await?;
    let revocation = match revocation {
        switchboard_mcp_client::oauth::Revocation::Revoked => "revoked",
        switchboard_mcp_client::oauth::Revocation::NotOffered => "not_offered",
        switchboard_mcp_client::oauth::Revocation::NothingStored => "nothing_stored",
    };
    Ok(Json(Disconnected { revocation }))
}

fn service(state: &AppState) -> Result<&OAuthService, OAuthFailure> {
    state.oauth.as_ref().ok_or(OAuthFailure::NotRunning)
}

/// A failed OAuth operation, answered with its own code.
#[derive(Debug)]
pub(super) enum OAuthFailure {
    NotRunning,
    Service(OAuthServiceError),
}

impl From<OAuthServiceError> for OAuthFailure {
    fn from(error: OAuthServiceError) -> Self {
        OAuthFailure::Service(error)
    }
}

impl IntoResponse for OAuthFailure {
    fn into_response(self) -> Response {
        let error = match self {
            OAuthFailure::NotRunning => {
                return crate::error::ApiError::Unavailable(
                    "OAuth is not running in this process".into(),
                )
                .into_response();
            }
            OAuthFailure::Service(error) => error,
        };
        if let OAuthServiceError::Store(store) = error {
            return crate::error::ApiError::from(store).into_response();
        }
        let status = match &error {
            OAuthServiceError::NotOAuth(_) => StatusCode::CONFLICT,
            OAuthServiceError::AdminOnly(_) => StatusCode::FORBIDDEN,
            OAuthServiceError::BadUrl(..) => StatusCode::UNPROCESSABLE_ENTITY,
            OAuthServiceError::OAuth(oauth) if oauth.code() == "url_policy" => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            _ => StatusCode::BAD_GATEWAY,
        };
        tracing::info!(code = error.code(), error = %switchboard_core::log_text(&error.to_string()), "an OAuth request failed");
        (status, Json(error_body(error.code(), &error.to_string()))).into_response()
    }
}
