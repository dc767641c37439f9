//! The browser session a sign-in leaves: an HttpOnly, SameSite=Lax cookie (Secure, and named
//! with the `__Host-` prefix, when `server.public_url` is https) whose value only the browser
//! holds; the store keeps its SHA-256 (`switchboard_store::web_sessions`).
//!
//! A cookie rides along with requests other sites make, so a request authenticated by it must
//! prove it comes from our own pages ([`check_same_origin`]): an `Origin` header, when sent,
//! must be this Switchboard's; `Sec-Fetch-Site: cross-site`/`same-site` is refused; and every
//! state-changing request must carry [`CSRF_HEADER`], which a cross-site form cannot send and a
//! cross-site `fetch` cannot send without a CORS preflight we never grant. Bearer tokens are
//! not ambient, so none of this applies to them.

use crate::config::PublicUrl;
use crate::error::ApiError;
use axum::http::header::{COOKIE, HOST, ORIGIN};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method};
use cookie::{Cookie, SameSite};
use std::time::Duration;

/// The header the web UI sends with every request (any non-empty value).
pub const CSRF_HEADER: &str = "x-switchboard-csrf";
/// A cookie the page's script can read, set and cleared with the session: it says "a session
/// cookie was set" (no secret), so the UI asks `/api/me` with the cookie only then.
pub const HINT_COOKIE: &str = "sb_signed_in";

/// The session cookie's name for a Switchboard reached at `public_url`.
pub fn cookie_name(public_url: &PublicUrl) -> &'static str {
    if is_https(public_url) {
        "__Host-sb_session"
    } else {
        "sb_session"
    }
}

fn is_https(public_url: &PublicUrl) -> bool {
    public_url.as_url().scheme() == "https"
}

/// The two `Set-Cookie` values of a new session lasting `lifetime`: the session cookie, then
/// the [`HINT_COOKIE`].
pub fn set_cookies(public_url: &PublicUrl, secret: &str, lifetime: Duration) -> [HeaderValue; 2] {
    let seconds = i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX);
    let max_age = cookie::time::Duration::seconds(seconds);
    [
        cookie_header(public_url, cookie_name(public_url), secret, true, max_age),
        cookie_header(public_url, HINT_COOKIE, "1", false, max_age),
    ]
}

/// The `Set-Cookie` values that remove both cookies.
pub fn clear_cookies(public_url: &PublicUrl) -> [HeaderValue; 2] {
    let gone = cookie::time::Duration::ZERO;
    [
        cookie_header(public_url, cookie_name(public_url), "", true, gone),
        cookie_header(public_url, HINT_COOKIE, "", false, gone),
    ]
}

fn cookie_header(
    public_url: &PublicUrl,
    name: &'static str,
    value: &str,
    http_only: bool,
    max_age: cookie::time::Duration,
) -> HeaderValue {
    let cookie = Cookie::build((name, value))
        .http_only(http_only)
        .secure(is_https(public_url))
        .same_site(SameSite::Lax)
        .path("/")
        .max_age(max_age)
        .build();
    HeaderValue::from_str(&cookie.to_string()).expect("a cookie of ours is a valid header")
}

/// The session cookie's value in `headers`, if one was sent.
pub fn session_secret(headers: &HeaderMap, public_url: &PublicUrl) -> Option<String> {
    let name = cookie_name(public_url);
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|cookie| cookie.name() == name && !cookie.value().is_empty())
        .map(|cookie| cookie.value().to_owned())
}

/// Refuses a cookie-authenticated request that may come from another site (see the module
/// doc): 403 with the reason.
pub fn check_same_origin(parts: &Parts, public_url: &PublicUrl) -> Result<(), ApiError> {
    let headers = &parts.headers;
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok())
        && matches!(site, "cross-site" | "same-site")
    {
        return Err(cross_site("the browser says it comes from another site"));
    }
    if let Some(origin) = headers.get(ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if !is_our_origin(origin, headers, public_url) {
            return Err(cross_site("its Origin is not this Switchboard's"));
        }
    }
    let safe = matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS);
    let marked = headers
        .get(CSRF_HEADER)
        .is_some_and(|value| !value.is_empty());
    if !safe && !marked {
        return Err(cross_site(
            "a change made with the session cookie must carry the `X-Switchboard-CSRF` header",
        ));
    }
    Ok(())
}

/// `origin` is `server.public_url`'s origin, or the origin of the `Host` the request was sent to.
fn is_our_origin(origin: &str, headers: &HeaderMap, public_url: &PublicUrl) -> bool {
    if origin == public_url.as_url().origin().ascii_serialization() {
        return true;
    }
    let Some(host) = headers.get(HOST).and_then(|value| value.to_str().ok()) else {
        return false;
    };
    origin
        .split_once("://")
        .is_some_and(|(scheme, rest)| matches!(scheme, "http" | "https") && rest == host)
}

fn cross_site(reason: &str) -> ApiError {
    ApiError::Forbidden(format!(
        "refused a request signed in with the session cookie: {reason}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn parts(method: Method, headers: &[(&str, &str)]) -> Parts {
        let mut request = Request::builder().method(method).uri("/api/me");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    #[test]
    fn a_cross_site_or_unmarked_change_is_refused() {
        let public = PublicUrl::parse("http://127.0.0.1:8080").unwrap();
        let ok = [
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:8080"),
            (CSRF_HEADER, "1"),
        ];
        assert!(check_same_origin(&parts(Method::POST, &ok), &public).is_ok());
        let evil = [
            ("host", "127.0.0.1:8080"),
            ("origin", "https://evil.example"),
            (CSRF_HEADER, "1"),
        ];
        assert!(check_same_origin(&parts(Method::POST, &evil), &public).is_err());
        let unmarked = [
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:8080"),
        ];
        assert!(check_same_origin(&parts(Method::POST, &unmarked), &public).is_err());
        assert!(check_same_origin(&parts(Method::GET, &[]), &public).is_ok());
        let fetched = [("sec-fetch-site", "cross-site")];
        assert!(check_same_origin(&parts(Method::GET, &fetched), &public).is_err());
    }

    #[test]
    fn the_cookie_is_host_only_http_only_lax_and_secure_over_https() {
        let https = PublicUrl::parse("https://sb.example.com").unwrap();
        let [value, hint] = set_cookies(&https, "s3cret", Duration::from_secs(60));
        let text = value.to_str().unwrap();
        assert!(!hint.to_str().unwrap().contains("HttpOnly"));
        assert!(!hint.to_str().unwrap().contains("s3cret"));
        assert!(text.starts_with("__Host-sb_session=s3cret"), "{text}");
        for part in ["HttpOnly", "Secure", "SameSite=Lax", "Path=/", "Max-Age=60"] {
            assert!(text.contains(part), "{text} lacks {part}");
        }
        let http = PublicUrl::parse("http://127.0.0.1:8080").unwrap();
        let [plain, _] = set_cookies(&http, "s", Duration::from_secs(1));
        assert!(!plain.to_str().unwrap().contains("Secure"));
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, HeaderValue::from_static("a=b; sb_session=xyz"));
        assert_eq!(session_secret(&headers, &http).as_deref(), Some("xyz"));
    }
}
