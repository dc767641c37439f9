//! `/api/users`: an admin adds people to its own workspace and lists them (scope `admin`).
//! A user acts only through tokens, issued with `POST /api/tokens {user_id}`; the role bounds
//! what those tokens may carry (a member's never `admin`). Users of other workspaces are never
//! listed. The workspace's owner is created at bootstrap; the API adds members and admins.
//! Switchboard's own service user (`switchboard-capability-sync`, made by the MCP registry
//! for the knowledge-graph sync token) is listed with `"internal": true`, people with
//! `false`; its name cannot be given to a new user.

use crate::auth::{Scoped, scopes};
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchboard_approvals::ConfigurationChange;
use switchboard_core::UserId;
use switchboard_registry::OWN_ENDPOINT_SYNC_USER;
use switchboard_store::{StoreError, UserRecord, UserRole};

pub fn router() -> Router<AppState> {
    Router::new().route("/users", get(list_users).post(create_user))
}

/// `POST /api/users` body. `name` is optional here only so that its absence is answered in
/// our words (naming the field), not serde's.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateUserRequest {
    /// How the user is told apart in the workspace: a display name or an e-mail address.
    #[serde(default)]
    pub name: Option<String>,
    /// `member` (the default) or `admin`.
    #[serde(default)]
    pub role: Option<String>,
}

/// A user as the API shows it.
#[derive(Debug, Serialize)]
pub struct UserView {
    pub id: UserId,
    pub name: String,
    pub role: UserRole,
    /// Switchboard's own service user, not a person (its tokens are managed by Switchboard).
    pub internal: bool,
    pub created_at: DateTime<Utc>,
}

impl From<UserRecord> for UserView {
    fn from(record: UserRecord) -> Self {
        Self {
            internal: is_internal_user(&record.name),
            id: record.id,
            name: record.name,
            role: record.role,
            created_at: record.created_at,
        }
    }
}

/// Whether `name` is the service user the MCP registry acts as (one per workspace).
fn is_internal_user(name: &str) -> bool {
    name == OWN_ENDPOINT_SYNC_USER
}

/// The role a new user gets: `member` unless `admin` is asked for. `owner` is refused — the
/// workspace has one, made when the workspace was.
fn requested_role(role: Option<&str>) -> Result<UserRole, ApiError> {
    match role {
        None | Some("member") => Ok(UserRole::Member),
        Some("admin") => Ok(UserRole::Admin),
        Some("owner") => Err(ApiError::Unprocessable(
            "role: must be member or admin (the owner is created with the workspace)".into(),
        )),
        Some(other) => Err(ApiError::Unprocessable(format!(
            "role: unknown role '{other}' (expected member or admin)"
        ))),
    }
}

async fn list_users(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
) -> Result<Json<Vec<UserView>>, ApiError> {
    let users = state.store.list_users(&principal.workspace_id).await?;
    Ok(Json(users.into_iter().map(UserView::from).collect()))
}

async fn create_user(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Json(request): Json<CreateUserRequest>,
) -> Result<(StatusCode, Json<UserView>), ApiError> {
    let name = request.name.ok_or_else(|| {
        ApiError::Unprocessable(
            "name: required (a display name or e-mail address, unique in the workspace)".into(),
        )
    })?;
    if is_internal_user(&name) {
        return Err(ApiError::Unprocessable(format!(
            "name: '{name}' is reserved for Switchboard's own service user"
        )));
    }
    let role = requested_role(request.role.as_deref())?;
    let user = state
        .store
        .create_user(&principal.workspace_id, &name, role)
        .await
        .map_err(|error| match error {
            StoreError::UniqueViolation { .. } => ApiError::Conflict(format!(
                "a user named '{name}' already exists in this workspace"
            )),
            other => other.into(),
        })?;
    state
        .approvals
        .audit()
        .configuration_change(
            &principal,
            ConfigurationChange::new(
                "user.created",
                user.id.as_str(),
                serde_json::json!({"name": user.name, "role": user.role}),
            ),
        )
        .await;
    Ok((StatusCode::CREATED, Json(user.into())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_default_to_member_and_owner_is_refused() {
        assert_eq!(requested_role(None).unwrap(), UserRole::Member);
        assert_eq!(requested_role(Some("member")).unwrap(), UserRole::Member);
        assert_eq!(requested_role(Some("admin")).unwrap(), UserRole::Admin);
        let owner = requested_role(Some("owner")).unwrap_err().to_string();
        assert!(
            owner.starts_with("role: must be member or admin"),
            "{owner}"
        );
        let unknown = requested_role(Some("root")).unwrap_err().to_string();
        assert_eq!(
            unknown,
            "role: unknown role 'root' (expected member or admin)"
        );
    }
}
