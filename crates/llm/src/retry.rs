//! When and how long to wait before retrying a request: exponential backoff, overridden by
//! the upstream's `retry-after-ms` / `Retry-After` headers (seconds or an HTTP date).
//!
//! Retries happen only before any token reached the caller, so a retry can never duplicate
//! text the user already saw.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use crate::config::LlmConfig;

#[derive(Clone, Copy, Debug)]
pub(crate) struct RetryPolicy {
    pub max_retries: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    pub max_retry_after: Duration,
}

/// What to do after a failed attempt.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RetryDecision {
    RetryAfter(Duration),
    GiveUp,
}

impl RetryPolicy {
    pub fn from_config(config: &LlmConfig) -> Self {
        Self {
            max_retries: config.max_retries,
            base_delay: Duration::from_millis(config.retry_base_delay_ms),
            max_delay: Duration::from_millis(config.retry_max_delay_ms),
            max_retry_after: Duration::from_millis(config.max_retry_after_ms),
        }
    }

    /// Backoff before retry number `retries_done + 1`: base × 2^retries_done, capped.
    pub fn backoff(&self, retries_done: u32) -> Duration {
        let factor = 2u32.saturating_pow(retries_done.min(16));
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }

    /// Decision for a retryable failure after `retries_done` retries. `retry_after` is what
    /// the upstream asked for, if anything; asking for more than `max_retry_after` gives up.
    pub fn decide(&self, retries_done: u32, retry_after: Option<Duration>) -> RetryDecision {
        if retries_done >= self.max_retries {
            return RetryDecision::GiveUp;
        }
        match retry_after {
            Some(wait) if wait > self.max_retry_after => RetryDecision::GiveUp,
            Some(wait) => RetryDecision::RetryAfter(wait),
            None => RetryDecision::RetryAfter(self.backoff(retries_done)),
        }
    }
}

/// Statuses worth retrying: rate limiting, timeouts and transient server failures.
pub(crate) fn is_retryable_status(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS
        || status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::CONFLICT
        || status.is_server_error()
}

/// Reads `retry-after-ms` (OpenAI) or `Retry-After` (delay seconds or HTTP date).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(milliseconds) = headers
        .get("retry-after-ms")
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.trim().parse::<f64>().ok())
        .filter(|value| value.is_finite() && *value >= 0.0)
    {
        return Some(Duration::from_secs_f64(milliseconds / 1000.0));
    }
    let text = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = text.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let date = chrono::DateTime::parse_from_rfc2822(text).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
            max_retry_after: Duration::from_secs(30),
        }
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let policy = policy();
        assert_eq!(policy.backoff(0), Duration::from_millis(100));
        assert_eq!(policy.backoff(1), Duration::from_millis(200));
        assert_eq!(policy.backoff(2), Duration::from_millis(350));
        assert_eq!(policy.backoff(40), Duration::from_millis(350));
    }

    #[test]
    fn retry_after_wins_over_backoff_within_limits() {
        let policy = policy();
        assert_eq!(
            policy.decide(0, Some(Duration::from_secs(2))),
            RetryDecision::RetryAfter(Duration::from_secs(2))
        );
        assert_eq!(
            policy.decide(0, Some(Duration::from_secs(31))),
            RetryDecision::GiveUp
        );
        assert_eq!(policy.decide(3, None), RetryDecision::GiveUp);
    }

    #[test]
    fn retry_after_headers_in_all_their_forms() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        let mut dated = HeaderMap::new();
        let in_five_seconds = (chrono::Utc::now() + chrono::Duration::seconds(5))
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string();
        dated.insert(
            "retry-after",
            HeaderValue::from_str(&in_five_seconds).unwrap(),
        );
        let wait = retry_after(&dated).unwrap();
        assert!(
            wait <= Duration::from_secs(5) && wait >= Duration::from_secs(3),
            "{wait:?}"
        );
        dated.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&dated), Some(Duration::ZERO));
        assert!(is_retryable_status(StatusCode::SERVICE_UNAVAILABLE));
        assert!(!is_retryable_status(StatusCode::UNAUTHORIZED));
    }
}
