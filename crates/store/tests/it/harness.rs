//! Runs one test story against both backends.
//!
//! `store_test!(name)` turns `async fn name(test: TestStore)` into `name::sqlite` and
//! `name::postgres`. SQLite gets a fresh file in a temp dir; PostgreSQL gets a fresh schema
//! (selected with `search_path`) in the database at `SWITCHBOARD_TEST_POSTGRES_URL`
//! (default `postgres://postgres@127.0.0.1:5432/test`), dropped afterwards. An unreachable
//! PostgreSQL fails the test: the suite is only green when both backends pass.

use sqlx::Connection;
use sqlx::postgres::{PgConnection, PgPool};
use std::future::Future;
use std::path::{Path, PathBuf};
use switchboard_store::{DatabaseConfig, SecretCipher, Store};

pub const POSTGRES_URL_ENV: &str = "SWITCHBOARD_TEST_POSTGRES_URL";
pub const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A migrated store on a fresh database, plus what a test needs to look under it.
#[derive(Debug)]
pub struct TestStore {
    pub store: Store,
    pub backend: Backend,
    pub config: DatabaseConfig,
    /// The data dir (SQLite file lives here); for PostgreSQL an empty temp dir.
    pub data_dir: PathBuf,
    /// The schema holding this test's tables (PostgreSQL only).
    pub postgres_schema: Option<String>,
    _temp_dir: tempfile::TempDir,
}

impl TestStore {
    /// Opens a second store on the same database with another cipher (e.g. a wrong key).
    pub async fn reopen_with(&self, cipher: SecretCipher) -> Store {
        Store::open(&self.config, &self.data_dir, cipher)
            .await
            .expect("reopen the test database")
    }

    /// The SQLite database file (and its WAL) of this test.
    pub fn sqlite_files(&self) -> Vec<PathBuf> {
        let base = self.data_dir.join(switchboard_store::SQLITE_FILE_NAME);
        ["", "-wal", "-shm"]
            .iter()
            .map(|suffix| PathBuf::from(format!("{}{suffix}", base.display())))
            .filter(|path| path.exists())
            .collect()
    }

    /// A direct pool on this test's PostgreSQL schema, for looking at raw rows.
    pub async fn raw_postgres_pool(&self) -> PgPool {
        let url = self
            .config
            .url
            .as_deref()
            .expect("postgres test store has a URL");
        PgPool::connect(url)
            .await
            .expect("connect to the test schema")
    }
}

pub fn postgres_url() -> String {
    std::env::var(POSTGRES_URL_ENV).unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_owned())
}

fn test_config(url: Option<String>) -> DatabaseConfig {
    DatabaseConfig {
        url,
        // Tests run in parallel; keep each one's share of PostgreSQL's connections small.
        max_connections: 4,
        ..DatabaseConfig::default()
    }
}

async fn open_sqlite() -> TestStore {
    let temp_dir = tempfile::tempdir().expect("temp dir");
    let config = test_config(None);
    let store = Store::open(&config, temp_dir.path(), SecretCipher::generate())
        .await
        .expect("open a SQLite test store");
    TestStore {
        store,
        backend: Backend::Sqlite,
        config,
        data_dir: temp_dir.path().to_owned(),
        postgres_schema: None,
        _temp_dir: temp_dir,
    }
}

async fn admin_connection() -> PgConnection {
    let url = postgres_url();
    PgConnection::connect(&url).await.unwrap_or_else(|error| {
        panic!(
            "PostgreSQL is not reachable at {url} ({error}). The store suite runs every test on \
             SQLite AND PostgreSQL: start PostgreSQL (CI does) or point {POSTGRES_URL_ENV} at one."
        )
    })
}

async fn open_postgres(schema: &str) -> TestStore {
    let mut admin = admin_connection().await;
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA \"{schema}\"")))
        .execute(&mut admin)
        .await
        .expect("create the test schema");
    admin.close().await.ok();
    let base = postgres_url();
    let separator = if base.contains('?') { '&' } else { '?' };
    let config = test_config(Some(format!(
        "{base}{separator}options[search_path]={schema}"
    )));
    let temp_dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&config, temp_dir.path(), SecretCipher::generate())
        .await
        .expect("open a PostgreSQL test store");
    TestStore {
        store,
        backend: Backend::Postgres,
        config,
        data_dir: temp_dir.path().to_owned(),
        postgres_schema: Some(schema.to_owned()),
        _temp_dir: temp_dir,
    }
}

async fn drop_schema(schema: &str) {
    let mut admin = admin_connection().await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"
    )))
    .execute(&mut admin)
    .await
    .expect("drop the test schema");
    admin.close().await.ok();
}

/// Runs `test` on a fresh store of `backend`, cleaning up even when the test panics.
pub async fn run<F, Fut>(backend: Backend, test: F)
where
    F: FnOnce(TestStore) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    match backend {
        Backend::Sqlite => {
            let outcome = tokio::spawn(test(open_sqlite().await)).await;
            if let Err(error) = outcome {
                std::panic::resume_unwind(error.into_panic());
            }
        }
        Backend::Postgres => {
            let schema = format!("store_test_{}", uuid::Uuid::new_v4().simple());
            let test_store = open_postgres(&schema).await;
            let pool_owner = test_store.store.clone();
            let outcome = tokio::spawn(test(test_store)).await;
            pool_owner.close().await;
            drop_schema(&schema).await;
            if let Err(error) = outcome {
                std::panic::resume_unwind(error.into_panic());
            }
        }
    }
}

/// Reads every file in `paths` into one byte buffer.
pub fn read_all(paths: &[impl AsRef<Path>]) -> Vec<u8> {
    paths
        .iter()
        .flat_map(|path| std::fs::read(path).expect("read database file"))
        .collect()
}

/// `store_test!(name)`: runs `async fn name(test: TestStore)` on SQLite and on PostgreSQL.
macro_rules! store_test {
    ($($name:ident),+ $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    $crate::harness::run($crate::harness::Backend::Sqlite, super::$name).await
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    $crate::harness::run($crate::harness::Backend::Postgres, super::$name).await
                }
            }
        )+
    };
}
pub(crate) use store_test;
