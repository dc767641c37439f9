//! The HTTP client a test talks to a Switchboard server with.
//!
//! The server closes a keep-alive connection that stays idle for its header-read timeout
//! (10 s by default: hyper's timer also runs between requests). A client that keeps idle
//! connections longer (reqwest's default is 90 s) can send its next request on a connection
//! the server is closing at that very moment, and gets "connection reset" for a request the
//! server never read. A test running longer than 10 s met exactly that, so the suites' clients
//! let idle connections go well before the server does, as a careful client of ours would.

use std::time::Duration;

/// How long an idle pooled connection is kept: under the server's 10 s idle close.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// A client whose pool lets idle connections go before the server closes them.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .build()
        .expect("a plain reqwest client builds")
}
