//! The one `reqwest::Client` every HTTP-based transport shares: connection reuse across
//! sessions, `TCP_NODELAY` (small JSON-RPC messages must not wait for Nagle), no ambient proxy
//! (a proxy would resolve names where the URL policy cannot see), the policy resolver, and a
//! redirect policy that checks every hop.
//!
//! Redirects are followed only within the origin (scheme, host and port) the request was made
//! to: a server's configured headers (API keys under any name) and its bearer token go with
//! every request, and reqwest drops only the standard credential headers on a cross-origin
//! hop. No `Referer` is sent either (it would carry the original URL, query and all).
//!
//! An idle pooled connection is let go after [`POOL_IDLE_TIMEOUT`], before common servers close
//! theirs (Node's and uvicorn's keep-alive: 5 s; ours: the header-read timeout, 10 s). A
//! client that keeps it longer can send a tool call on a connection the server is closing at
//! that moment and get "connection reset" for a request the server never read, which cannot
//! be retried blindly (a `tools/call` is not idempotent). Calls in a steady stream reuse their
//! connection; a call after a pause pays one new connection.

use crate::url_policy::UrlPolicy;
use std::time::Duration;

/// How long an idle pooled connection is kept (Node's own HTTP client keeps 4 s, for the
/// same reason).
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// Builds the shared client. Cheap to clone afterwards (reqwest clients are `Arc`s inside).
pub fn build_shared_http_client(policy: &UrlPolicy) -> Result<reqwest::Client, reqwest::Error> {
    let redirect_policy = policy.clone();
    reqwest::Client::builder()
        .dns_resolver(policy.resolver())
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 5 {
                return attempt.error("more than 5 redirects");
            }
            // A guarded target is reported as such, whatever its origin.
            if let Err(refused) = redirect_policy.check_url(attempt.url(), &["http", "https"]) {
                return attempt.error(refused);
            }
            match attempt.previous().first() {
                Some(first) if first.origin() != attempt.url().origin() => {
                    let refusal = CrossOriginRedirect {
                        to: attempt.url().origin().ascii_serialization(),
                    };
                    attempt.error(refusal)
                }
                _ => attempt.follow(),
            }
        }))
        .referer(false)
        .tcp_nodelay(true)
        .no_proxy()
        .connect_timeout(Duration::from_secs(10))
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .user_agent(concat!("switchboard/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// A redirect to another origin, refused (see the module doc).
#[derive(Debug, thiserror::Error)]
#[error(
    "it redirected to another origin ({to}); cross-origin redirects are not followed, so the \
     server's credentials and headers are never sent elsewhere: register the final URL instead"
)]
pub(crate) struct CrossOriginRedirect {
    to: String,
}

/// The reason to give for an answer with a `Content-Encoding` other than `identity`, if it
/// has one. The shared client decodes no content encoding (reqwest's decompression is off, so
/// a compressed bomb is never inflated) and so sends no `Accept-Encoding`; a server that
/// compresses anyway gets told so, instead of its bytes being refused as "not JSON".
pub(crate) fn compressed_answer(headers: &http::HeaderMap) -> Option<String> {
    let encoding = headers.get(http::header::CONTENT_ENCODING)?;
    let encoding = String::from_utf8_lossy(encoding.as_bytes())
        .trim()
        .to_owned();
    if encoding.is_empty() || encoding.eq_ignore_ascii_case("identity") {
        return None;
    }
    Some(compressed_reason(&encoding))
}

/// The sentence for an answer compressed with `encoding`.
pub(crate) fn compressed_reason(encoding: &str) -> String {
    format!(
        "the server answered with Content-Encoding: {encoding}; compressed answers are not \
         accepted — configure the server to answer uncompressed"
    )
}
