//! The `[database]` configuration section: which backend, pool sizes and timeouts.
//! The binary composes it into its TOML file and applies `DATABASE_URL` on top.

use serde::Deserialize;
use std::fmt;
use std::time::Duration;

/// `[database]` settings. With no `url` the store is an embedded SQLite file
/// (`<data_dir>/switchboard.db`); `postgres://…` selects PostgreSQL.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatabaseConfig {
    /// `postgres://user@host/db`, `sqlite://path/to/file.db`, or unset for the embedded default.
    pub url: Option<String>,
    /// Upper bound on pooled connections (default 10).
    pub max_connections: u32,
    /// How long a SQLite writer waits for the write lock before failing (default 5000 ms).
    pub busy_timeout_ms: u64,
    /// How long a caller waits for a free pooled connection (default 10000 ms).
    pub acquire_timeout_ms: u64,
    /// SQLite's `synchronous` (default `full`: every commit fsynced, survives power loss;
    /// `normal` in WAL mode survives a process kill but may lose the last commits on power loss
    /// or an OS crash). PostgreSQL ignores it (`synchronous_commit=on` always).
    pub sqlite_synchronous: SqliteSynchronousMode,
}

/// `database.sqlite_synchronous`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SqliteSynchronousMode {
    #[default]
    Full,
    Normal,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            url: None,
            max_connections: 10,
            busy_timeout_ms: 5_000,
            acquire_timeout_ms: 10_000,
            sqlite_synchronous: SqliteSynchronousMode::Full,
        }
    }
}

/// Which database a URL selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    Sqlite,
    Postgres,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Sqlite => "sqlite",
            BackendKind::Postgres => "postgres",
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A configuration value that cannot work; `key` is the TOML key under `[database]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("database.{key}: {reason}")]
pub struct DatabaseConfigError {
    pub key: &'static str,
    pub reason: String,
}

impl DatabaseConfig {
    /// The backend `url` selects (SQLite when unset).
    pub fn backend_kind(&self) -> Result<BackendKind, DatabaseConfigError> {
        match self.url.as_deref() {
            None => Ok(BackendKind::Sqlite),
            Some(url) if url.starts_with("sqlite:") => Ok(BackendKind::Sqlite),
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Ok(BackendKind::Postgres)
            }
            Some(url) => Err(DatabaseConfigError {
                key: "url",
                reason: format!(
                    "unsupported database URL '{}' (expected postgres://…, postgresql://… or sqlite://…)",
                    redact_url(url)
                ),
            }),
        }
    }

    /// Checks every key; the first bad one is named in the error.
    pub fn validate(&self) -> Result<(), DatabaseConfigError> {
        if self.backend_kind()? == BackendKind::Sqlite
            && let Some(url) = &self.url
            && (url.contains(":memory:") || url.contains("mode=memory"))
        {
            return Err(DatabaseConfigError {
                key: "url",
                reason: "in-memory SQLite is not supported (every pooled connection would see its \
                         own empty database); give a file path or leave url unset"
                    .to_owned(),
            });
        }
        if self.max_connections == 0 {
            return Err(DatabaseConfigError {
                key: "max_connections",
                reason: "must be at least 1".to_owned(),
            });
        }
        if self.busy_timeout_ms == 0 {
            return Err(DatabaseConfigError {
                key: "busy_timeout_ms",
                reason: "must be greater than 0".to_owned(),
            });
        }
        if self.acquire_timeout_ms == 0 {
            return Err(DatabaseConfigError {
                key: "acquire_timeout_ms",
                reason: "must be greater than 0".to_owned(),
            });
        }
        Ok(())
    }

    pub fn busy_timeout(&self) -> Duration {
        Duration::from_millis(self.busy_timeout_ms)
    }

    pub fn acquire_timeout(&self) -> Duration {
        Duration::from_millis(self.acquire_timeout_ms)
    }
}

impl fmt::Debug for DatabaseConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseConfig")
            .field("url", &self.url.as_deref().map(redact_url))
            .field("max_connections", &self.max_connections)
            .field("busy_timeout_ms", &self.busy_timeout_ms)
            .field("acquire_timeout_ms", &self.acquire_timeout_ms)
            .field("sqlite_synchronous", &self.sqlite_synchronous)
            .finish()
    }
}

/// Replaces the password of `scheme://user:password@host…` with `***` for logs and errors.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((credentials, host)) => match credentials.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_select_embedded_sqlite_and_validate() {
        let config = DatabaseConfig::default();
        assert_eq!(config.backend_kind().unwrap(), BackendKind::Sqlite);
        config.validate().unwrap();
    }

    #[test]
    fn postgres_urls_select_postgres_and_unknown_schemes_name_the_key() {
        let mut config = DatabaseConfig {
            url: Some("postgresql://u@h/db".into()),
            ..DatabaseConfig::default()
        };
        assert_eq!(config.backend_kind().unwrap(), BackendKind::Postgres);
        config.url = Some("mysql://root:hunter2@h/db".into());
        let error = config.validate().unwrap_err();
        assert_eq!(error.key, "url");
        assert!(!error.to_string().contains("hunter2"), "{error}");
    }

    #[test]
    fn in_memory_sqlite_is_refused() {
        let config = DatabaseConfig {
            url: Some("sqlite::memory:".into()),
            ..DatabaseConfig::default()
        };
        assert_eq!(config.validate().unwrap_err().key, "url");
    }

    #[test]
    fn zero_pool_size_is_refused_by_name() {
        let config = DatabaseConfig {
            max_connections: 0,
            ..DatabaseConfig::default()
        };
        assert_eq!(config.validate().unwrap_err().key, "max_connections");
    }

    #[test]
    fn debug_and_redaction_hide_passwords() {
        let config = DatabaseConfig {
            url: Some("postgres://app:s3cret@db:5432/switchboard".into()),
            ..DatabaseConfig::default()
        };
        let debug = format!("{config:?}");
        assert!(!debug.contains("s3cret"), "{debug}");
        assert!(
            debug.contains("postgres://app:***@db:5432/switchboard"),
            "{debug}"
        );
    }

    #[test]
    fn sqlite_synchronous_defaults_to_full_and_reads_normal() {
        assert_eq!(
            DatabaseConfig::default().sqlite_synchronous,
            SqliteSynchronousMode::Full
        );
        let config = toml_like(r#"{"sqlite_synchronous": "normal"}"#).unwrap();
        assert_eq!(config.sqlite_synchronous, SqliteSynchronousMode::Normal);
        let error = toml_like(r#"{"sqlite_synchronous": "off"}"#).unwrap_err();
        assert!(error.to_string().contains("off"), "{error}");
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let error = toml_like(r#"{"url": null, "pool": 3}"#).unwrap_err();
        assert!(error.to_string().contains("pool"), "{error}");
    }

    fn toml_like(json: &str) -> Result<DatabaseConfig, serde_json::Error> {
        serde_json::from_str(json)
    }
}
