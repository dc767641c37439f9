//! API tokens: issuing, listing, revoking (resolving a bearer token to a `Principal` is
//! `authentication.rs`).
//!
//! Only the SHA-256 of a token is stored, plus a short non-secret prefix for display. A token is
//! found by its hash (a unique index), so lookup time says nothing about how close a guess was.
//! The plaintext exists once, in the [`IssuedToken`] returned at creation.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::store::Store;
use crate::validate;
use chrono::{DateTime, Utc};
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::fmt;
use switchboard_core::{ScopeSet, TokenId, UserId, WorkspaceId};

/// Every generated token starts with this, so leaked tokens are easy to recognise and scan for.
pub const TOKEN_PREFIX: &str = "sb_";
/// Length of the display prefix kept for generated tokens (`sb_` + 9 hex digits).
const DISPLAY_PREFIX_LENGTH: usize = 12;
/// Shortest token accepted when importing one chosen by an operator.
pub const MIN_IMPORTED_TOKEN_LENGTH: usize = 16;

/// What a new token is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewToken {
    /// The user the token acts as; must belong to the workspace.
    pub user_id: UserId,
    /// A label for people ("ci", "laptop").
    pub name: String,
    pub scopes: ScopeSet,
    /// `None` for a token that never expires.
    pub expires_at: Option<DateTime<Utc>>,
}

/// A token as stored: everything but the secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRecord {
    pub id: TokenId,
    pub workspace_id: WorkspaceId,
    pub user_id: UserId,
    pub name: String,
    /// The first characters of the token, for recognising it in a list (not a secret).
    pub display_prefix: String,
    pub scopes: ScopeSet,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// Updated at most once a minute.
    pub last_used_at: Option<DateTime<Utc>>,
}

impl TokenRecord {
    /// True when the token authenticates at `now`: not revoked and not expired.
    pub fn is_usable_at(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|expires_at| now < expires_at)
    }
}

/// A token's secret text. `Debug` and `Display` never show it; call [`TokenPlaintext::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct TokenPlaintext(String);

impl TokenPlaintext {
    pub(crate) fn from_secret(plaintext: String) -> Self {
        Self(plaintext)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Debug for TokenPlaintext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenPlaintext([REDACTED])")
    }
}

/// A freshly created token: the stored record and the plaintext, shown to the user once.
#[derive(Clone, Debug)]
pub struct IssuedToken {
    pub record: TokenRecord,
    pub plaintext: TokenPlaintext,
}

/// The SHA-256 (hex) under which a token is stored.
pub fn hash_token(plaintext: &str) -> String {
    hex::encode(Sha256::digest(plaintext.as_bytes()))
}

/// A new random token: `sb_` followed by 64 hex digits (256 bits).
pub(crate) fn generate_plaintext() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{TOKEN_PREFIX}{}", hex::encode(bytes))
}

/// The display prefix: 12 characters of a generated token; a quarter (at most 6 characters)
/// of an operator-chosen one, which may be short.
pub(crate) fn display_prefix(plaintext: &str) -> String {
    let length =
        if plaintext.starts_with(TOKEN_PREFIX) && plaintext.len() > 3 * DISPLAY_PREFIX_LENGTH {
            DISPLAY_PREFIX_LENGTH
        } else {
            (plaintext.chars().count() / 4).min(6)
        };
    plaintext.chars().take(length).collect()
}

#[derive(sqlx::FromRow)]
pub(crate) struct TokenRow {
    id: String,
    workspace_id: String,
    user_id: String,
    name: String,
    token_prefix: String,
    scopes: String,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
}

impl TryFrom<TokenRow> for TokenRecord {
    type Error = StoreError;

