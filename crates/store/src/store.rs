//! `Store`: the handle every other crate holds. Opening, migrating, readiness and shutdown live
//! here; the methods for each area (workspaces, servers, messages…) live in that area's module
//! as further `impl Store` blocks.

use crate::backend::{self, Backend, on_backend};
use crate::commit_queue::CommitQueue;
use crate::config::{BackendKind, DatabaseConfig};
use crate::error::StoreError;
use crate::instances::Registration;
use crate::secrets::SecretCipher;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// Migrations are embedded at compile time, one directory per backend (see `build.rs`).
static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// The persistence handle: a connection pool plus the secret cipher. Clone it freely; clones
/// share the pool.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) backend: Backend,
    pub(crate) cipher: Arc<SecretCipher>,
    /// This process's instance once registered (shared by clones); the rows of its answers
    /// carry its id (see `instances`).
    pub(crate) registration: Arc<OnceLock<Registration>>,
    /// The revocation epoch (see `revocations`), shared by clones.
    pub(crate) revocations: Arc<crate::revocations::Revocations>,
    /// SQLite's group commit (`commit_queue`) for the hot write paths; `None` on PostgreSQL.
    pub(crate) commit_queue: Option<Arc<CommitQueue>>,
}

impl Store {
    /// Connects to the database `config` selects and applies pending migrations.
    pub async fn open(
        config: &DatabaseConfig,
        data_dir: &Path,
        cipher: SecretCipher,
    ) -> Result<Store, StoreError> {
        let store = Store::connect(config, data_dir, cipher).await?;
        store.migrate().await?;
        Ok(store)
    }

    /// Connects without migrating (for `switchboard migrate` and tooling).
    pub async fn connect(
        config: &DatabaseConfig,
        data_dir: &Path,
        cipher: SecretCipher,
    ) -> Result<Store, StoreError> {
        let backend = backend::connect(config, data_dir).await?;
        tracing::debug!(backend = %backend.kind(), "store connected");
        let commit_queue = match &backend {
            Backend::Sqlite(pool) => Some(Arc::new(CommitQueue::start(pool.clone()))),
            Backend::Postgres(_) => None,
        };
        Ok(Store {
            backend,
            commit_queue,
            cipher: Arc::new(cipher),
            registration: Arc::default(),
            revocations: Arc::default(),
        })
    }

    /// Applies every migration not yet applied. Safe to run concurrently from several
    /// processes (sqlx takes a lock on PostgreSQL; SQLite serialises writers).
    pub async fn migrate(&self) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Sqlite(pool) => SQLITE_MIGRATIONS.run(pool).await?,
            Backend::Postgres(pool) => POSTGRES_MIGRATIONS.run(pool).await?,
        }
        Ok(())
    }

    /// Versions of the migrations this build knows, in order (e.g. `[1, 2, 3]`).
    pub fn known_migration_versions(&self) -> Vec<i64> {
        let migrator = match self.backend.kind() {
            BackendKind::Sqlite => &SQLITE_MIGRATIONS,
            BackendKind::Postgres => &POSTGRES_MIGRATIONS,
        };
        migrator.iter().map(|migration| migration.version).collect()
    }

    /// Readiness probe: one round trip to the database.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let one: i64 = on_backend!(self, |pool| sqlx::query_scalar("SELECT CAST(1 AS BIGINT)")
            .fetch_one(pool)
            .await)?;
        debug_assert_eq!(one, 1);
        Ok(())
    }

    /// The settings that make acknowledged writes durable, as the database reports them for a
    /// pooled connection (for the start-up log and tests): SQLite `journal_mode`,
    /// `synchronous`, `foreign_keys`; PostgreSQL `synchronous_commit`, `fsync`.
    pub async fn durability_settings(&self) -> Result<BTreeMap<&'static str, String>, StoreError> {
        let mut settings = BTreeMap::new();
        match &self.backend {
            Backend::Sqlite(pool) => {
                let mut connection = pool.acquire().await?;
                let journal_mode: String = sqlx::query_scalar("PRAGMA journal_mode")
                    .fetch_one(&mut *connection)
                    .await?;
                let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
                    .fetch_one(&mut *connection)
                    .await?;
                let foreign_keys: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
                    .fetch_one(&mut *connection)
                    .await?;
                let synchronous = match synchronous {
                    0 => "off",
                    1 => "normal",
                    2 => "full",
                    3 => "extra",
                    _ => "unknown",
                };
                settings.insert("journal_mode", journal_mode.to_lowercase());
                settings.insert("synchronous", synchronous.to_owned());
                settings.insert(
                    "foreign_keys",
                    if foreign_keys == 1 { "on" } else { "off" }.to_owned(),
                );
            }
            Backend::Postgres(pool) => {
                let mut connection = pool.acquire().await?;
                for name in ["synchronous_commit", "fsync"] {
                    let value: String = sqlx::query_scalar("SELECT current_setting($1)")
                        .bind(name)
                        .fetch_one(&mut *connection)
                        .await?;
                    settings.insert(name, value);
                }
            }
        }
        Ok(settings)
    }

    pub fn backend_kind(&self) -> BackendKind {
        self.backend.kind()
    }

    /// The cipher protecting secrets at rest (for area modules storing their own secrets).
    pub fn cipher(&self) -> &SecretCipher {
        &self.cipher
    }

    /// Waits for checked-out connections to return and closes the pool.
    pub async fn close(&self) {
        on_backend!(self, |pool| pool.close().await)
    }
}
