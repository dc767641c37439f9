//! Reading an error's source chain (rmcp's wrappers, reqwest, hyper, io, rustls, our own
//! transports) for the one cause that explains it, in words: "connection refused", "HTTP 404
//! Not Found", "the host name could not be resolved". SDK wrappers that hide their cause from
//! `source()` (rmcp's dynamic transport error, its worker's quit reason, its HTTP client error)
//! are opened here, and their own texts — which name Rust types — are never shown.

use super::{AuthChallenge, UpstreamError};
use crate::transport::http_client::compressed_reason;
use crate::url_policy::UrlPolicyError;
use std::error::Error;

type StdError = dyn Error + 'static;
type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;
type WorkerQuit = rmcp::transport::worker::WorkerQuitReason<HttpError>;

/// What a chain of errors comes down to.
#[derive(Debug)]
pub(crate) enum Cause {
    /// Our own error, already precise (policy refusals, our transports' failures).
    Upstream(UpstreamError),
    /// The upstream wants credentials or refused them ("HTTP 401 Unauthorized"), with its
    /// challenge when it sent one.
    Auth(String, Option<AuthChallenge>),
    /// The answer was larger than the cap.
    TooLarge,
    /// Anything else, as a plain reason ("connection refused", "HTTP 502 Bad Gateway").
    Reason(String),
}

/// The next cause, looking inside wrappers that do not expose theirs as `source()`.
fn next_cause(error: &StdError) -> Option<&StdError> {
    if let Some(dynamic) = error.downcast_ref::<rmcp::transport::DynamicTransportError>() {
        return Some(dynamic.error.as_ref());
    }
    if let Some(WorkerQuit::Fatal { error, .. }) = error.downcast_ref::<WorkerQuit>() {
        return Some(error);
    }
    if let Some(HttpError::Client(inner)) = error.downcast_ref::<HttpError>() {
        return Some(inner);
    }
    error.source()
}

/// Finds the most telling cause in `error`'s chain: a typed cause first (our own errors, the
/// HTTP client's, io, TLS), else one recognised by its words, else the innermost cause's text.
pub(crate) fn cause_of(error: &StdError) -> Cause {
    let mut chain = Vec::new();
    let mut current = Some(error);
    while let Some(cause) = current {
        chain.push(cause);
        current = next_cause(cause);
    }
    if let Some(found) = chain.iter().find_map(|cause| telling(*cause)) {
        return found;
    }
    if let Some(found) = chain.iter().find_map(|cause| recognised(*cause)) {
        return found;
    }
    Cause::Reason(fallback_reason(chain.last().copied().unwrap_or(error)))
}

/// Whether `error` says the request never left: its connection could not be opened (refused,
/// the name did not resolve, the TLS handshake failed, the connect timed out). reqwest marks
/// exactly those failures as connect errors; a request that was written and then lost its
/// connection is not one.
pub(crate) fn never_sent(error: &StdError) -> bool {
    let mut current = Some(error);
    while let Some(cause) = current {
        if let Some(reqwest) = cause.downcast_ref::<reqwest::Error>()
            && reqwest.is_connect()
        {
            return true;
        }
        if let Some(UpstreamError::Connect { .. }) = cause.downcast_ref::<UpstreamError>() {
            return true;
        }
        current = next_cause(cause);
    }
    false
}

fn challenge(header: &str, insufficient_scope: bool) -> Option<AuthChallenge> {
    (!header.trim().is_empty()).then(|| AuthChallenge {
        www_authenticate: header.to_owned(),
        insufficient_scope,
    })
}

