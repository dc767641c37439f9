//! The two connection pools and the macros that run one query text on either of them.
//!
//! Queries are written once with `$1…$N` placeholders (sqlx-sqlite binds `$N` by number) and
//! portable SQL (`ON CONFLICT`, `RETURNING`, `COALESCE`…). [`on_backend!`] expands its body
//! once per backend, so the body is type-checked against both drivers; [`write_transaction!`]
//! does the same inside a write transaction (`BEGIN IMMEDIATE` on SQLite, so a transaction that
//! reads before it writes waits for the write lock instead of failing with `SQLITE_BUSY`).

use crate::config::{BackendKind, DatabaseConfig, SqliteSynchronousMode};
use crate::error::StoreError;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// File name of the embedded database inside the data dir.
pub const SQLITE_FILE_NAME: &str = "switchboard.db";

#[derive(Clone, Debug)]
pub(crate) enum Backend {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Backend {
    pub(crate) fn kind(&self) -> BackendKind {
        match self {
            Backend::Sqlite(_) => BackendKind::Sqlite,
            Backend::Postgres(_) => BackendKind::Postgres,
        }
    }
}

/// Runs `$body` with `$pool` bound to the active pool (`&SqlitePool` or `&PgPool`).
/// The body must evaluate to the same type for both backends (map `QueryResult`s to
/// `rows_affected()` inside it).
macro_rules! on_backend {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.backend {
            $crate::backend::Backend::Sqlite($pool) => $body,
            $crate::backend::Backend::Postgres($pool) => $body,
        }
    };
}
pub(crate) use on_backend;

/// Runs `$body` with `$tx` bound to a write transaction and commits when the body finishes.
/// Leaving the body early (`?`, `return Err(…)`) rolls back. Use `&mut *$tx` as the executor.
macro_rules! write_transaction {
    ($store:expr, |$tx:ident| $body:expr) => {
        match &$store.backend {
            $crate::backend::Backend::Sqlite(pool) => {
                let mut $tx = pool.begin_with("BEGIN IMMEDIATE").await?;
                let value = $body;
                $tx.commit().await?;
                value
            }
            $crate::backend::Backend::Postgres(pool) => {
                let mut $tx = pool.begin().await?;
                let value = $body;
                $tx.commit().await?;
                value
            }
        }
    };
}
pub(crate) use write_transaction;

/// Opens the pool `config` selects. Embedded SQLite lives at `<data_dir>/switchboard.db`.
pub(crate) async fn connect(
    config: &DatabaseConfig,
    data_dir: &Path,
) -> Result<Backend, StoreError> {
    config.validate().map_err(|error| StoreError::Config {
        key: error.key,
        reason: error.reason,
    })?;
    match config.backend_kind().expect("validated above") {
        BackendKind::Sqlite => {
            let options = match config.url.as_deref() {
                Some(url) => {
                    SqliteConnectOptions::from_str(url).map_err(|error| StoreError::Config {
                        key: "url",
                        reason: error.to_string(),
                    })?
                }
                None => {
                    std::fs::create_dir_all(data_dir).map_err(|source| StoreError::Io {
                        path: data_dir.to_owned(),
                        source,
                    })?;
                    SqliteConnectOptions::new().filename(sqlite_path(data_dir))
                }
            };
            connect_sqlite(options, config).await
        }
        BackendKind::Postgres => {
            let url = config
                .url
                .as_deref()
                .expect("postgres is selected by a URL");
            let options = PgConnectOptions::from_str(url).map_err(|error| StoreError::Config {
                key: "url",
                reason: error.to_string(),
            })?;
            connect_postgres(options, config).await
        }
    }
}

pub(crate) fn sqlite_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SQLITE_FILE_NAME)
}

/// SQLite with WAL (readers never block the writer), foreign keys enforced, and by default
/// `synchronous=FULL`: every commit is fsynced before it is acknowledged, so a chat message or
/// tool-call record survives power loss, not just a process kill. `database.sqlite_synchronous
/// = "normal"` trades that for fewer fsyncs: in WAL mode a commit then survives a process kill
/// but the last ones may be lost on power loss or an OS crash.
pub(crate) async fn connect_sqlite(
    options: SqliteConnectOptions,
    config: &DatabaseConfig,
) -> Result<Backend, StoreError> {
    let options = options
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(match config.sqlite_synchronous {
            SqliteSynchronousMode::Full => SqliteSynchronous::Full,
            SqliteSynchronousMode::Normal => SqliteSynchronous::Normal,
        })
        .foreign_keys(true)
        .busy_timeout(config.busy_timeout());
    let pool = SqlitePoolOptions::new()
        .max_connections(config.max_connections)
        .acquire_timeout(config.acquire_timeout())
        .connect_with(options)
        .await
        .map_err(StoreError::Database)?;
    Ok(Backend::Sqlite(pool))
}

/// PostgreSQL with `synchronous_commit=on` forced per session, whatever the server default:
/// a commit is acknowledged only once its WAL record is flushed.
pub(crate) async fn connect_postgres(
    options: PgConnectOptions,
    config: &DatabaseConfig,
) -> Result<Backend, StoreError> {
    let options = options
        .options([("synchronous_commit", "on")])
        .application_name("switchboard");
    let pool = PgPoolOptions::new()
        .max_connections(config.max_connections)
        .acquire_timeout(config.acquire_timeout())
        .connect_with(options)
        .await
        .map_err(StoreError::Database)?;
    Ok(Backend::Postgres(pool))
}
