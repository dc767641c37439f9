//! Store figures on this machine: latency of the hot write and read paths on SQLite (WAL,
//! `synchronous=FULL`) and PostgreSQL (`synchronous_commit=on`). Prints a table; no
//! thresholds (targets live here, not in timed unit tests).
//!
//! Run: `cargo bench -p switchboard-store --bench store_figures`
//! (PostgreSQL from `SWITCHBOARD_TEST_POSTGRES_URL`, default the local test database; skipped
//! with a note when unreachable — this is a measurement, not a test).

use std::time::{Duration, Instant};
use switchboard_core::{ChatMessage, ScopeSet};
use switchboard_store::{
    DatabaseConfig, NewConversation, NewMessage, NewToken, SecretCipher, Store, UserRole,
};

const APPENDS: usize = 300;
const AUTHENTICATIONS: usize = 3_000;
const LISTS: usize = 300;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let temp_dir = tempfile::tempdir().expect("temp dir");
    let sqlite = Store::open(
        &DatabaseConfig::default(),
        temp_dir.path(),
        SecretCipher::generate(),
    )
    .await
    .expect("open SQLite");
    measure("sqlite", &sqlite).await;
    sqlite.close().await;

    let url = std::env::var("SWITCHBOARD_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let schema = format!("store_bench_{}", uuid::Uuid::new_v4().simple());
    let admin = match sqlx::PgPool::connect(&url).await {
        Ok(pool) => pool,
        Err(error) => {
            println!("postgres: not measured ({error})");
            return;
        }
    };
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA \"{schema}\"")))
        .execute(&admin)
        .await
        .expect("create schema");
    let separator = if url.contains('?') { '&' } else { '?' };
    let config = DatabaseConfig {
        url: Some(format!("{url}{separator}options[search_path]={schema}")),
        ..DatabaseConfig::default()
    };
    let postgres = Store::open(&config, temp_dir.path(), SecretCipher::generate())
        .await
        .expect("open PostgreSQL");
    measure("postgres", &postgres).await;
    postgres.close().await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA \"{schema}\" CASCADE"
    )))
    .execute(&admin)
    .await
    .expect("drop schema");
}

async fn measure(backend: &str, store: &Store) {
    let workspace = store.create_workspace("bench").await.unwrap();
    let user = store
        .create_user(&workspace.id, "bench", UserRole::Owner)
        .await
        .unwrap();
    let token = store
        .create_token(
            &workspace.id,
            NewToken {
                user_id: user.id.clone(),
                name: "bench".into(),
                scopes: ScopeSet::all(),
                expires_at: None,
            },
        )
        .await
        .unwrap();
    let conversation = store
        .create_conversation(
            &workspace.id,
            NewConversation {
                owner_user_id: user.id.clone(),
                bud_id: None,
                title: "bench".into(),
                mcp_config_overrides: None,
                model_choice: Default::default(),
            },
        )
        .await
        .unwrap();

    let mut appends = Vec::with_capacity(APPENDS);
    for index in 0..APPENDS {
        let started = Instant::now();
        store
            .append_message(
                &workspace.id,
                &conversation.id,
                NewMessage::from_chat(ChatMessage::user(format!("message {index}"))),
            )
            .await
            .unwrap();
        appends.push(started.elapsed());
    }
    report(backend, "append_message (durable commit)", &mut appends);

    let mut authentications = Vec::with_capacity(AUTHENTICATIONS);
    for _ in 0..AUTHENTICATIONS {
        let started = Instant::now();
        let principal = store.authenticate(token.plaintext.expose()).await.unwrap();
        authentications.push(started.elapsed());
        assert!(principal.is_some());
    }
    report(backend, "authenticate (hash lookup)", &mut authentications);

    let mut lists = Vec::with_capacity(LISTS);
    for _ in 0..LISTS {
        let started = Instant::now();
        let messages = store
            .list_messages(&workspace.id, &conversation.id)
            .await
            .unwrap();
        lists.push(started.elapsed());
        assert_eq!(messages.len(), APPENDS);
    }
    report(
        backend,
        &format!("list_messages ({APPENDS} rows)"),
        &mut lists,
    );
}

fn report(backend: &str, operation: &str, samples: &mut [Duration]) {
    samples.sort();
    let percentile = |p: f64| samples[((samples.len() as f64 - 1.0) * p).round() as usize];
    let total: Duration = samples.iter().sum();
    println!(
        "{backend:<9} {operation:<34} n={:<5} p50={:>9.3?} p99={:>9.3?} mean={:>9.3?} ({:.0}/s sequential)",
        samples.len(),
        percentile(0.50),
        percentile(0.99),
        total / samples.len() as u32,
        samples.len() as f64 / total.as_secs_f64(),
    );
}
