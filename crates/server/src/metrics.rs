//! Prometheus metrics: installs the process-wide recorder (once) and records one counter and
//! one latency histogram per route. Other crates just call the `metrics` macros
//! (`metrics::counter!("mcp_tool_calls_total", …)`); their series appear on `/metrics` too.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Instant;

pub const HTTP_REQUESTS_TOTAL: &str = "http_requests_total";
pub const HTTP_REQUEST_DURATION_SECONDS: &str = "http_request_duration_seconds";

/// Route label for requests that matched no route, so probes of random paths cannot blow up
/// the number of series.
const UNMATCHED_ROUTE: &str = "unmatched";

const LATENCY_BUCKETS_SECONDS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// The handle to the global Prometheus recorder, installing it on first use. A process can
/// hold only one global recorder, so every `AppState` (tests start many) shares this one.
pub fn prometheus_handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let handle = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Full(HTTP_REQUEST_DURATION_SECONDS.to_owned()),
                    &LATENCY_BUCKETS_SECONDS,
                )
                .expect("bucket list is not empty")
                .set_buckets_for_metric(
                    Matcher::Full(crate::gateway::metrics::TOOL_CALL_DURATION_SECONDS.to_owned()),
                    &LATENCY_BUCKETS_SECONDS,
                )
                .expect("bucket list is not empty")
                .install_recorder()
                .expect("no other metrics recorder is installed in this process");
            metrics::describe_counter!(
                HTTP_REQUESTS_TOTAL,
                "HTTP requests answered, by method, route template and status"
            );
            metrics::describe_histogram!(
                HTTP_REQUEST_DURATION_SECONDS,
                metrics::Unit::Seconds,
                "Time to produce the response head, by method and route template"
            );
            handle
        })
        .clone()
}

/// Middleware: counts the request and observes its latency under the matched route template
/// (`/api/conversations/{id}`, never the raw path).
pub(crate) async fn record_http_metrics(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_owned())
        .unwrap_or_else(|| UNMATCHED_ROUTE.to_owned());
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    metrics::counter!(HTTP_REQUESTS_TOTAL, "method" => method.clone(), "route" => route.clone(), "status" => status)
        .increment(1);
    metrics::histogram!(HTTP_REQUEST_DURATION_SECONDS, "method" => method, "route" => route)
        .record(started.elapsed().as_secs_f64());
    response
}