/// A cause with a precise meaning, if `cause` is one.
fn telling(cause: &StdError) -> Option<Cause> {
    if let Some(policy) = cause.downcast_ref::<UrlPolicyError>() {
        return Some(match policy {
            UrlPolicyError::Unresolved { .. } => Cause::Reason(policy.to_string()),
            refusal => Cause::Upstream(UpstreamError::UrlPolicy(refusal.clone())),
        });
    }
    if let Some(upstream) = cause.downcast_ref::<UpstreamError>() {
        return Some(Cause::Upstream(upstream.clone()));
    }
    if let Some(http) = cause.downcast_ref::<HttpError>() {
        return match http {
            HttpError::AuthRequired(error) => Some(Cause::Auth(
                "HTTP 401 Unauthorized".into(),
                challenge(&error.www_authenticate_header, false),
            )),
            HttpError::InsufficientScope(error) => Some(Cause::Auth(
                "HTTP 403 Forbidden (the credentials lack a required scope)".into(),
                challenge(&error.www_authenticate_header, true),
            )),
            HttpError::ResponseBodyTooLarge { .. } => Some(Cause::TooLarge),
            HttpError::UnexpectedServerResponse(text) => Some(
                compressed_body(text)
                    .map(|encoding| Cause::Reason(compressed_reason(encoding)))
                    .unwrap_or_else(|| http_text_cause(text)),
            ),
            HttpError::UnexpectedContentType(content_type) => Some(Cause::Reason(format!(
                "it answered with content type '{}', not JSON or an event stream",
                content_type.as_deref().unwrap_or("none")
            ))),
            HttpError::SessionExpired => Some(Cause::Reason(
                "it no longer knows the session (HTTP 404)".into(),
            )),
            HttpError::UnexpectedEndOfStream => {
                Some(Cause::Reason("its answer stream ended early".into()))
            }
            HttpError::Deserialize(error) => Some(Cause::Reason(format!(
                "its answer is not valid JSON-RPC: {error}"
            ))),
            _ => None,
        };
    }
    if let Some(status) =
        cause.downcast_ref::<rmcp::transport::streamable_http_client::HttpStatusError>()
    {
        return Some(status_cause(status.status, ""));
    }
    if let Some(io) = cause.downcast_ref::<std::io::Error>() {
        return io_reason(io).map(|reason| Cause::Reason(reason.to_owned()));
    }
    if let Some(tls) = cause.downcast_ref::<rustls::Error>() {
        return Some(Cause::Reason(format!("the TLS handshake failed: {tls}")));
    }
    None
}

/// A cause recognised by its words or flags (for errors without a type of their own).
fn recognised(cause: &StdError) -> Option<Cause> {
    let text = cause.to_string();
    if text.contains("exceeded the maximum size") {
        return Some(Cause::TooLarge);
    }
    if text.contains("failed to lookup address") || text.contains("dns error") {
        return Some(Cause::Reason("the host name could not be resolved".into()));
    }
    if let Some(reqwest) = cause.downcast_ref::<reqwest::Error>()
        && reqwest.is_timeout()
    {
        return Some(Cause::Reason("the request timed out".into()));
    }
    None
}

/// The content encoding of a body rmcp could not parse as JSON, told by its first bytes.
/// rmcp reads a Streamable HTTP answer without showing us its headers, and reports an
/// unparsable body as "could not parse JSON response …: <the body's first bytes, as lossy
/// UTF-8>"; a compressed body (our client never inflates one, see
/// `transport::http_client::compressed_answer`) starts with its format's magic bytes.
fn compressed_body(text: &str) -> Option<&'static str> {
    const MAGIC: [(&str, &str); 4] = [
        // 1f 8b 08: gzip with deflate.
        ("\u{1f}\u{fffd}\u{8}", "gzip"),
        // 28 b5 2f fd: a zstd frame.
        ("(\u{fffd}/\u{fffd}", "zstd"),
        // 78 9c / 78 da / 78 01: a zlib stream (HTTP's `deflate`).
        ("x\u{fffd}", "deflate"),
        ("x\u{1}", "deflate"),
    ];
    let rest = text.strip_prefix("could not parse JSON response")?;
    // "… as ServerJsonRpcMessage: <serde's reason>: <body>"; serde's reason has no ": ".
    let body = rest.splitn(3, ": ").nth(2)?;
    MAGIC
        .iter()
        .find(|(magic, _)| body.starts_with(magic))
        .map(|(_, encoding)| *encoding)
}

/// rmcp's "HTTP 404 Not Found: <body>" for a status it did not expect.
fn http_text_cause(text: &str) -> Cause {
    let Some(rest) = text.strip_prefix("HTTP ") else {
        return Cause::Reason(format!("it answered unexpectedly: {}", short(text)));
    };
    let (status_text, body) = rest.split_once(": ").unwrap_or((rest, ""));
    let status = status_text
        .split_whitespace()
        .next()
        .and_then(|code| code.parse::<u16>().ok())
        .unwrap_or(0);
    let described = match http::StatusCode::from_u16(status) {
        Ok(code) => format!(
            "HTTP {}{}",
            code.as_u16(),
            code.canonical_reason()
                .map(|reason| format!(" {reason}"))
                .unwrap_or_default()
        ),
        Err(_) => format!("HTTP {status_text}"),
    };
    status_cause(status, &described_with_body(&described, body))
}

