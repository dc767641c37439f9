//! Metric names and the few helpers that record them (through the `metrics` facade; the server
//! installs the Prometheus exporter). Labels are server *names*, never user data; every
//! ephemeral server of a chat request counts under the one label `ephemeral`
//! (`ServerId::metric_label`), so per-request names cannot grow the series forever.

use std::time::Duration;

pub(crate) fn session_started(server: &str, transport: &str) {
    metrics::counter!("mcp_sessions_started_total", "server" => server.to_owned(), "transport" => transport.to_owned()).increment(1);
    metrics::gauge!("mcp_sessions_active", "server" => server.to_owned()).increment(1.0);
}

pub(crate) fn session_start_failed(server: &str, code: &'static str) {
    metrics::counter!("mcp_session_start_failures_total", "server" => server.to_owned(), "code" => code).increment(1);
}

pub(crate) fn session_closed(server: &str, reason: &'static str) {
    metrics::counter!("mcp_sessions_closed_total", "server" => server.to_owned(), "reason" => reason).increment(1);
    metrics::gauge!("mcp_sessions_active", "server" => server.to_owned()).decrement(1.0);
}

pub(crate) fn tool_call_finished(server: &str, outcome: &'static str, elapsed: Duration) {
    metrics::counter!("mcp_tool_calls_total", "server" => server.to_owned(), "outcome" => outcome)
        .increment(1);
    metrics::histogram!("mcp_tool_call_duration_seconds", "server" => server.to_owned())
        .record(elapsed.as_secs_f64());
}
