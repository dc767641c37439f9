//! `/api/tokens`: an admin manages the API tokens of its own workspace. Creating returns the
//! plaintext once; listing never does; revoking takes effect on the next request. A token acts
//! as the caller unless `user_id` names another user of the workspace (see `/api/users`); a
//! member's token may not carry `admin`. Tokens of other workspaces are invisible (404), never
//! forbidden, so ids do not leak across tenants.

use crate::auth::{Scoped, scopes};
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get};
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchboard_approvals::ConfigurationChange;
use switchboard_core::{ScopeSet, TokenId, UserId};
use switchboard_store::{NewToken, StoreError, TokenRecord};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/tokens", get(list_tokens).post(create_token))
        .route("/tokens/{token_id}", delete(revoke_token))
}

/// `POST /api/tokens` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateTokenRequest {
    pub name: String,
    pub scopes: ScopeSet,
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
    /// The user the token acts as; the caller when absent.
    #[serde(default)]
    pub user_id: Option<UserId>,
}

/// A token as the API shows it: never the secret, never its hash.
#[derive(Debug, Serialize)]
pub struct TokenView {
    pub id: TokenId,
    /// The user the token acts as.
    pub user_id: UserId,
    pub name: String,
    pub display_prefix: String,
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

async fn list_tokens(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
) -> Result<Json<Vec<TokenView>>, ApiError> {
    let tokens = state.store.list_tokens(&principal.workspace_id).await?;
    Ok(Json(tokens.into_iter().map(TokenView::from).collect()))
}

async fn create_token(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Json(request): Json<CreateTokenRequest>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    if request.scopes.is_empty() {
        return Err(ApiError::Unprocessable(
            "`scopes` must name at least one scope".into(),
        ));
    }
    let user_id = request.user_id.unwrap_or_else(|| principal.user_id.clone());
    // The store checks the user and its role against the scopes (a member's token may not
    // carry `admin`) whoever issues the token.
    let issued = state
        .store
        .create_token(
            &principal.workspace_id,
            NewToken {
                user_id: user_id.clone(),
                name: request.name,
                scopes: request.scopes,
                expires_at: request.expires_at,
            },
        )
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
            &principal,
            ConfigurationChange::new(
                "token.created",
                issued.record.id.as_str(),
                serde_json::json!({
                    "user_id": issued.record.user_id,
                    "name": issued.record.name,
                    "scopes": issued.record.scopes,
                    "expires_at": issued.record.expires_at,
                }),
            ),
        )
        .await;
    let body = serde_json::json!({
        "token": TokenView::from(issued.record),
        "plaintext": issued.plaintext.expose(),
    });
    Ok((StatusCode::CREATED, Json(body)))
}

async fn revoke_token(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Path(token_id): Path<String>,
) -> Result<Json<TokenView>, ApiError> {
    let record = state
        .store
        .revoke_token(&principal.workspace_id, &TokenId::from_string(token_id))
        .await?;
    state
        .approvals
        .audit()
        .configuration_change(
            &principal,
            ConfigurationChange::new(
                "token.revoked",
                record.id.as_str(),
                serde_json::json!({"name": record.name}),
            ),
        )
        .await;
    Ok(Json(record.into()))
}
