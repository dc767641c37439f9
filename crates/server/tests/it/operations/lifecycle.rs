//! Operational endpoints, request ids, metrics and graceful shutdown.

use crate::support::{TestServer, test_config};
use axum::Router;
use axum::routing::get;
use reqwest::StatusCode;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use switchboard_server::{CheckReport, ReadinessCheck};
use tokio::sync::Notify;

#[tokio::test]
async fn healthz_and_readyz_report_up() {
    let server = TestServer::start().await;
    let health = server
        .client
        .get(server.url("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let ready = server
        .client
        .get(server.url("/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    let ready: Value = ready.json().await.unwrap();
    assert_eq!(ready["status"], "UP");
    assert_eq!(ready["checks"]["store"]["status"], "UP");
}

struct AlwaysDown;

#[async_trait::async_trait]
impl ReadinessCheck for AlwaysDown {
    fn name(&self) -> &'static str {
        "mcp_servers"
    }
    async fn check(&self) -> CheckReport {
        CheckReport::down(serde_json::json!({ "error": 2, "total": 2 }))
    }
}

#[tokio::test]
async fn a_registered_check_that_is_down_makes_readyz_503() {
    let server = TestServer::start_with(
        test_config(),
        |router| router,
        |state| state.with_readiness_check(Arc::new(AlwaysDown)),
    )
    .await;
    let ready = server
        .client
        .get(server.url("/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);
    let ready: Value = ready.json().await.unwrap();
    assert_eq!(ready["status"], "DOWN");
    assert_eq!(ready["checks"]["store"]["status"], "UP");
    assert_eq!(ready["checks"]["mcp_servers"]["status"], "DOWN");
}

#[tokio::test]
async fn request_ids_are_generated_or_echoed() {
    let server = TestServer::start().await;
    let generated = server
        .client
        .get(server.url("/healthz"))
        .send()
        .await
        .unwrap();
    let id = generated.headers()["x-request-id"].to_str().unwrap();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    let echoed = server
        .client
        .get(server.url("/api/me"))
        .header("x-request-id", "trace-me-123")
        .send()
        .await
        .unwrap();
    assert_eq!(echoed.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(echoed.headers()["x-request-id"], "trace-me-123");
}

#[tokio::test]
async fn metrics_count_requests_per_route_template() {
    let server = TestServer::start().await;
    for _ in 0..3 {
        server
            .get("/api/me", &server.owner_token)
            .send()
            .await
            .unwrap();
    }
    server
        .client
        .get(server.url("/definitely/unmatched"))
        .send()
        .await
        .unwrap();
    let response = server
        .client
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = response.text().await.unwrap();
    let me_count = text
        .lines()
        .find(|line| {
            line.starts_with("http_requests_total{")
                && line.contains(r#"route="/api/me""#)
                && line.contains(r#"status="200""#)
        })
        .unwrap_or_else(|| panic!("no /api/me counter in:\n{text}"));
    let count: f64 = me_count.rsplit(' ').next().unwrap().parse().unwrap();
    // The recorder is process-wide and other tests also call /api/me.
    assert!(count >= 3.0, "{me_count}");
    assert!(text.contains(r#"route="unmatched""#), "{text}");
    assert!(
        text.contains("http_request_duration_seconds_bucket{"),
        "latency histogram missing:\n{text}"
    );
    assert!(!text.contains("/definitely/unmatched"));
}

/// A route that tells the test when a request has reached it, then runs `work`.
fn signalling_route<F>(
    path: &'static str,
    work: fn() -> F,
) -> (impl FnOnce(Router) -> Router, Arc<Notify>)
where
    F: std::future::Future<Output = &'static str> + Send + 'static,
{
    let entered = Arc::new(Notify::new());
    let signal = entered.clone();
    let extend = move |router: Router| {
        router.route(
            path,
            get(move || {
                signal.notify_one();
                work()
            }),
        )
    };
    (extend, entered)
}

// The two shutdown tests below run on paused tokio time from the moment the request is in its
// handler: the grace period, the handler's own work and the close window are all tokio timers
// (the accept loop uses `tokio::time::Instant`), so the durations are exact and nothing waits
// in real time. Nothing here touches the store after the pause (its pool timeouts would be
// advanced too).

#[tokio::test]
async fn shutdown_lets_an_in_flight_request_finish_and_stops_accepting() {
    let (extend, entered) = signalling_route("/test/slow", || async {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        "finished"
    });
    let mut server = TestServer::start_with(test_config(), extend, |state| state).await;
    let in_flight = {
        let request = server.client.get(server.url("/test/slow"));
        tokio::spawn(async move { request.send().await })
    };
    entered.notified().await;
    tokio::time::pause();
    let started = tokio::time::Instant::now();
    let accept_loop = server.begin_shutdown();
    let response = in_flight
        .await
        .unwrap()
        .expect("in-flight request completed");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.text().await.unwrap(), "finished");
    accept_loop.await.unwrap().unwrap();
    // The handler's 1.5 s began a moment before the pause, in real time.
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(1400) && elapsed < Duration::from_secs(2),
        "the request's own 1.5 s, not the 5 s grace: {elapsed:?}"
    );
    assert!(
        server.shutdown_token.is_cancelled(),
        "background work is told to stop"
    );
    let refused = switchboard_test_support::http_client::http_client()
        .get(server.url("/healthz"))
        .send()
        .await;
    assert!(
        refused.is_err(),
        "new connections must be refused after shutdown"
    );
}

#[tokio::test]
async fn shutdown_gives_up_on_a_stuck_request_after_the_grace_period() {
    let config = switchboard_server::ServerConfig {
        shutdown_grace_secs: 1,
        ..test_config()
    };
    let (extend, entered) = signalling_route("/test/stuck", || async {
        std::future::pending::<()>().await;
        "never"
    });
    let mut server = TestServer::start_with(config, extend, |state| state).await;
    let request = server.client.get(server.url("/test/stuck"));
    let _stuck = tokio::spawn(async move { request.send().await });
    entered.notified().await;
    tokio::time::pause();
    let started = tokio::time::Instant::now();
    server.begin_shutdown().await.unwrap().unwrap();
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_secs(1) && elapsed < Duration::from_millis(1100),
        "shutdown took {elapsed:?}"
    );
}
