//! Streamable HTTP (protocol 2025-03-26 and later, stateless 2026-07-28 included): rmcp's
//! client transport over the shared `reqwest::Client`, with per-server headers and API key,
//! the message size cap, SSE resumption with `Last-Event-ID`, and transparent
//! re-initialization when a stateful upstream answers `404 Session not found`.

use super::http_measured::MeasuredHttpClient;
use crate::UpstreamError;
use crate::server::RemoteEndpoint;
use crate::url_policy::UrlPolicy;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

pub(crate) fn connect(
    endpoint: &RemoteEndpoint,
    http_client: &MeasuredHttpClient,
    policy: &UrlPolicy,
    max_message_bytes: usize,
    max_concurrent_requests: usize,
) -> Result<StreamableHttpClientTransport<MeasuredHttpClient>, UpstreamError> {
    policy.check_url(&endpoint.url, &["http", "https"])?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(endpoint.url.as_str())
        .custom_headers(header_map(&endpoint.headers)?)
        .max_sse_event_size(max_message_bytes)
        .max_concurrent_requests(max_concurrent_requests)
        .reinit_on_expired_session(true);
    if let Some(api_key) = &endpoint.api_key {
        config = config.auth_header(api_key.clone());
    }
    config.retry_config = Arc::new(reconnect_policy());
    Ok(StreamableHttpClientTransport::with_client(
        http_client.clone(),
        config,
    ))
}

/// How a lost event stream (the session's standalone GET stream, a call's response stream) is
/// reconnected: after 0.5 s, doubling up to 30 s, for as long as the session lives. A stream
/// that gave up would leave a session whose server restarted unnoticed until its next request
/// (the reconnection is what meets the 404 for the forgotten session, which ends its resource
/// watches so they are renewed); a call's own stream is bounded by the call's timeout anyway,
/// and an idle session is closed.
fn reconnect_policy() -> ExponentialBackoff {
    let mut reconnect = ExponentialBackoff::default();
    reconnect.max_times = None;
    reconnect.base_duration = Duration::from_millis(500);
    reconnect.max_delay = Some(Duration::from_secs(30));
    reconnect
}

/// Converts configured headers (validated at registration) into typed headers.
pub(crate) fn header_map(
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<HashMap<http::HeaderName, http::HeaderValue>, UpstreamError> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = http::HeaderName::try_from(name.as_str()).map_err(|_| {
                crate::server::ServerConfigError::new(
                    "headers",
                    format!("'{name}' is not a valid header name"),
                )
            })?;
            let mut value = http::HeaderValue::try_from(value.as_str()).map_err(|_| {
                crate::server::ServerConfigError::new(
                    "headers",
                    format!("the value of '{name}' is not a valid header value"),
                )
            })?;
            value.set_sensitive(true);
            Ok((name, value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::transport::common::client_side_sse::SseRetryPolicy;

    #[test]
    fn a_lost_stream_is_reconnected_for_as_long_as_the_server_stays_away() {
        let policy = reconnect_policy();
        assert_eq!(policy.retry(0), Some(Duration::from_millis(500)));
        assert_eq!(policy.retry(3), Some(Duration::from_secs(4)));
        // Ten minutes down and more: still trying, every 30 s.
        for attempt in [8, 30, 1_000] {
            assert_eq!(policy.retry(attempt), Some(Duration::from_secs(30)));
        }
    }
}
