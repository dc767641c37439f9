//! `/api/users`: an admin adds people to its own workspace and lists them (scope `admin`).
//! A user acts only through tokens, issued with `POST /api/tokens {user_id}`; the role bounds
//! what those tokens may carry (a member's never `admin`). Users of other workspaces are never
//! listed. The workspace's owner is created at bootstrap; the API adds members and admins.
//! Switchboard's own service user (`switchboard-capability-sync`, made by the MCP registry
//! for the knowledge-graph sync token) is listed with `"internal": true`, people with
//! `false`; its name cannot be given to a new user.

use crate::auth::{Scoped, scopes};
use crate::error::ApiError;
use crate::error::ErrorBody;
use crate::state::AppState;
use crate::wire_common::audit_details;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchboard_approvals::ConfigurationChange;
use switchboard_approvals::audit_details::UserCreated;
use switchboard_core::UserId;
use switchboard_registry::OWN_ENDPOINT_SYNC_USER;
use switchboard_store::{StoreError, UserRecord, UserRole};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_users, create_user))
}

/// `POST /api/users` body. `name` is optional here only so that its absence is answered in
/// our words (naming the field), not serde's; `role` is a string for the same reason.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateUserRequest {
    /// How the user is told apart in the workspace: a display name or an e-mail address.
    /// Required.
    #[serde(default)]
    pub name: Option<String>,
    /// `member` (the default) or `admin`.
    #[serde(default)]
    #[schema(example = "member")]
    pub role: Option<String>,
}

/// What a user is to its workspace (the role bounds what its tokens may carry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = UserRole)]
pub enum UserRoleView {
    /// Made with the workspace; one per workspace.
    Owner,
    Admin,
    /// Its tokens may not carry `admin`.
    Member,
}

impl From<UserRole> for UserRoleView {
    fn from(role: UserRole) -> Self {
        match role {
            UserRole::Owner => UserRoleView::Owner,
            UserRole::Admin => UserRoleView::Admin,
            UserRole::Member => UserRoleView::Member,
        }
    }
}

/// A user as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserView {
    #[schema(value_type = String)]
    pub id: UserId,
    pub name: String,
    pub role: UserRoleView,
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
            role: record.role.into(),
            created_at: record.created_at,
        }
    }
}

/// Whether `name` is the service user the MCP registry acts as (one per workspace).
pub(crate) fn is_internal_user(name: &str) -> bool {
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

/// List the workspace's users (people, and Switchboard's own service user).
#[utoipa::path(
    get,
    path = "/users",
    tag = "users",
    responses(
        (status = 200, description = "Every user of the workspace", body = Vec<UserView>),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks the `admin` scope", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn list_users(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
) -> Result<Json<Vec<UserView>>, ApiError> {
    let users = state.store.list_users(&principal.workspace_id).await?;
    Ok(Json(users.into_iter().map(UserView::from).collect()))
}

/// Add a member or an admin to the workspace.
#[utoipa::path(
    post,
    path = "/users",
    tag = "users",
    request_body = CreateUserRequest,
    responses(
        (status = 201, description = "The new user", body = UserView),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks the `admin` scope", body = ErrorBody),
        (status = 409, description = "A user of that name exists in the workspace", body = ErrorBody),
        (status = 422, description = "No name, a reserved name, or a role other than member or admin", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
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
                audit_details(&UserCreated {
                    name: &user.name,
                    role: user.role,
                }),
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
