//! `/api/tokens`: an admin manages the API tokens of its own workspace. Creating returns the
//! plaintext once; listing never does; revoking takes effect on the next request. A token acts
//! as the caller unless `user_id` names another user of the workspace (see `/api/users`); a
//! member's token may not carry `admin`. Tokens of other workspaces are invisible (404), never
//! forbidden, so ids do not leak across tenants.

use crate::auth::{Scoped, scopes};
use crate::error::ApiError;
use crate::error::ErrorBody;
use crate::state::AppState;
use crate::wire_common::{ScopeName, audit_details};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchboard_approvals::ConfigurationChange;
use switchboard_approvals::audit_details::{TokenCreated, TokenRevoked};
use switchboard_core::{Principal, ScopeSet, TokenId, UserId};
use switchboard_store::{NewToken, StoreError, TokenRecord};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tokens, create_token))
        .routes(routes!(revoke_token))
}

/// `POST /api/tokens` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTokenRequest {
    pub name: String,
    /// At least one scope.
    #[schema(value_type = Vec<ScopeName>)]
    pub scopes: ScopeSet,
    /// When the token stops working; never when absent.
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
    /// The user the token acts as; the caller when absent.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub user_id: Option<UserId>,
}

/// A token as the API shows it: never the secret, never its hash.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenView {
    #[schema(value_type = String)]
    pub id: TokenId,
    /// The user the token acts as.
    #[schema(value_type = String)]
    pub user_id: UserId,
    pub name: String,
    /// The first characters of the token, for recognising it in a list (not a secret).
    pub display_prefix: String,
    #[schema(value_type = Vec<ScopeName>)]
    pub scopes: ScopeSet,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
}

impl From<TokenRecord> for TokenView {
    fn from(record: TokenRecord) -> Self {
        Self {
            id: record.id,
            user_id: record.user_id,
            name: record.name,
            display_prefix: record.display_prefix,
            scopes: record.scopes,
            created_at: record.created_at,
            expires_at: record.expires_at,
            revoked_at: record.revoked_at,
            last_used_at: record.last_used_at,
        }
    }
}

/// `POST /api/tokens` answer: the token, and its secret — shown this once only.
#[derive(Debug, Serialize, ToSchema)]
pub struct IssuedTokenView {
    pub token: TokenView,
    /// The bearer token itself; Switchboard keeps only its hash.
    pub plaintext: String,
}

/// List the workspace's tokens (never their secrets).
#[utoipa::path(
    get,
    path = "/tokens",
    tag = "tokens",
    responses(
        (status = 200, description = "Every token of the workspace, revoked ones included", body = Vec<TokenView>),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks the `admin` scope", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn list_tokens(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
) -> Result<Json<Vec<TokenView>>, ApiError> {
    let tokens = state.store.list_tokens(&principal.workspace_id).await?;
    Ok(Json(tokens.into_iter().map(TokenView::from).collect()))
}

/// Issue a token; its plaintext is in this answer only.
#[utoipa::path(
    post,
    path = "/tokens",
    tag = "tokens",
    request_body = CreateTokenRequest,
    responses(
        (status = 201, description = "The token and its plaintext", body = IssuedTokenView),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks the `admin` scope", body = ErrorBody),
        (status = 422, description = "Invalid body: no scope, an unknown scope or user, a member's token asking for `admin`", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn create_token(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Json(request): Json<CreateTokenRequest>,
) -> Result<(StatusCode, Json<IssuedTokenView>), ApiError> {
    if request.scopes.is_empty() {
        return Err(ApiError::Unprocessable(
            "`scopes` must name at least one scope".into(),
        ));
    }
    let user_id = request.user_id.unwrap_or_else(|| principal.user_id.clone());
    let body = issue(
        &state,
        &principal,
        NewToken {
            user_id,
            name: request.name,
            scopes: request.scopes,
            expires_at: request.expires_at,
        },
    )
    .await?;
    Ok((StatusCode::CREATED, Json(body)))
}

/// Revoke a token; it stops working at its next request.
#[utoipa::path(
    delete,
    path = "/tokens/{token_id}",
    tag = "tokens",
    params(("token_id" = String, Path, description = "The token's id")),
    responses(
        (status = 200, description = "The token, now revoked", body = TokenView),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks the `admin` scope", body = ErrorBody),
        (status = 404, description = "No such token in this workspace", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn revoke_token(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Path(token_id): Path<String>,
) -> Result<Json<TokenView>, ApiError> {
    let record = revoke(&state, &principal, &TokenId::from_string(token_id)).await?;
    Ok(Json(record))
}

/// Issues `token` (the store checks the user and its role against the scopes: a member's token
/// may not carry `admin`) and audits it; shared with `/api/me/tokens`.
pub(crate) async fn issue(
    state: &AppState,
    principal: &Principal,
    token: NewToken,
) -> Result<IssuedTokenView, ApiError> {
    let user_id = token.user_id.clone();
    let issued = state
        .store
        .create_token(&principal.workspace_id, token)
        .await
        .map_err(|error| match error {
            // A body naming a user that is not there is invalid input, not a missing resource.
            StoreError::NotFound { entity: "user" } => ApiError::Unprocessable(format!(
                "user_id: no user with id '{user_id}' in this workspace (see GET /api/users)"
            )),
            other => other.into(),
        })?;
    state
        .approvals
        .audit()
        .configuration_change(
            principal,
            ConfigurationChange::new(
                "token.created",
                issued.record.id.as_str(),
                audit_details(&TokenCreated {
                    user_id: &issued.record.user_id,
                    name: &issued.record.name,
                    scopes: &issued.record.scopes,
                    expires_at: issued.record.expires_at,
                }),
            ),
        )
        .await;
    Ok(IssuedTokenView {
        plaintext: issued.plaintext.expose().to_owned(),
        token: TokenView::from(issued.record),
    })
}

/// Revokes a token of the caller's workspace and audits it; shared with `/api/me/tokens`.
pub(crate) async fn revoke(
    state: &AppState,
    principal: &Principal,
    token_id: &TokenId,
) -> Result<TokenView, ApiError> {
    let record = state
        .store
        .revoke_token(&principal.workspace_id, token_id)
        .await?;
    state
        .approvals
        .audit()
        .configuration_change(
            principal,
            ConfigurationChange::new(
                "token.revoked",
                record.id.as_str(),
                audit_details(&TokenRevoked { name: &record.name }),
            ),
        )
        .await;
    Ok(record.into())
}
