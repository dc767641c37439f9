//! The gateway's per-token rate limit (`kg.gateway_rate_limit_per_minute`, with a burst of
//! `kg.gateway_rate_limit_burst`): the token bucket `/mcp` uses ([`RateLimiter`]), its own
//! budget, taken by every request that reaches an upstream — `tools/call`, `resources/read`,
//! `prompts/get`, `completion/complete` — and by `initialize` (the guard, so opening sessions
//! is not a way around it). Lists are answered from the cached offer and are not counted.
//!
//! A request over the budget inside a session gets JSON-RPC `-32003` with
//! `data.retry_after_ms`, the error `/mcp` gives, and not an HTTP 429: Streamable HTTP
//! clients (the TypeScript and Python SDKs, rmcp) turn a non-2xx answer to a POST into a
//! transport error that fails or tears down the connection, while a JSON-RPC error reaches
//! just the one request, which the client (or its model) can retry after the given delay
//! with the session intact. An `initialize` over the budget has no session to keep: it gets
//! HTTP 429 with `Retry-After` (and the same error in its body). Every refusal is counted in
//! `gateway_rate_limited_total{method}`.

use super::GatewayRequest;
use crate::errors;
use crate::rate_limit::RateLimiter;
use rmcp::ErrorData;

/// Takes one request of `method` from the caller's budget, or says when to retry.
pub(super) fn admit(
    limiter: Option<&RateLimiter>,
    request: &GatewayRequest,
    method: &'static str,
) -> Result<(), ErrorData> {
    let Some(limiter) = limiter else {
        return Ok(());
    };
    limiter.check(request.caller.key).map_err(|limited| {
        metrics::counter!("gateway_rate_limited_total", "method" => method).increment(1);
        errors::rate_limited(limited)
    })
}
