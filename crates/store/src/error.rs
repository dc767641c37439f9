//! `StoreError`, the one error type at the store's boundary. Foreign errors (sqlx, migrations,
//! AES-GCM, IO) are converted here and nowhere else, so callers match on meaning (not found,
//! unique violation, stale version) rather than on driver details.

use std::path::PathBuf;

/// Everything a store call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The row does not exist in the caller's workspace (rows of other workspaces are
    /// indistinguishable from missing ones).
    #[error("{entity} not found")]
    NotFound { entity: &'static str },

    /// A unique constraint refused the write; `field` names what must be unique.
    #[error("a {entity} with this {field} already exists")]
    UniqueViolation {
        entity: &'static str,
        field: &'static str,
    },

    /// Optimistic locking: the row changed since the caller read it.
    #[error(
        "{entity} was modified concurrently: expected version {expected}, current version {current}"
    )]
    VersionConflict {
        entity: &'static str,
        expected: i64,
        current: i64,
    },

    /// The write is valid in shape but not in the row's current state (for example a tool call
    /// that another task already moved on).
    #[error("{0}")]
    Conflict(String),

    /// The caller passed a value the store refuses; `field` names it.
    #[error("invalid {field}: {reason}")]
    InvalidInput { field: &'static str, reason: String },

    /// A configuration key holds an unusable value.
    #[error("invalid configuration key {key}: {reason}")]
    Config { key: &'static str, reason: String },

    /// The database answered with an error we do not map to a meaning.
    #[error("database error: {0}")]
    Database(#[source] sqlx::Error),

    #[error("database migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),

    /// Encrypting or decrypting a secret failed (wrong key, corrupted ciphertext, bad key text).
    #[error("secret encryption: {0}")]
    Crypto(String),

    /// A stored value could not be interpreted (unknown enum text, malformed JSON).
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    pub(crate) fn not_found(entity: &'static str) -> Self {
        StoreError::NotFound { entity }
    }

    pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        StoreError::InvalidInput {
            field,
            reason: reason.into(),
        }
    }

    pub(crate) fn corrupt(what: impl Into<String>) -> Self {
        StoreError::Corrupt(what.into())
    }

    /// True when the row does not exist in the caller's workspace.
    pub fn is_not_found(&self) -> bool {
        matches!(self, StoreError::NotFound { .. })
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        match &error {
            sqlx::Error::RowNotFound => StoreError::NotFound { entity: "row" },
            sqlx::Error::Database(database_error) if database_error.is_unique_violation() => {
                StoreError::UniqueViolation {
                    entity: "row",
                    field: "key",
                }
            }
            _ => StoreError::Database(error),
        }
    }
}

/// Maps a unique violation to a `UniqueViolation` naming `entity` and `field`; any other error
/// converts as usual. Use as `.map_err(unique_violation("server", "name"))`.
pub(crate) fn unique_violation(
    entity: &'static str,
    field: &'static str,
) -> impl Fn(sqlx::Error) -> StoreError {
    move |error| match &error {
        sqlx::Error::Database(database_error) if database_error.is_unique_violation() => {
            StoreError::UniqueViolation { entity, field }
        }
        _ => StoreError::from(error),
    }
}

/// Maps an insert's unique violation to `UniqueViolation { entity, field }` and its foreign-key
/// violation (the parent row is missing) to `NotFound { entity: missing_parent }`.
pub(crate) fn insert_error(
    entity: &'static str,
    field: &'static str,
    missing_parent: &'static str,
) -> impl Fn(sqlx::Error) -> StoreError {
    move |error| match &error {
        sqlx::Error::Database(database_error) if database_error.is_unique_violation() => {
            StoreError::UniqueViolation { entity, field }
        }
        sqlx::Error::Database(database_error) if database_error.is_foreign_key_violation() => {
            StoreError::NotFound {
                entity: missing_parent,
            }
        }
        _ => StoreError::from(error),
    }
}

pub type StoreResult<T> = Result<T, StoreError>;