    fn try_from(row: TokenRow) -> Result<Self, Self::Error> {
        Ok(TokenRecord {
            id: TokenId::from_string(row.id),
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            user_id: UserId::from_string(row.user_id),
            name: row.name,
            display_prefix: row.token_prefix,
            scopes: ScopeSet::parse_list(&row.scopes)
                .map_err(|error| StoreError::corrupt(error.to_string()))?,
            created_at: row.created_at,
            expires_at: row.expires_at,
            revoked_at: row.revoked_at,
            last_used_at: row.last_used_at,
        })
    }
}

macro_rules! select_tokens {
    ($tail:literal) => {
        concat!(
            "SELECT id, workspace_id, user_id, name, token_prefix, scopes, created_at, expires_at, ",
            "revoked_at, last_used_at FROM api_tokens ",
            $tail
        )
    };
}

pub(crate) const INSERT_TOKEN_SQL: &str = "INSERT INTO api_tokens (id, workspace_id, user_id, name, token_hash, token_prefix, scopes, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// Checks a new token's fields and builds its record.
pub(crate) fn prepare_token(
    workspace_id: &WorkspaceId,
    new_token: NewToken,
    plaintext: &str,
) -> StoreResult<TokenRecord> {
    validate::display_text("name", &new_token.name, 200)?;
    if new_token.scopes.is_empty() {
        return Err(StoreError::invalid(
            "scopes",
            "a token needs at least one scope",
        ));
    }
    let created_at = clock::now();
    if let Some(expires_at) = new_token.expires_at
        && expires_at <= created_at
    {
        return Err(StoreError::invalid("expires_at", "must be in the future"));
    }
    Ok(TokenRecord {
        id: TokenId::generate(),
        workspace_id: workspace_id.clone(),
        user_id: new_token.user_id,
        name: new_token.name,
        display_prefix: display_prefix(plaintext),
        scopes: new_token.scopes,
        created_at,
        expires_at: new_token.expires_at.map(clock::truncate_to_micros),
        revoked_at: None,
        last_used_at: None,
    })
}

impl Store {
    /// Issues a new random token. The plaintext is returned here and never again. The user
    /// must belong to the workspace (`NotFound { entity: "user" }`) and may hold the scopes
    /// ([`Store::check_token_holder`]: a member's token may not carry `admin`, `InvalidInput
    /// { field: "scopes" }`), so no caller can issue a token its user may not hold.
    pub async fn create_token(
        &self,
        workspace_id: &WorkspaceId,
        new_token: NewToken,
    ) -> StoreResult<IssuedToken> {
        let plaintext = generate_plaintext();
        let record = self
            .insert_token(workspace_id, new_token, &plaintext)
            .await?;
        Ok(IssuedToken {
            record,
            plaintext: TokenPlaintext(plaintext),
        })
    }

    /// Stores a token whose text an operator chose (e.g. `SWITCHBOARD_ADMIN_TOKEN`). It must be
    /// at least 16 characters; `UniqueViolation { field: "token" }` if it is already in use.
    /// The user and scopes are checked as for [`Store::create_token`].
    pub async fn import_token(
        &self,
        workspace_id: &WorkspaceId,
        new_token: NewToken,
        plaintext: &str,
    ) -> StoreResult<TokenRecord> {
        validate_imported_plaintext(plaintext)?;
        self.insert_token(workspace_id, new_token, plaintext).await
    }

    async fn insert_token(
        &self,
        workspace_id: &WorkspaceId,
        new_token: NewToken,
        plaintext: &str,
    ) -> StoreResult<TokenRecord> {
        let record = prepare_token(workspace_id, new_token, plaintext)?;
        self.check_token_holder(workspace_id, &record.user_id, &record.scopes)
            .await?;
        let token_hash = hash_token(plaintext);
        on_backend!(self, |pool| sqlx::query(INSERT_TOKEN_SQL)
            .bind(record.id.as_str())
            .bind(record.workspace_id.as_str())
            .bind(record.user_id.as_str())
            .bind(&record.name)
            .bind(&token_hash)
            .bind(&record.display_prefix)
            .bind(record.scopes.to_string())
            .bind(record.created_at)
            .bind(record.expires_at)
            .execute(pool)
            .await
            .map(|_| ()))
        .map_err(insert_error("token", "token", "user"))?;
        Ok(record)
    }