fn described_with_body(described: &str, body: &str) -> String {
    let body = body.trim();
    if body.is_empty() || body.starts_with('<') || body.contains('\n') {
        return described.to_owned();
    }
    format!("{described} (\"{}\")", short(body))
}

/// A cause for an HTTP status (with `described` as its words when given).
pub(crate) fn status_cause(status: u16, described: &str) -> Cause {
    let described = if described.is_empty() {
        match http::StatusCode::from_u16(status) {
            Ok(code) => format!(
                "HTTP {}{}",
                status,
                code.canonical_reason()
                    .map(|reason| format!(" {reason}"))
                    .unwrap_or_default()
            ),
            Err(_) => format!("HTTP {status}"),
        }
    } else {
        described.to_owned()
    };
    match status {
        401 | 403 => Cause::Auth(described, None),
        _ => Cause::Reason(format!("it answered {described}")),
    }
}

/// Plain words for the network errors people meet.
pub(crate) fn io_reason(error: &std::io::Error) -> Option<&'static str> {
    use std::io::ErrorKind;
    Some(match error.kind() {
        ErrorKind::ConnectionRefused => "connection refused",
        ErrorKind::ConnectionReset => "the connection was reset",
        ErrorKind::ConnectionAborted => "the connection was aborted",
        ErrorKind::TimedOut => "the connection timed out",
        ErrorKind::UnexpectedEof => "the connection closed unexpectedly",
        ErrorKind::BrokenPipe => "the connection was closed",
        ErrorKind::NotConnected => "not connected",
        ErrorKind::AddrNotAvailable => "the address is not available",
        ErrorKind::HostUnreachable => "the host is unreachable",
        ErrorKind::NetworkUnreachable => "the network is unreachable",
        _ => return None,
    })
}

/// The innermost cause's own words, without OS error numbers.
fn fallback_reason(innermost: &StdError) -> String {
    let text = innermost.to_string();
    let text = match text.find(" (os error") {
        Some(position) => text[..position].to_owned(),
        None => text,
    };
    let mut characters = text.chars();
    // "Connection failed" reads "connection failed" mid-sentence; "HTTP 500" stays as it is.
    let acronym = text.chars().nth(1).is_some_and(char::is_uppercase);
    match characters.next() {
        Some(_) if acronym => text,
        Some(first) => first.to_lowercase().chain(characters).collect(),
        None => "an unknown error".to_owned(),
    }
}

/// At most 160 characters of a text meant for a message.
pub(crate) fn short(text: &str) -> String {
    const LIMIT: usize = 160;
    let text = text.trim();
    if text.chars().count() <= LIMIT {
        return text.to_owned();
    }
    let cut: String = text.chars().take(LIMIT).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("connect failed")]
    struct Outer(#[source] UrlPolicyError);

    #[derive(Debug, thiserror::Error)]
    #[error("Transport [some::Type<Generic>] error: {0}")]
    struct Wrapper(#[source] std::io::Error);

    #[test]
    fn finds_policy_errors_inside_wrapped_errors() {
        let inner = UrlPolicyError::Other("'x' is a loopback address".into());
        let Cause::Upstream(found) = cause_of(&Outer(inner)) else {
            panic!("not found")
        };
        assert_eq!(found.code(), "url_policy");
    }

    #[test]
    fn io_errors_become_plain_words_and_wrapper_texts_are_dropped() {
        let error = Wrapper(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        let Cause::Reason(reason) = cause_of(&error) else {
            panic!("no reason")
        };
        assert_eq!(reason, "connection refused");
        let error = Wrapper(std::io::Error::other("Something odd (os error 99)"));
        let Cause::Reason(reason) = cause_of(&error) else {
            panic!("no reason")
        };
        assert_eq!(reason, "something odd");
        let error = Wrapper(std::io::Error::other("HTTP 500"));
        let Cause::Reason(reason) = cause_of(&error) else {
            panic!("no reason")
        };
        assert_eq!(reason, "HTTP 500");
    }

    #[test]
    fn unexpected_statuses_are_named() {
        assert!(matches!(
            http_text_cause("HTTP 401 Unauthorized: no"),
            Cause::Auth(text, _) if text == "HTTP 401 Unauthorized (\"no\")"
        ));
        assert!(matches!(
            http_text_cause("HTTP 404 Not Found: <html>…</html>"),
            Cause::Reason(text) if text == "it answered HTTP 404 Not Found"
        ));
    }
}
