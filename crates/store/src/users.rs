//! Users: the people (or automations) of a workspace. A user acts through API tokens
//! (`tokens.rs`); the store keeps no passwords. What a token may do comes from its scopes;
//! a user's role bounds which scopes its tokens may carry (only owners and admins may hold
//! `admin`, see [`Store::check_token_holder`]).

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::store::Store;
use crate::validate;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use switchboard_core::{Scope, ScopeSet, UserId, WorkspaceId};

/// Longest user name, in characters (an e-mail address fits).
pub const MAX_USER_NAME_CHARS: usize = 200;

/// What a user is to its workspace. Permissions come from token scopes; the role records
/// ownership (the bootstrap user is the owner) and bounds the scopes: a member's tokens may
/// not carry `admin`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserRole {
    Owner,
    Admin,
    Member,
}

impl UserRole {
    pub fn as_str(self) -> &'static str {
        match self {
            UserRole::Owner => "owner",
            UserRole::Admin => "admin",
            UserRole::Member => "member",
        }
    }

    /// True for the roles that administer the workspace (owner and admin).
    pub fn is_admin(self) -> bool {
        matches!(self, UserRole::Owner | UserRole::Admin)
    }

    /// True when tokens of a user with this role may carry `scope`.
    pub fn may_hold(self, scope: Scope) -> bool {
        scope != Scope::Admin || self.is_admin()
    }
}

