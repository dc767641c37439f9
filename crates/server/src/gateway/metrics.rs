//! The gateway's Prometheus series (through the `metrics` facade; `/metrics` renders them):
//! `gateway_tool_calls_total{server,tool,outcome}` and
//! `gateway_tool_call_duration_seconds{server,tool}` for every offered call (a name that is
//! not offered is counted once in `gateway_unknown_tool_calls_total`, never as a label: the
//! client chooses it), and `gateway_catalog_builds_total` /
//! `gateway_catalog_invalidations_total` for the offer cache.

use switchboard_mcp_client::ToolResult;
use switchboard_mcp_server::gateway::GatewayError;

pub const TOOL_CALL_DURATION_SECONDS: &str = "gateway_tool_call_duration_seconds";

pub(super) fn catalog_built() {
    metrics::counter!("gateway_catalog_builds_total").increment(1);
}

pub(super) fn catalog_invalidated() {
    metrics::counter!("gateway_catalog_invalidations_total").increment(1);
}

pub(super) fn unknown_tool_called() {
    metrics::counter!("gateway_unknown_tool_calls_total").increment(1);
}

/// One offered call ended: `ok`, `tool_error` (an `isError` result: a refusal, a failure or
/// the tool's own error), `invalid_arguments` or `error` (the gateway failed).
pub(super) fn call_finished(
    server: &str,
    tool: &str,
    result: &Result<ToolResult, GatewayError>,
    duration: std::time::Duration,
) {
    let outcome = match result {
        Ok(result) if result.is_error => "tool_error",
        Ok(_) => "ok",
        Err(GatewayError::InvalidArguments(_)) => "invalid_arguments",
        Err(_) => "error",
    };
    let (server, tool) = (server.to_owned(), tool.to_owned());
    metrics::counter!("gateway_tool_calls_total", "server" => server.clone(), "tool" => tool.clone(), "outcome" => outcome)
        .increment(1);
    metrics::histogram!(TOOL_CALL_DURATION_SECONDS, "server" => server, "tool" => tool)
        .record(duration.as_secs_f64());
}
