//! A fresh PostgreSQL schema per test, so tests on one database (the one at
//! `SWITCHBOARD_TEST_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432/test`) never see
//! each other's rows. Made and dropped with `psql`, so the helper needs no async runtime (its
//! `Drop` runs anywhere); one copy for the server's in-process replicas and the binary's.

use std::process::Command;

/// The database the schemas are made in, unless `SWITCHBOARD_TEST_POSTGRES_URL` says otherwise.
pub const DEFAULT_TEST_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A schema of its own, dropped (with everything in it) on drop.
#[derive(Debug)]
pub struct PostgresSchema {
    base: String,
    name: String,
}

impl PostgresSchema {
    pub fn create() -> Self {
        let base = std::env::var("SWITCHBOARD_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| DEFAULT_TEST_POSTGRES_URL.to_owned());
        let name = format!("chat_test_{}", unique_suffix());
        let schema = Self { base, name };
        schema.execute(&format!("CREATE SCHEMA \"{}\"", schema.name));
        schema
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A database URL whose connections use only this schema.
    pub fn url(&self) -> String {
        self.url_with_search_path(&self.name)
    }

    /// A database URL whose connections search `search_path` (which names this schema).
    pub fn url_with_search_path(&self, search_path: &str) -> String {
        let separator = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{separator}options[search_path]={search_path}", self.base)
    }

    /// Runs `sql` with `psql` on the database (panics, with its error, if it fails).
    pub fn execute(&self, sql: &str) -> String {
        let output = Command::new("psql")
            .arg(&self.base)
            .args(["-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .expect("run psql (the tests on PostgreSQL need the psql client)");
        assert!(
            output.status.success(),
            "psql failed on {} ({sql}): {} — start PostgreSQL (CI does) or point \
             SWITCHBOARD_TEST_POSTGRES_URL at one",
            self.base,
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }
}

impl Drop for PostgresSchema {
    fn drop(&mut self) {
        self.execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name));
    }
}

fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!("{:x}_{}", nanos, std::process::id())
}