impl fmt::Display for UserRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for UserRole {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "owner" => Ok(UserRole::Owner),
            "admin" => Ok(UserRole::Admin),
            "member" => Ok(UserRole::Member),
            other => Err(format!(
                "unknown user role '{other}' (expected owner, admin or member)"
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserRecord {
    pub id: UserId,
    pub workspace_id: WorkspaceId,
    /// Unique within the workspace.
    pub name: String,
    pub role: UserRole,
    /// False once an admin deactivated the user: its tokens stop authenticating (on the next
    /// request, see [`Store::check_token`]) until it is reactivated.
    pub active: bool,
    pub created_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
pub(crate) struct UserRow {
    id: String,
    workspace_id: String,
    name: String,
    role: String,
    active: bool,
    created_at: DateTime<Utc>,
}

impl TryFrom<UserRow> for UserRecord {
    type Error = StoreError;

    fn try_from(row: UserRow) -> Result<Self, Self::Error> {
        Ok(UserRecord {
            id: UserId::from_string(row.id),
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            name: row.name,
            role: row.role.parse().map_err(StoreError::corrupt)?,
            active: row.active,
            created_at: row.created_at,
        })
    }
}

pub(crate) const INSERT_USER_SQL: &str =
    "INSERT INTO users (id, workspace_id, name, role, created_at) VALUES ($1, $2, $3, $4, $5)";

impl Store {
    /// Adds a user to a workspace; `UniqueViolation { field: "name" }` when the name is taken
    /// there, `NotFound { entity: "workspace" }` when the workspace does not exist.
    pub async fn create_user(
        &self,
        workspace_id: &WorkspaceId,
        name: &str,
        role: UserRole,
    ) -> StoreResult<UserRecord> {
        validate_user_name(name)?;
        let record = UserRecord {
            id: UserId::generate(),
            workspace_id: workspace_id.clone(),
            name: name.to_owned(),
            role,
            active: true,
            created_at: clock::now(),
        };
        on_backend!(self, |pool| sqlx::query(INSERT_USER_SQL)
            .bind(record.id.as_str())
            .bind(record.workspace_id.as_str())
            .bind(&record.name)
            .bind(record.role.as_str())
            .bind(record.created_at)
            .execute(pool)
            .await
            .map(|_| ()))
        .map_err(insert_error("user", "name", "workspace"))?;
        Ok(record)
    }

    pub async fn get_user(
        &self,
        workspace_id: &WorkspaceId,
        user_id: &UserId,
    ) -> StoreResult<UserRecord> {
        let row: Option<UserRow> = on_backend!(self, |pool| {
            sqlx::query_as(
            "SELECT id, workspace_id, name, role, active, created_at FROM users WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(user_id.as_str())
        .fetch_optional(pool)
        .await
        })?;
        row.ok_or_else(|| StoreError::not_found("user"))?.try_into()
    }

    /// The workspace's user called `name` (names are unique per workspace), if any.
    pub async fn find_user_by_name(
        &self,
        workspace_id: &WorkspaceId,
        name: &str,
    ) -> StoreResult<Option<UserRecord>> {
        let row: Option<UserRow> = on_backend!(self, |pool| {
            sqlx::query_as(
            "SELECT id, workspace_id, name, role, active, created_at FROM users WHERE workspace_id = $1 AND name = $2"
        )
        .bind(workspace_id.as_str())
        .bind(name)
        .fetch_optional(pool)
        .await
        })?;
        row.map(UserRecord::try_from).transpose()
    }

    /// The user a new token with `scopes` would act as, checked: `NotFound { entity: "user" }`
    /// when it is not a user of the workspace, `InvalidInput { field: "scopes" }` when its
    /// role may not hold one of the scopes (a member and `admin`), `InvalidInput { field:
    /// "user_id" }` when it is deactivated. `create_token` and
    /// `import_token` run it on every token they issue.
    pub async fn check_token_holder(
        &self,
        workspace_id: &WorkspaceId,
        user_id: &UserId,
        scopes: &ScopeSet,
    ) -> StoreResult<UserRecord> {
        let user = self.get_user(workspace_id, user_id).await?;
        if !user.active {
            return Err(StoreError::invalid(
                "user_id",
                format!(
                    "user '{}' is deactivated; reactivate them before issuing a token",
                    user.name
                ),
            ));
        }
        if let Some(scope) = scopes.iter().find(|scope| !user.role.may_hold(*scope)) {
            return Err(StoreError::invalid(
                "scopes",
                format!(
                    "user '{}' is a {}; only owners and admins may hold the `{scope}` scope",
                    user.name, user.role
                ),
            ));
        }
        Ok(user)
    }

    /// The workspace's users, oldest first.
    pub async fn list_users(&self, workspace_id: &WorkspaceId) -> StoreResult<Vec<UserRecord>> {
        let rows: Vec<UserRow> = on_backend!(self, |pool| {
            sqlx::query_as(
            "SELECT id, workspace_id, name, role, active, created_at FROM users WHERE workspace_id = $1 ORDER BY created_at, id"
        )
        .bind(workspace_id.as_str())
        .fetch_all(pool)
        .await
        })?;
        rows.into_iter().map(UserRecord::try_from).collect()
    }
}

/// A user name: not blank, no surrounding spaces, no control characters, at most
/// [`MAX_USER_NAME_CHARS`]. It is how people are told apart in lists and on the CLI.
fn validate_user_name(name: &str) -> StoreResult<()> {
    validate::display_text("name", name, MAX_USER_NAME_CHARS)?;
    if name.trim() != name {
        return Err(StoreError::invalid(
            "name",
            "must not start or end with spaces",
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(StoreError::invalid(
            "name",
            "must not contain control characters (line breaks, tabs…)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_round_trip_and_bound_the_admin_scope() {
        for role in [UserRole::Owner, UserRole::Admin, UserRole::Member] {
            assert_eq!(role.as_str().parse::<UserRole>(), Ok(role));
            assert!(role.may_hold(Scope::ChatUse));
        }
        assert!(UserRole::Owner.may_hold(Scope::Admin));
        assert!(UserRole::Admin.may_hold(Scope::Admin));
        assert!(!UserRole::Member.may_hold(Scope::Admin));
        assert!("root".parse::<UserRole>().is_err());
    }

    #[test]
    fn user_names_are_trimmed_printable_and_bounded() {
        validate_user_name("alice@example.com").unwrap();
        validate_user_name("Alice Example").unwrap();
        for bad in ["", "  ", " alice", "alice\n", "a\tb"] {
            assert!(validate_user_name(bad).is_err(), "{bad:?}");
        }
        assert!(validate_user_name(&"x".repeat(MAX_USER_NAME_CHARS + 1)).is_err());
    }
}
