//! OAuth connections and per-user credentials (issue 11): upserts and deletes, single-use
//! authorization states, the refresh lease, encryption at rest bound to the row, cascades.

use crate::fixtures::{http_server_with_secrets, workspace_with_owner};
use crate::harness::{Backend, TestStore, read_all, store_test};
use chrono::{Duration as TimeDelta, Utc};
use serde_json::json;
use sqlx::Row;
use std::collections::BTreeMap;
use std::time::Duration;
use switchboard_core::{ServerId, UserId, WorkspaceId};
use switchboard_store::{
    NewOAuthState, OAuthCredentials, OAuthStateTake, Store, StoreError, UserRole,
};

store_test!(
    oauth_credentials_are_saved_per_user_and_shared_and_deleted,
    oauth_states_are_single_use_and_expire,
    the_refresh_lease_has_one_holder_at_a_time,
    oauth_clients_are_kept_per_issuer,
    user_credentials_are_set_cleared_and_listed_by_name,
    secrets_are_sealed_at_rest_and_bound_to_their_row,
    everything_goes_with_its_server_or_user,
);

const TOKEN_CANARY: &str = "at-OAUTHCANARY-91c2e0";
const CLIENT_CANARY: &str = "cs-CLIENTCANARY-5d7a";
const STATE_CANARY: &str = "pkce-STATECANARY-3b8f";
const USER_CANARY: &str = "ghp_USERFIELDCANARY_44e1";
const STATE_KEY: &str = "state-KEYCANARY-0a9d";

struct Setup {
    workspace: WorkspaceId,
    server: ServerId,
    alice: UserId,
    bob: UserId,
}

async fn setup(store: &Store) -> Setup {
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let bob = store
        .create_user(&workspace.id, "bob", UserRole::Member)
        .await
        .unwrap();
    let server = store
        .create_server(
            &workspace.id,
            http_server_with_secrets("remote", "sk-admin", "Bearer admin"),
        )
        .await
        .unwrap();
    Setup {
        workspace: workspace.id,
        server: server.id,
        alice: alice.id,
        bob: bob.id,
    }
}

fn credentials(token: &str) -> OAuthCredentials {
    OAuthCredentials {
        payload: json!({"access_token": token, "refresh_token": format!("rt-{token}")}),
        expires_at: Some(Utc::now() + TimeDelta::hours(1)),
        scopes: vec!["read".into(), "write".into()],
        account: Some("alice@example.com".into()),
    }
}

async fn oauth_credentials_are_saved_per_user_and_shared_and_deleted(test: TestStore) {
    let store = &test.store;
    let s = setup(store).await;
    let (ws, server) = (&s.workspace, &s.server);
    assert!(
        store
            .load_oauth_credentials(ws, server, Some(&s.alice))
            .await
            .unwrap()
            .is_none()
    );
    store
        .save_oauth_credentials(ws, server, Some(&s.alice), &credentials("alice-1"))
        .await
        .unwrap();
    store
        .save_oauth_credentials(ws, server, None, &credentials("shared"))
        .await
        .unwrap();
    // An upsert replaces.
    store
        .save_oauth_credentials(ws, server, Some(&s.alice), &credentials("alice-2"))
        .await
        .unwrap();
    let alice = store
        .load_oauth_credentials(ws, server, Some(&s.alice))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(alice.user_id.as_ref(), Some(&s.alice));
    assert_eq!(alice.credentials.payload["access_token"], "alice-2");
    assert_eq!(alice.credentials.scopes, vec!["read", "write"]);
    assert!(
        !format!("{alice:?}").contains("alice-2"),
        "Debug hides the payload"
    );
    let shared = store
        .load_oauth_credentials(ws, server, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(shared.user_id, None);
    assert_eq!(shared.credentials.payload["access_token"], "shared");
    assert!(
        store
            .load_oauth_credentials(ws, server, Some(&s.bob))
            .await
            .unwrap()
            .is_none()
    );
    let summary = store
        .oauth_connection_summary(ws, server, Some(&s.alice))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(summary.account.as_deref(), Some("alice@example.com"));
    assert_eq!(
        summary.expires_at,
        alice
            .credentials
            .expires_at
            .map(|at| { at.with_timezone(&Utc) })
    );
    assert_eq!(
        store.list_oauth_connected_users(ws, server).await.unwrap(),
        vec![s.alice.clone()]
    );
    assert!(
        store
            .delete_oauth_credentials(ws, server, Some(&s.alice))
            .await
            .unwrap()
    );
    assert!(
        !store
            .delete_oauth_credentials(ws, server, Some(&s.alice))
            .await
            .unwrap()
    );
    assert!(
        store
            .list_oauth_connected_users(ws, server)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .load_oauth_credentials(ws, server, None)
            .await
            .unwrap()
            .is_some()
    );
    // Another workspace's server is missing.
    let (other, _) = workspace_with_owner(store, "other").await;
    let error = store
        .save_oauth_credentials(&other.id, server, None, &credentials("x"))
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error}");
}

