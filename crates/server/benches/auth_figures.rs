//! Figures for the cost of authenticating a request (issue 16: every request now checks the
//! token holder's current role and active flag).
//!
//! `cargo bench -p switchboard-server --bench auth_figures [-- REQUESTS]` starts the real
//! server on 127.0.0.1 over a fresh SQLite store, then times REQUESTS (default 2,000)
//! sequential `GET /api/me` requests with the owner's token on one keep-alive connection, and
//! as many `Store::authenticate` calls on their own (the part of a request the token check
//! is). It prints the median, p90 and p99 of each.

use std::time::{Duration, Instant};
use switchboard_server::{AppState, ServerConfig, app, serve_router};
use switchboard_store::{DatabaseConfig, SecretCipher, Store};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * fraction).round() as usize]
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{what}: n={} median={:?} p90={:?} p99={:?}",
        samples.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.9),
        percentile(&samples, 0.99)
    );
}

#[tokio::main]
async fn main() {
    let requests: usize = std::env::args()
        .skip(1)
        .find_map(|argument| argument.parse().ok())
        .unwrap_or(2_000);
    let data_dir = tempfile::tempdir().expect("temporary directory");
    let store = Store::open(
        &DatabaseConfig::default(),
        data_dir.path(),
        SecretCipher::generate(),
    )
    .await
    .expect("store");
    let owner = store
        .bootstrap_default(None)
        .await
        .expect("bootstrap")
        .expect("an empty store");
    let token = owner.plaintext.expose().to_owned();
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().expect("address"),
        ..ServerConfig::default()
    };
    let listener = TcpListener::bind(config.bind).await.expect("bind");
    let address = listener.local_addr().expect("address");
    let shutdown = CancellationToken::new();
    let router = app(AppState::new(store.clone(), config.clone()));
    let serving = shutdown.clone();
    tokio::spawn(async move {
        serve_router(listener, router, &config, serving, std::future::pending()).await
    });

    let client = reqwest::Client::new();
    let url = format!("http://{address}/api/me");
    let mut http = Vec::with_capacity(requests);
    for round in 0..requests + 100 {
        let started = Instant::now();
        let response = client
            .get(&url)
            .bearer_auth(&token)
            .send()
            .await
            .expect("request");
        assert!(response.status().is_success(), "{}", response.status());
        response.bytes().await.expect("body");
        // The first hundred warm the connection and the store's pool.
        if round >= 100 {
            http.push(started.elapsed());
        }
    }
    report("GET /api/me (authenticated)", http);

    let mut direct = Vec::with_capacity(requests);
    for _ in 0..requests {
        let started = Instant::now();
        let principal = store.authenticate(&token).await.expect("authenticate");
        assert!(principal.is_some());
        direct.push(started.elapsed());
    }
    report("Store::authenticate", direct);
    shutdown.cancel();
}
