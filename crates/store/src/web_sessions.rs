//! Browser sessions: what a sign-in through an identity provider leaves in the browser (a
//! cookie) and here (its SHA-256, never the value). Like a bearer token, a session is checked
//! on every request in one query joined with its person, so the person's **current** role
//! decides its scopes (every scope the role may hold) and a deactivated person's session is
//! refused at once ([`SessionCheck::HolderDeactivated`]); deactivating a person also deletes
//! their sessions (`user_access.rs`).

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult};
use crate::store::Store;
use crate::tokens::{generate_plaintext, hash_token};
use crate::users::UserRole;
use chrono::{DateTime, Utc};
use switchboard_core::{Principal, Scope, ScopeSet, UserId, WorkspaceId};

const CHECK_SESSION_SQL: &str = "SELECT s.workspace_id, s.user_id, s.expires_at, \
     u.name AS holder_name, u.role AS holder_role, u.active AS holder_active \
     FROM web_sessions s JOIN users u ON u.workspace_id = s.workspace_id AND u.id = s.user_id \
     WHERE s.session_digest = $1";

/// A new session: the cookie value (shown once, to the browser) and when it ends.
#[derive(Clone)]
pub struct NewWebSession {
    pub secret: String,
    pub expires_at: DateTime<Utc>,
}

impl std::fmt::Debug for NewWebSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewWebSession")
            .field("secret", &"[REDACTED]")
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// What a session cookie is worth right now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionCheck {
    /// Valid: the person, with every scope their current role may hold.
    Accepted(Principal),
    /// Unknown, ended or expired.
    Refused,
    /// A live session whose person an admin deactivated.
    HolderDeactivated { holder_name: String },
}

#[derive(sqlx::FromRow)]
struct SessionRow {
    workspace_id: String,
    user_id: String,
    expires_at: DateTime<Utc>,
    holder_name: String,
    holder_role: String,
    holder_active: bool,
}

impl Store {
    /// Starts a session for a person until `expires_at`; `id_token` (the provider's, kept for
    /// RP-initiated logout's `id_token_hint`) is optional.
    pub async fn create_web_session(
        &self,
        workspace_id: &WorkspaceId,
        user_id: &UserId,
        expires_at: DateTime<Utc>,
        id_token: Option<&str>,
    ) -> StoreResult<NewWebSession> {
        let secret = generate_plaintext();
        let now = clock::now();
        on_backend!(self, |pool| sqlx::query(
            "DELETE FROM web_sessions WHERE expires_at <= $1"
        )
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ()))?;
        let expires_at = clock::truncate_to_micros(expires_at);
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO web_sessions (id, session_digest, workspace_id, user_id, id_token, \
             created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)"
        )
        .bind(uuid::Uuid::now_v7().to_string())
        .bind(hash_token(&secret))
        .bind(workspace_id.as_str())
        .bind(user_id.as_str())
        .bind(id_token)
        .bind(now)
        .bind(expires_at)
        .execute(pool)
        .await
        .map(|_| ()))?;
        Ok(NewWebSession { secret, expires_at })
    }

    /// What the session cookie `secret` is worth now (see [`SessionCheck`]).
    pub async fn check_web_session(&self, secret: &str) -> StoreResult<SessionCheck> {
        if secret.is_empty() || secret.len() > 1024 {
            return Ok(SessionCheck::Refused);
        }
        let row: Option<SessionRow> = on_backend!(self, |pool| sqlx::query_as(CHECK_SESSION_SQL)
            .bind(hash_token(secret))
            .fetch_optional(pool)
            .await)?;
        let Some(row) = row else {
            return Ok(SessionCheck::Refused);
        };
        if row.expires_at <= clock::now() {
            return Ok(SessionCheck::Refused);
        }
        if !row.holder_active {
            return Ok(SessionCheck::HolderDeactivated {
                holder_name: row.holder_name,
            });
        }
        let role: UserRole = row.holder_role.parse().map_err(StoreError::corrupt)?;
        Ok(SessionCheck::Accepted(Principal {
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            user_id: UserId::from_string(row.user_id),
            token_id: None,
            scopes: role_scopes(role),
        }))
    }

    /// Ends the session `secret` names; returns its provider ID token (for the logout hint)
    /// when it had one. Ending an unknown session is not an error.
    pub async fn end_web_session(&self, secret: &str) -> StoreResult<Option<String>> {
        let id_token: Option<Option<String>> = on_backend!(self, |pool| sqlx::query_scalar(
            "DELETE FROM web_sessions WHERE session_digest = $1 RETURNING id_token"
        )
        .bind(hash_token(secret))
        .fetch_optional(pool)
        .await)?;
        Ok(id_token.flatten())
    }

    /// Ends every browser session of a person (the provider's back-channel logout); returns
    /// how many there were.
    pub async fn end_web_sessions_of(
        &self,
        workspace_id: &WorkspaceId,
        user_id: &UserId,
    ) -> StoreResult<u64> {
        Ok(on_backend!(self, |pool| sqlx::query(
            "DELETE FROM web_sessions WHERE workspace_id = $1 AND user_id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(user_id.as_str())
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?)
    }

    /// How many live sessions a person has (the People API and tests read it).
    pub async fn count_web_sessions(
        &self,
        workspace_id: &WorkspaceId,
        user_id: &UserId,
    ) -> StoreResult<i64> {
        Ok(on_backend!(self, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM web_sessions WHERE workspace_id = $1 AND user_id = $2 \
             AND expires_at > $3"
        )
        .bind(workspace_id.as_str())
        .bind(user_id.as_str())
        .bind(clock::now())
        .fetch_one(pool)
        .await)?)
    }
}

/// Every scope a person with `role` may hold (a session acts with the whole role).
pub fn role_scopes(role: UserRole) -> ScopeSet {
    Scope::ALL
        .into_iter()
        .filter(|scope| role.may_hold(*scope))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_session_holds_everything_but_admin() {
        let scopes = role_scopes(UserRole::Member);
        assert!(!scopes.allows(Scope::Admin));
        assert!(scopes.allows(Scope::ServersWrite));
        assert!(role_scopes(UserRole::Owner).allows(Scope::Admin));
    }
}