fn new_state(s: &Setup, key: &str, expires_in: TimeDelta) -> NewOAuthState {
    NewOAuthState {
        state_key: key.to_owned(),
        server_id: s.server.clone(),
        user_id: s.alice.clone(),
        shared: false,
        payload: json!({"pkce_verifier": STATE_CANARY}),
        expires_at: Utc::now() + expires_in,
    }
}

async fn oauth_states_are_single_use_and_expire(test: TestStore) {
    let store = &test.store;
    let s = setup(store).await;
    store
        .save_oauth_state(
            &s.workspace,
            new_state(&s, STATE_KEY, TimeDelta::minutes(10)),
        )
        .await
        .unwrap();
    let error = store
        .save_oauth_state(
            &s.workspace,
            new_state(&s, STATE_KEY, TimeDelta::minutes(10)),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::UniqueViolation { .. }),
        "{error}"
    );
    // Two callbacks race: exactly one gets the state.
    let (first, second) = tokio::join!(
        store.take_oauth_state(STATE_KEY),
        store.take_oauth_state(STATE_KEY)
    );
    let (first, second) = (first.unwrap(), second.unwrap());
    let valid = [&first, &second]
        .into_iter()
        .filter(|take| matches!(take, OAuthStateTake::Valid(_)))
        .count();
    assert_eq!(valid, 1, "{first:?} {second:?}");
    let taken = match (first, second) {
        (OAuthStateTake::Valid(record), other) | (other, OAuthStateTake::Valid(record)) => {
            assert_eq!(other, OAuthStateTake::Unknown);
            record
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(taken.workspace_id, s.workspace);
    assert_eq!(taken.server_id, s.server);
    assert_eq!(taken.user_id, s.alice);
    assert!(!taken.shared);
    assert_eq!(taken.payload["pkce_verifier"], STATE_CANARY);
    assert_eq!(
        store.take_oauth_state(STATE_KEY).await.unwrap(),
        OAuthStateTake::Unknown
    );
    assert_eq!(
        store.take_oauth_state("never-issued").await.unwrap(),
        OAuthStateTake::Unknown
    );
    // An expired state says so once, then is gone.
    store
        .save_oauth_state(
            &s.workspace,
            new_state(&s, "late", TimeDelta::milliseconds(-1)),
        )
        .await
        .unwrap();
    assert_eq!(
        store.take_oauth_state("late").await.unwrap(),
        OAuthStateTake::Expired
    );
    assert_eq!(
        store.take_oauth_state("late").await.unwrap(),
        OAuthStateTake::Unknown
    );
    // Saving purges expired states.
    store
        .save_oauth_state(
            &s.workspace,
            new_state(&s, "stale", TimeDelta::milliseconds(-1)),
        )
        .await
        .unwrap();
    store
        .save_oauth_state(&s.workspace, new_state(&s, "fresh", TimeDelta::minutes(10)))
        .await
        .unwrap();
    assert_eq!(
        store.take_oauth_state("stale").await.unwrap(),
        OAuthStateTake::Unknown
    );
    assert!(matches!(
        store.take_oauth_state("fresh").await.unwrap(),
        OAuthStateTake::Valid(_)
    ));
}

async fn the_refresh_lease_has_one_holder_at_a_time(test: TestStore) {
    let store = &test.store;
    let s = setup(store).await;
    let (ws, server, user) = (&s.workspace, &s.server, Some(&s.alice));
    let ttl = Duration::from_secs(30);
    // No credentials, nothing to refresh.
    assert!(
        !store
            .try_acquire_oauth_refresh_lease(ws, server, user, "a", ttl)
            .await
            .unwrap()
    );
    store
        .save_oauth_credentials(ws, server, user, &credentials("t"))
        .await
        .unwrap();
    // Two replicas try at once: one wins.
    let (a, b) = tokio::join!(
        store.try_acquire_oauth_refresh_lease(ws, server, user, "replica-a", ttl),
        store.try_acquire_oauth_refresh_lease(ws, server, user, "replica-b", ttl)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert!(a ^ b, "exactly one holder: a={a} b={b}");
    let (winner, loser) = if a {
        ("replica-a", "replica-b")
    } else {
        ("replica-b", "replica-a")
    };
    assert!(
        !store
            .try_acquire_oauth_refresh_lease(ws, server, user, loser, ttl)
            .await
            .unwrap()
    );
    // The holder may extend it; saving rotated tokens keeps it.
    assert!(
        store
            .try_acquire_oauth_refresh_lease(ws, server, user, winner, ttl)
            .await
            .unwrap()
    );
    store
        .save_oauth_credentials(ws, server, user, &credentials("t2"))
        .await
        .unwrap();
    assert!(
        !store
            .try_acquire_oauth_refresh_lease(ws, server, user, loser, ttl)
            .await
            .unwrap()
    );
    // Only the holder releases it.
    assert!(
        !store
            .release_oauth_refresh_lease(ws, server, user, loser)
            .await
            .unwrap()
    );
    assert!(
        store
            .release_oauth_refresh_lease(ws, server, user, winner)
            .await
            .unwrap()
    );
    assert!(
        store
            .try_acquire_oauth_refresh_lease(ws, server, user, loser, Duration::ZERO)
            .await
            .unwrap()
    );
    // A lease whose time ran out (its holder died) is taken over.
    assert!(
        store
            .try_acquire_oauth_refresh_lease(ws, server, user, winner, ttl)
            .await
            .unwrap()
    );
    // Leases are per connection.
    store
        .save_oauth_credentials(ws, server, None, &credentials("s"))
        .await
        .unwrap();
    assert!(
        store
            .try_acquire_oauth_refresh_lease(ws, server, None, loser, ttl)
            .await
            .unwrap()
    );
}

async fn oauth_clients_are_kept_per_issuer(test: TestStore) {
    let store = &test.store;
    let s = setup(store).await;
    let issuer = "https://auth.example.com";
    assert!(
        store
            .load_oauth_client(&s.workspace, &s.server, issuer)
            .await
            .unwrap()
            .is_none()
    );
    let client = json!({"client_id": "c1", "client_secret": CLIENT_CANARY});
    store
        .save_oauth_client(&s.workspace, &s.server, issuer, &client)
        .await
        .unwrap();
    store
        .save_oauth_client(
            &s.workspace,
            &s.server,
            "https://other.example",
            &json!({"client_id": "c2"}),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .load_oauth_client(&s.workspace, &s.server, issuer)
            .await
            .unwrap(),
        Some(client)
    );
    assert!(
        store
            .delete_oauth_client(&s.workspace, &s.server, issuer)
            .await
            .unwrap()
    );
    assert!(
        !store
            .delete_oauth_client(&s.workspace, &s.server, issuer)
            .await
            .unwrap()
    );
    assert!(
        store
            .load_oauth_client(&s.workspace, &s.server, "https://other.example")
            .await
            .unwrap()
            .is_some()
    );
}

fn values(pairs: &[(&str, Option<&str>)]) -> BTreeMap<String, Option<String>> {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), value.map(str::to_owned)))
        .collect()
}

