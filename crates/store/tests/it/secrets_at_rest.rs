//! Secrets at rest: a stored API key or header value appears nowhere in the raw database.

use crate::fixtures::{http_server_with_secrets, new_token, workspace_with_owner};
use crate::harness::{Backend, TestStore, read_all, store_test};
use sqlx::Row;

store_test!(stored_secrets_and_token_plaintexts_are_absent_from_the_raw_database);

const API_KEY: &str = "sk-live-RAWGREPCANARY-7f3a9c";
const HEADER_VALUE: &str = "Bearer HEADERCANARY-51be02";
const ENV_VALUE: &str = "ghp_ENVCANARY_0d4e";

async fn stored_secrets_and_token_plaintexts_are_absent_from_the_raw_database(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let mut server = http_server_with_secrets("remote", API_KEY, HEADER_VALUE);
    server
        .secrets
        .env
        .insert("GITHUB_TOKEN".into(), ENV_VALUE.into());
    let server = store.create_server(&workspace.id, server).await.unwrap();
    let token = store
        .create_token(&workspace.id, new_token(&owner, "admin"))
        .await
        .unwrap();
    let token_secret_part = token.plaintext.expose()[12..].to_owned();
    // The secrets really are stored (and readable with the key)…
    let secrets = store
        .server_secrets(&workspace.id, &server.id)
        .await
        .unwrap();
    assert_eq!(secrets.api_key.as_deref(), Some(API_KEY));
    assert_eq!(secrets.env["GITHUB_TOKEN"], ENV_VALUE);

    // …but no byte sequence of them is in the database.
    let canaries = [API_KEY, HEADER_VALUE, ENV_VALUE, token_secret_part.as_str()];
    let raw: Vec<u8> = match test.backend {
        Backend::Sqlite => {
            let files = test.sqlite_files();
            assert!(!files.is_empty(), "the SQLite file exists");
            let bytes = read_all(&files);
            // Guard against a vacuous pass: non-secret values ARE visible in the raw bytes.
            assert!(
                contains(&bytes, b"mcp.example.com"),
                "raw read sees plain columns"
            );
            bytes
        }
        Backend::Postgres => {
            let pool = test.raw_postgres_pool().await;
            let schema = test.postgres_schema.as_deref().expect("postgres schema");
            let mut text = String::new();
            for table in ["mcp_servers", "api_tokens", "users", "workspaces"] {
                let query =
                    format!("SELECT CAST(t AS TEXT) AS row_text FROM \"{schema}\".{table} t");
                for row in sqlx::query(sqlx::AssertSqlSafe(query))
                    .fetch_all(&pool)
                    .await
                    .unwrap()
                {
                    text.push_str(row.get::<&str, _>("row_text"));
                    text.push('\n');
                }
            }
            pool.close().await;
            assert!(
                text.contains("mcp.example.com"),
                "raw read sees plain columns"
            );
            text.into_bytes()
        }
    };
    for canary in canaries {
        assert!(
            !contains(&raw, canary.as_bytes()),
            "secret {canary:?} found in the raw database"
        );
        assert!(
            !contains(&raw, hex_lower(canary).as_bytes()),
            "secret {canary:?} found hex-encoded in the raw database"
        );
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

fn hex_lower(text: &str) -> String {
    text.bytes().map(|byte| format!("{byte:02x}")).collect()
}
