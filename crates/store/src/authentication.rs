//! Resolving a bearer token to the [`Principal`] it acts as, on every request.
//!
//! One indexed query: the token by its hash (a unique index, so lookup time says nothing about
//! how close a guess was) joined with its holder by primary key, so the holder's **current**
//! role and active flag are read with it at no extra round trip. A deactivated holder's
//! tokens are refused ([`TokenCheck::HolderDeactivated`]); the scopes a token grants are its own
//! cut down to what the holder's role may hold now (a demoted admin's tokens lose `admin` at
//! once, and get it back only with the role). Nothing is cached here; callers that cache
//! verdicts (`/mcp`) drop them when the revocation epoch moves, which every revocation and
//! every change of a user's role or active flag does (`revocations.rs`, `user_access.rs`).

use crate::backend::on_backend;
use crate::clock;
use crate::error::StoreResult;
use crate::store::Store;
use crate::tokens::{TokenRecord, TokenRow, hash_token};
use crate::users::UserRole;
use chrono::{DateTime, TimeDelta, Utc};
use switchboard_core::{Principal, ScopeSet, TokenId};

/// `last_used_at` is rewritten at most this often per token, to keep authentication read-mostly.
const LAST_USED_GRANULARITY: TimeDelta = TimeDelta::seconds(60);

const AUTHENTICATE_SQL: &str = "SELECT t.id, t.workspace_id, t.user_id, t.name, t.token_prefix, \
     t.scopes, t.created_at, t.expires_at, t.revoked_at, t.last_used_at, \
     u.name AS holder_name, u.role AS holder_role, u.active AS holder_active \
     FROM api_tokens t JOIN users u ON u.workspace_id = t.workspace_id AND u.id = t.user_id \
     WHERE t.token_hash = $1";

/// What a bearer token is worth right now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenCheck {
    /// Valid: the principal, with the token's scopes bounded by the holder's current role.
    Accepted(Principal),
    /// Unknown, revoked or expired (which one is not said, to a guesser or anyone).
    Refused,
    /// A real, unrevoked token whose holder an admin deactivated.
    HolderDeactivated { holder_name: String },
}

#[derive(sqlx::FromRow)]
struct AuthenticationRow {
    #[sqlx(flatten)]
    token: TokenRow,
    holder_name: String,
    holder_role: String,
    holder_active: bool,
}

impl Store {
    /// Resolves a bearer token to its principal; `None` for unknown, revoked or expired tokens
    /// and for tokens of a deactivated user (see [`Store::check_token`] to tell them apart).
    pub async fn authenticate(&self, plaintext: &str) -> StoreResult<Option<Principal>> {
        self.authenticate_at(plaintext, clock::now()).await
    }

    /// [`Store::authenticate`] as of `now` (lets tests move the clock past an expiry).
    pub async fn authenticate_at(
        &self,
        plaintext: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Principal>> {
        Ok(match self.check_token_at(plaintext, now).await? {
            TokenCheck::Accepted(principal) => Some(principal),
            TokenCheck::Refused | TokenCheck::HolderDeactivated { .. } => None,
        })
    }

    /// What a bearer token is worth now (see [`TokenCheck`]).
    pub async fn check_token(&self, plaintext: &str) -> StoreResult<TokenCheck> {
        self.check_token_at(plaintext, clock::now()).await
    }

    async fn check_token_at(&self, plaintext: &str, now: DateTime<Utc>) -> StoreResult<TokenCheck> {
        if plaintext.is_empty() || plaintext.len() > 1024 {
            return Ok(TokenCheck::Refused);
        }
        let token_hash = hash_token(plaintext);
        let row: Option<AuthenticationRow> =
            on_backend!(self, |pool| sqlx::query_as(AUTHENTICATE_SQL)
                .bind(&token_hash)
                .fetch_optional(pool)
                .await)?;
        let Some(row) = row else {
            return Ok(TokenCheck::Refused);
        };
        let record = TokenRecord::try_from(row.token)?;
        if !record.is_usable_at(now) {
            return Ok(TokenCheck::Refused);
        }
        if !row.holder_active {
            return Ok(TokenCheck::HolderDeactivated {
                holder_name: row.holder_name,
            });
        }
        let role: UserRole = row
            .holder_role
            .parse()
            .map_err(crate::error::StoreError::corrupt)?;
        let stale = record
            .last_used_at
            .is_none_or(|last_used_at| now - last_used_at >= LAST_USED_GRANULARITY);
        if stale && let Err(error) = self.touch_token(&record.id, now).await {
            // Losing a usage timestamp must not turn a valid request away.
            tracing::warn!(token_id = %record.id, %error, "could not record token use");
        }
        Ok(TokenCheck::Accepted(Principal {
            workspace_id: record.workspace_id,
            user_id: record.user_id,
            token_id: Some(record.id),
            scopes: bounded_by_role(&record.scopes, role),
        }))
    }

    async fn touch_token(&self, token_id: &TokenId, now: DateTime<Utc>) -> StoreResult<()> {
        let now = clock::truncate_to_micros(now);
        on_backend!(self, |pool| sqlx::query(
            "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2"
        )
        .bind(now)
        .bind(token_id.as_str())
        .execute(pool)
        .await
        .map(|_| ()))?;
        Ok(())
    }
}

/// The token's scopes that a holder with `role` may hold today.
fn bounded_by_role(scopes: &ScopeSet, role: UserRole) -> ScopeSet {
    scopes
        .iter()
        .filter(|scope| role.may_hold(*scope))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::Scope;

    #[test]
    fn a_member_keeps_every_scope_but_admin() {
        let scopes: ScopeSet = [Scope::Admin, Scope::ChatUse].into_iter().collect();
        let member = bounded_by_role(&scopes, UserRole::Member);
        assert!(!member.allows(Scope::Admin));
        assert!(member.allows(Scope::ChatUse));
        assert!(!member.allows(Scope::ServersWrite));
        assert_eq!(bounded_by_role(&scopes, UserRole::Admin), scopes);
    }
}