async fn user_credentials_are_set_cleared_and_listed_by_name(test: TestStore) {
    let store = &test.store;
    let s = setup(store).await;
    let (ws, server) = (&s.workspace, &s.server);
    store
        .set_user_credentials(
            ws,
            server,
            &s.alice,
            &values(&[("TOKEN", Some(USER_CANARY)), ("ORG", Some("acme"))]),
        )
        .await
        .unwrap();
    store
        .set_user_credentials(ws, server, &s.bob, &values(&[("TOKEN", Some("bob-token"))]))
        .await
        .unwrap();
    let alice = store.user_credentials(ws, server, &s.alice).await.unwrap();
    assert_eq!(alice["TOKEN"], USER_CANARY);
    assert_eq!(alice["ORG"], "acme");
    assert_eq!(
        store.user_credentials(ws, server, &s.bob).await.unwrap()["TOKEN"],
        "bob-token"
    );
    // Replace one, clear one, leave the rest.
    store
        .set_user_credentials(
            ws,
            server,
            &s.alice,
            &values(&[("TOKEN", Some("new")), ("ORG", None)]),
        )
        .await
        .unwrap();
    assert_eq!(
        store.user_credentials(ws, server, &s.alice).await.unwrap(),
        BTreeMap::from([("TOKEN".to_owned(), "new".to_owned())])
    );
    assert_eq!(
        store
            .user_credential_names(ws, server, &s.alice)
            .await
            .unwrap()
            .into_iter()
            .collect::<Vec<_>>(),
        vec!["TOKEN"]
    );
    assert_eq!(
        store
            .clear_user_credentials(ws, server, &s.alice)
            .await
            .unwrap(),
        1
    );
    assert!(
        store
            .user_credentials(ws, server, &s.alice)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .user_credential_names(ws, server, &s.bob)
            .await
            .unwrap()
            .len(),
        1
    );
    let (other, _) = workspace_with_owner(store, "other").await;
    let error = store
        .set_user_credentials(
            &other.id,
            server,
            &s.alice,
            &values(&[("TOKEN", Some("x"))]),
        )
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error}");
}

