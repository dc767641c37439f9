//! `PUT|DELETE /mcp/servers/{id}/user-credentials`: a person's own values for a server's user
//! fields (e.g. their personal access token, referenced as `{{user.GITHUB_TOKEN}}`). Anyone
//! who may use the server in a chat (`chat:use`) sets their own; nobody sees or sets anyone
//! else's. Values are stored encrypted and never returned, logged or audited: the answer is
//! the server's `auth` view, which says only which fields are set. Setting values starts a
//! sync as the caller in the background: nobody else can list such a server's tools (the
//! background refresh never contacts it), so without it the first person's chat would have
//! none until someone pressed Sync.

use super::auth::{AuthView, auth_view};
use super::failure::Failure;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use serde::Deserialize;
use std::collections::BTreeMap;
use switchboard_core::ServerId;
use utoipa::ToSchema;

/// The caller's values by field name; `null` clears one. Fields not named stay as they are.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UserCredentialsBody {
    values: BTreeMap<String, Option<String>>,
}

/// Sets or clears the caller's values for the server's user fields.
#[utoipa::path(
    put,
    path = "/mcp/servers/{id}/user-credentials",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The server")),
    request_body = UserCredentialsBody,
    responses(
        (status = 200, description = "The server's auth as it now stands for the caller", body = AuthView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 422, description = "A name the server does not declare, or an empty value", body = ErrorBody),
    )
)]
pub(super) async fn set_user_credentials(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(id): Path<String>,
    Json(body): Json<UserCredentialsBody>,
) -> Result<Json<AuthView>, Failure> {
    let server_id = ServerId::from(id);
    let record = state
        .store
        .get_server(&principal.workspace_id, &server_id)
        .await?;
    let declared = &record.connection.auth.user_fields;
    let unknown: Vec<&str> = body
        .values
        .keys()
        .filter(|name| !declared.contains_key(*name))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        let known: Vec<&str> = declared.keys().map(String::as_str).collect();
        return Err(ApiError::Unprocessable(format!(
            "values: {} {} not a user field of server '{}' (its fields: {})",
            unknown.join(", "),
            if unknown.len() == 1 { "is" } else { "are" },
            record.name,
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        ))
        .into());
    }
    if let Some((name, _)) = body.values.iter().find(|(_, value)| {
        value
            .as_deref()
            .is_some_and(|value| value.trim().is_empty())
    }) {
        return Err(ApiError::Unprocessable(format!(
            "values.{name}: must not be empty (send null to clear it)"
        ))
        .into());
    }
    state
        .store
        .set_user_credentials(
            &principal.workspace_id,
            &server_id,
            &principal.user_id,
            &body.values,
        )
        .await?;
    changed_for_caller(&state, &record).await;
    if let Some(registry) = state.mcp.clone() {
        let (record, user) = (record.clone(), principal.user_id.clone());
        tokio::spawn(async move {
            registry.sync_record_as(&record, None, Some(&user)).await;
        });
    }
    Ok(Json(auth_view(&state.store, &principal, &record).await?))
}

/// Clears all of the caller's values for the server.
#[utoipa::path(
    delete,
    path = "/mcp/servers/{id}/user-credentials",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The server")),
    responses(
        (status = 200, description = "The server's auth as it now stands for the caller", body = AuthView),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such server", body = ErrorBody),
    )
)]
pub(super) async fn clear_user_credentials(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(id): Path<String>,
) -> Result<Json<AuthView>, Failure> {
    let server_id = ServerId::from(id);
    let record = state
        .store
        .get_server(&principal.workspace_id, &server_id)
        .await?;
    state
        .store
        .clear_user_credentials(&principal.workspace_id, &server_id, &principal.user_id)
        .await?;
    changed_for_caller(&state, &record).await;
    Ok(Json(auth_view(&state.store, &principal, &record).await?))
}

/// Sessions opened with the caller's old values must not outlive them.
async fn changed_for_caller(state: &AppState, record: &switchboard_store::ServerRecord) {
    if let Some(registry) = state.mcp.as_ref() {
        registry.client().close_server(&record.id).await;
        registry.client().reset_errors(&record.id);
    }
}
