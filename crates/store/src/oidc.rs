//! Single sign-on state: sign-ins in progress and the people providers vouch for.
//!
//! A sign-in in progress ([`Store::save_oidc_login`]) is keyed by the SHA-256 of its `state`
//! (a bearer secret of the flow); its PKCE verifier and nonce are sealed to that key. The
//! callback takes it in one statement (`DELETE … RETURNING`), so a `state` works once, and a
//! reused or forged one finds nothing.
//!
//! A person is matched by (issuer, subject), the pair OpenID Connect promises is stable and
//! never reassigned; the first sign-in creates the person and the link in one transaction
//! ([`Store::create_oidc_person`]).

use crate::backend::{on_backend, write_transaction};
use crate::clock;
use crate::error::{StoreError, StoreResult};
use crate::store::Store;
use crate::tokens::hash_token;
use crate::users::{INSERT_USER_SQL, UserRecord, UserRole};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchboard_core::{UserId, WorkspaceId};

/// What the callback needs back from the sign-in it finishes. `Debug` hides both secrets.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OidcLoginSecrets {
    pub pkce_verifier: String,
    pub nonce: String,
}

impl std::fmt::Debug for OidcLoginSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OidcLoginSecrets([REDACTED])")
    }
}

/// What [`Store::take_oidc_login`] found. Either way the sign-in is gone afterwards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OidcLoginTake {
    Valid(OidcLoginSecrets),
    Expired,
    /// Never issued, already used, or purged.
    Unknown,
}

/// A person as a provider knows them, for the first sign-in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewOidcPerson<'a> {
    pub issuer: &'a str,
    pub subject: &'a str,
    pub email: Option<&'a str>,
    /// The wanted display name; ` (2)`, ` (3)`… is added when it is taken.
    pub name: &'a str,
    pub role: UserRole,
}

#[derive(sqlx::FromRow)]
struct LoginRow {
    payload_ciphertext: Vec<u8>,
    expires_at: DateTime<Utc>,
}

/// How many suffixed names are tried before giving up on a taken name.
const NAME_ATTEMPTS: u32 = 20;

impl Store {
    /// Remembers a sign-in in progress until `expires_at` (and purges the expired ones).
    pub async fn save_oidc_login(
        &self,
        state: &str,
        secrets: &OidcLoginSecrets,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        if state.is_empty() {
            return Err(StoreError::invalid("state", "must not be empty"));
        }
        let digest = hash_token(state);
        let payload = serde_json::to_value(secrets)
            .map_err(|error| StoreError::Crypto(format!("cannot serialise a payload: {error}")))?;
        let sealed = self.seal_json(&payload, &digest)?;
        let now = clock::now();
        on_backend!(self, |pool| sqlx::query(
            "DELETE FROM oidc_logins WHERE expires_at <= $1"
        )
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ()))?;
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO oidc_logins (state_digest, payload_ciphertext, expires_at) \
             VALUES ($1, $2, $3)"
        )
        .bind(&digest)
        .bind(&sealed)
        .bind(clock::truncate_to_micros(expires_at))
        .execute(pool)
        .await
        .map(|_| ()))?;
        Ok(())
    }

    /// Consumes the sign-in `state` names, in one statement: `Valid` once, then `Unknown`.
    pub async fn take_oidc_login(&self, state: &str) -> StoreResult<OidcLoginTake> {
        let digest = hash_token(state);
        let row: Option<LoginRow> = on_backend!(self, |pool| sqlx::query_as(
            "DELETE FROM oidc_logins WHERE state_digest = $1 \
             RETURNING payload_ciphertext, expires_at"
        )
        .bind(&digest)
        .fetch_optional(pool)
        .await)?;
        let Some(row) = row else {
            return Ok(OidcLoginTake::Unknown);
        };
        if row.expires_at <= clock::now() {
            return Ok(OidcLoginTake::Expired);
        }
        let payload = self.open_json(&row.payload_ciphertext, &digest)?;
        let secrets = serde_json::from_value(payload)
            .map_err(|error| StoreError::corrupt(format!("sealed sign-in: {error}")))?;
        Ok(OidcLoginTake::Valid(secrets))
    }

    /// The person linked to (`issuer`, `subject`) in `workspace_id`, if any.
    pub async fn find_oidc_person(
        &self,
        workspace_id: &WorkspaceId,
        issuer: &str,
        subject: &str,
    ) -> StoreResult<Option<UserRecord>> {
        let user_id: Option<String> = on_backend!(self, |pool| sqlx::query_scalar(
            "SELECT user_id FROM oidc_identities \
             WHERE issuer = $1 AND subject = $2 AND workspace_id = $3"
        )
        .bind(issuer)
        .bind(subject)
        .bind(workspace_id.as_str())
        .fetch_optional(pool)
        .await)?;
        match user_id {
            Some(user_id) => Ok(Some(
                self.get_user(workspace_id, &UserId::from_string(user_id))
                    .await?,
            )),
            None => Ok(None),
        }
    }

    /// Creates the person a provider vouched for and links them to (issuer, subject), in one
    /// transaction. A taken name gets a number (`alice@example.com (2)`); a (issuer, subject)
    /// linked meanwhile by a concurrent first sign-in is `UniqueViolation { field: "subject" }`.
    pub async fn create_oidc_person(
        &self,
        workspace_id: &WorkspaceId,
        person: NewOidcPerson<'_>,
    ) -> StoreResult<UserRecord> {
        let name = self.free_user_name(workspace_id, person.name).await?;
        let record = UserRecord {
            id: UserId::generate(),
            workspace_id: workspace_id.clone(),
            name,
            role: person.role,
            active: true,
            created_at: clock::now(),
        };
        write_transaction!(self, |tx| {
            sqlx::query(INSERT_USER_SQL)
                .bind(record.id.as_str())
                .bind(record.workspace_id.as_str())
                .bind(&record.name)
                .bind(record.role.as_str())
                .bind(record.created_at)
                .execute(&mut *tx)
                .await?;
            let linked = sqlx::query(
                "INSERT INTO oidc_identities (issuer, subject, workspace_id, user_id, email, \
                 created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            )
            .bind(person.issuer)
            .bind(person.subject)
            .bind(record.workspace_id.as_str())
            .bind(record.id.as_str())
            .bind(person.email)
            .bind(record.created_at)
            .execute(&mut *tx)
            .await?;
            if linked.rows_affected() == 0 {
                // Dropping the transaction rolls the new user back.
                return Err(StoreError::UniqueViolation {
                    entity: "oidc identity",
                    field: "subject",
                });
            }
        });
        Ok(record)
    }

    /// `wanted`, or the first of `wanted (2)`, `wanted (3)`… that no user of the workspace has.
    async fn free_user_name(
        &self,
        workspace_id: &WorkspaceId,
        wanted: &str,
    ) -> StoreResult<String> {
        for attempt in 1..=NAME_ATTEMPTS {
            let name = match attempt {
                1 => wanted.to_owned(),
                n => format!("{wanted} ({n})"),
            };
            if self.find_user_by_name(workspace_id, &name).await?.is_none() {
                return Ok(name);
            }
        }
        Err(StoreError::invalid(
            "name",
            format!("'{wanted}' and its first {NAME_ATTEMPTS} numbered variants are taken"),
        ))
    }
}