async fn secrets_are_sealed_at_rest_and_bound_to_their_row(test: TestStore) {
    let store = &test.store;
    let s = setup(store).await;
    let (ws, server) = (&s.workspace, &s.server);
    store
        .save_oauth_credentials(ws, server, Some(&s.alice), &credentials(TOKEN_CANARY))
        .await
        .unwrap();
    store
        .save_oauth_client(
            ws,
            server,
            "https://auth.example.com",
            &json!({"client_secret": CLIENT_CANARY}),
        )
        .await
        .unwrap();
    store
        .save_oauth_state(ws, new_state(&s, STATE_KEY, TimeDelta::minutes(10)))
        .await
        .unwrap();
    store
        .set_user_credentials(
            ws,
            server,
            &s.alice,
            &values(&[("TOKEN", Some(USER_CANARY))]),
        )
        .await
        .unwrap();
    store
        .set_user_credentials(ws, server, &s.bob, &values(&[("TOKEN", Some("bob-token"))]))
        .await
        .unwrap();
    let raw = raw_database(&test).await;
    assert!(
        contains(&raw, b"alice@example.com"),
        "the raw read sees plain columns"
    );
    for canary in [
        TOKEN_CANARY,
        CLIENT_CANARY,
        STATE_CANARY,
        USER_CANARY,
        STATE_KEY,
    ] {
        assert!(
            !contains(&raw, canary.as_bytes()),
            "{canary} is in the raw database"
        );
    }
    // Alice's sealed value copied onto Bob's row does not open.
    move_alices_value_to_bob(&test, &s).await;
    let error = store
        .user_credentials(ws, server, &s.bob)
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Crypto(_)), "{error}");
}

