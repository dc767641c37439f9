//! The one `reqwest::Client` every HTTP-based transport shares: connection reuse across
//! sessions, `TCP_NODELAY` (small JSON-RPC messages must not wait for Nagle), no ambient proxy
//! (a proxy would resolve names where the URL policy cannot see), the policy resolver, and a
//! redirect policy that checks every hop.

use crate::url_policy::UrlPolicy;
use std::time::Duration;

/// Builds the shared client. Cheap to clone afterwards (reqwest clients are `Arc`s inside).
pub fn build_shared_http_client(policy: &UrlPolicy) -> Result<reqwest::Client, reqwest::Error> {
    let redirect_policy = policy.clone();
    reqwest::Client::builder()
        .dns_resolver(policy.resolver())
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 5 {
                return attempt.error("more than 5 redirects");
            }
            match redirect_policy.check_url(attempt.url(), &["http", "https"]) {
                Ok(()) => attempt.follow(),
                Err(refused) => attempt.error(refused),
            }
        }))
        .tcp_nodelay(true)
        .no_proxy()
        .connect_timeout(Duration::from_secs(10))
        .pool_idle_timeout(Duration::from_secs(90))
        .user_agent(concat!("switchboard/", env!("CARGO_PKG_VERSION")))
        .build()
}
