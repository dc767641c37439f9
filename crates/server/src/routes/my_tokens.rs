//! `/api/me/tokens`: a signed-in person's own API tokens — list, create, revoke — whatever
//! their role. A new token's scopes are bounded by the caller's own (a session's are its
//! role's; a token cannot mint a wider one), and the store bounds them by the role again. Other
//! people's tokens are invisible here (404), like other workspaces' are in `/api/tokens`.
//! Issuing and revoking share `tokens::issue` / `tokens::revoke`, audit included.

use crate::auth::Authenticated;
use crate::error::{ApiError, ErrorBody};
use crate::routes::tokens::{IssuedTokenView, TokenView, issue, revoke};
use crate::state::AppState;
use crate::wire_common::ScopeName;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use switchboard_core::{ScopeSet, TokenId};
use switchboard_store::NewToken;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_my_tokens, create_my_token))
        .routes(routes!(revoke_my_token))
}

/// `POST /api/me/tokens` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePersonalTokenRequest {
    pub name: String,
    /// At least one, each held by the caller.
    #[schema(value_type = Vec<ScopeName>)]
    pub scopes: ScopeSet,
    /// When the token stops working; never when absent.
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
}

/// The caller's own tokens (never their secrets).
#[utoipa::path(
    get,
    path = "/me/tokens",
    tag = "me",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller's tokens, revoked ones included", body = Vec<TokenView>),
        (status = 401, description = "Not signed in", body = ErrorBody),
    )
)]
async fn list_my_tokens(
    State(state): State<AppState>,
    Authenticated(principal): Authenticated,
) -> Result<Json<Vec<TokenView>>, ApiError> {
    let tokens = state.store.list_tokens(&principal.workspace_id).await?;
    Ok(Json(
        tokens
            .into_iter()
            .filter(|token| token.user_id == principal.user_id)
            .map(TokenView::from)
            .collect(),
    ))
}

/// Issues a token of the caller's own; its plaintext is in this answer only.
#[utoipa::path(
    post,
    path = "/me/tokens",
    tag = "me",
    security(("bearer" = [])),
    request_body = CreatePersonalTokenRequest,
    responses(
        (status = 201, description = "The token and its plaintext", body = IssuedTokenView),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 422, description = "No scope, an unknown scope, or one the caller does not hold (named)", body = ErrorBody),
    )
)]
async fn create_my_token(
    State(state): State<AppState>,
    Authenticated(principal): Authenticated,
    Json(request): Json<CreatePersonalTokenRequest>,
) -> Result<(StatusCode, Json<IssuedTokenView>), ApiError> {
    if request.scopes.is_empty() {
        return Err(ApiError::Unprocessable(
            "`scopes` must name at least one scope".into(),
        ));
    }
    let beyond: Vec<&str> = request
        .scopes
        .iter()
        .filter(|scope| !principal.allows(*scope))
        .map(|scope| scope.as_str())
        .collect();
    if !beyond.is_empty() {
        return Err(ApiError::Unprocessable(format!(
            "scopes: you do not hold {}; a token of yours can carry only scopes you have",
            beyond.join(", ")
        )));
    }
    let name = request.name.trim().to_owned();
    if name.is_empty() {
        return Err(ApiError::Unprocessable("name: must not be empty".into()));
    }
    let token = NewToken {
        user_id: principal.user_id.clone(),
        name,
        scopes: request.scopes,
        expires_at: request.expires_at,
    };
    let issued = issue(&state, &principal, token).await?;
    Ok((StatusCode::CREATED, Json(issued)))
}

/// Revokes one of the caller's own tokens; it stops working at its next request.
#[utoipa::path(
    delete,
    path = "/me/tokens/{token_id}",
    tag = "me",
    security(("bearer" = [])),
    params(("token_id" = String, Path, description = "The token's id")),
    responses(
        (status = 200, description = "The token, now revoked", body = TokenView),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "No such token of the caller's", body = ErrorBody),
    )
)]
async fn revoke_my_token(
    State(state): State<AppState>,
    Authenticated(principal): Authenticated,
    Path(token_id): Path<String>,
) -> Result<Json<TokenView>, ApiError> {
    let token_id = TokenId::from_string(token_id);
    let owned = state
        .store
        .list_tokens(&principal.workspace_id)
        .await?
        .into_iter()
        .any(|token| token.id == token_id && token.user_id == principal.user_id);
    if !owned {
        return Err(ApiError::NotFound("no such token of yours".into()));
    }
    Ok(Json(revoke(&state, &principal, &token_id).await?))
}