const TABLES: [&str; 4] = [
    "mcp_oauth_credentials",
    "mcp_oauth_clients",
    "mcp_oauth_states",
    "mcp_user_credentials",
];

async fn raw_database(test: &TestStore) -> Vec<u8> {
    match test.backend {
        Backend::Sqlite => read_all(&test.sqlite_files()),
        Backend::Postgres => {
            let pool = test.raw_postgres_pool().await;
            let schema = test.postgres_schema.as_deref().expect("postgres schema");
            let mut text = String::new();
            for table in TABLES {
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
            text.into_bytes()
        }
    }
}

const MOVE_VALUE: &str = "UPDATE mcp_user_credentials SET value_ciphertext = \
     (SELECT value_ciphertext FROM mcp_user_credentials WHERE user_id = $1) WHERE user_id = $2";

async fn move_alices_value_to_bob(test: &TestStore, s: &Setup) {
    match test.backend {
        Backend::Sqlite => {
            let path = &test.sqlite_files()[0];
            let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
                .await
                .unwrap();
            sqlx::query(MOVE_VALUE)
                .bind(s.alice.as_str())
                .bind(s.bob.as_str())
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
        }
        Backend::Postgres => {
            let pool = test.raw_postgres_pool().await;
            let schema = test.postgres_schema.as_deref().expect("postgres schema");
            let query = MOVE_VALUE.replace(
                "mcp_user_credentials",
                &format!("\"{schema}\".mcp_user_credentials"),
            );
            sqlx::query(sqlx::AssertSqlSafe(query))
                .bind(s.alice.as_str())
                .bind(s.bob.as_str())
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
        }
    }
}

async fn everything_goes_with_its_server_or_user(test: TestStore) {
    let store = &test.store;
    let s = setup(store).await;
    let (ws, server) = (&s.workspace, &s.server);
    store
        .save_oauth_credentials(ws, server, Some(&s.alice), &credentials("a"))
        .await
        .unwrap();
    store
        .save_oauth_credentials(ws, server, None, &credentials("s"))
        .await
        .unwrap();
    store
        .save_oauth_client(ws, server, "https://auth.example.com", &json!({}))
        .await
        .unwrap();
    store
        .save_oauth_state(ws, new_state(&s, "pending", TimeDelta::minutes(10)))
        .await
        .unwrap();
    store
        .set_user_credentials(ws, server, &s.alice, &values(&[("TOKEN", Some("v"))]))
        .await
        .unwrap();
    store.delete_server(ws, server).await.unwrap();
    assert_eq!(
        count_rows(&test).await,
        0,
        "the server's rows are gone with it"
    );
    assert_eq!(
        store.take_oauth_state("pending").await.unwrap(),
        OAuthStateTake::Unknown
    );
}

async fn count_rows(test: &TestStore) -> i64 {
    let mut total = 0;
    for table in TABLES {
        let query = format!("SELECT COUNT(*) FROM {table}");
        total += match test.backend {
            Backend::Sqlite => {
                let path = &test.sqlite_files()[0];
                let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
                    .await
                    .unwrap();
                let count: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(query))
                    .fetch_one(&pool)
                    .await
                    .unwrap();
                pool.close().await;
                count
            }
            Backend::Postgres => {
                let pool = test.raw_postgres_pool().await;
                let count: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(query))
                    .fetch_one(&pool)
                    .await
                    .unwrap();
                pool.close().await;
                count
            }
        };
    }
    total
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}