    pub async fn get_token(
        &self,
        workspace_id: &WorkspaceId,
        token_id: &TokenId,
    ) -> StoreResult<TokenRecord> {
        let row: Option<TokenRow> = on_backend!(self, |pool| sqlx::query_as(select_tokens!(
            "WHERE workspace_id = $1 AND id = $2"
        ))
        .bind(workspace_id.as_str())
        .bind(token_id.as_str())
        .fetch_optional(pool)
        .await)?;
        row.ok_or_else(|| StoreError::not_found("token"))?
            .try_into()
    }

    /// The workspace's tokens (revoked and expired ones included), oldest first.
    pub async fn list_tokens(&self, workspace_id: &WorkspaceId) -> StoreResult<Vec<TokenRecord>> {
        let rows: Vec<TokenRow> = on_backend!(self, |pool| sqlx::query_as(select_tokens!(
            "WHERE workspace_id = $1 ORDER BY created_at, id"
        ))
        .bind(workspace_id.as_str())
        .fetch_all(pool)
        .await)?;
        rows.into_iter().map(TokenRecord::try_from).collect()
    }

    /// Revokes a token. Revoking twice keeps the first revocation time.
    pub async fn revoke_token(
        &self,
        workspace_id: &WorkspaceId,
        token_id: &TokenId,
    ) -> StoreResult<TokenRecord> {
        let affected = on_backend!(self, |pool| {
            sqlx::query(
            "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $3) WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(token_id.as_str())
        .bind(clock::now())
        .execute(pool)
        .await
        .map(|result| result.rows_affected())
        })?;
        if affected == 0 {
            return Err(StoreError::not_found("token"));
        }
        // Caches of verified tokens (here and in other replicas) forget them now.
        self.announce_revocation(token_id.as_str()).await;
        self.get_token(workspace_id, token_id).await
    }
}

pub(crate) fn validate_imported_plaintext(plaintext: &str) -> StoreResult<()> {
    if plaintext.chars().count() < MIN_IMPORTED_TOKEN_LENGTH {
        return Err(StoreError::invalid(
            "token",
            format!("must be at least {MIN_IMPORTED_TOKEN_LENGTH} characters long"),
        ));
    }
    if plaintext.len() > 1024
        || plaintext
            .chars()
            .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(StoreError::invalid(
            "token",
            "must be at most 1024 characters with no spaces or control characters",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_prefixed_random_and_hash_stably() {
        let first = generate_plaintext();
        let second = generate_plaintext();
        assert!(first.starts_with("sb_"));
        assert_eq!(first.len(), 3 + 64);
        assert_ne!(first, second);
        assert_eq!(hash_token(&first), hash_token(&first));
        assert_eq!(hash_token(&first).len(), 64);
        assert!(!hash_token(&first).contains(&first[3..]));
    }

    #[test]
    fn display_prefix_reveals_little() {
        let generated = generate_plaintext();
        assert_eq!(display_prefix(&generated), generated[..12]);
        assert_eq!(display_prefix("operator-chosen-secret"), "opera");
        assert_eq!(display_prefix("0123456789abcdef0123456789abcdef"), "012345");
    }

    #[test]
    fn imported_tokens_must_be_long_and_printable() {
        assert!(validate_imported_plaintext("short").is_err());
        assert!(validate_imported_plaintext("has a space in it!!").is_err());
        validate_imported_plaintext("a-long-enough-token").unwrap();
    }

    #[test]
    fn plaintext_debug_is_redacted() {
        let plaintext = TokenPlaintext("sb_secret".into());
        assert_eq!(format!("{plaintext:?}"), "TokenPlaintext([REDACTED])");
    }
}
