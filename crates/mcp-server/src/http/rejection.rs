//! HTTP answers the guard gives before (or instead of) the MCP transport: each is a JSON-RPC
//! error object with a fitting HTTP status, so MCP clients can show the message.
//!
//! 401 carries `WWW-Authenticate: Bearer` (with `error="invalid_token"` for a bad token), 403
//! a refused Host/Origin, 400 a batch, a parse error (-32700), an invalid message (-32600) or a
//! header that contradicts the body (-32020), 404 a session that is not the caller's (or was
//! closed: evicted, or never used after `initialize`), 429 an `initialize` over the rate limit.

use axum::body::Body;
use axum::http::{HeaderValue, Response, StatusCode, header};
use serde_json::{Value, json};

pub const PARSE_ERROR: i32 = -32700;
pub const INVALID_REQUEST: i32 = -32600;
pub const SERVER_ERROR: i32 = -32000;
pub const UNAUTHORIZED: i32 = -32001;
pub const HEADER_MISMATCH: i32 = -32020;

const REALM: &str = "switchboard";

pub fn jsonrpc_error(status: StatusCode, id: Value, code: i32, message: &str) -> Response<Body> {
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// No token and no anonymous access.
pub fn missing_token() -> Response<Body> {
    let mut response = jsonrpc_error(
        StatusCode::UNAUTHORIZED,
        Value::Null,
        UNAUTHORIZED,
        "Authentication required: send Authorization: Bearer <token>",
    );
    let challenge = format!("Bearer realm=\"{REALM}\"");
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_str(&challenge).expect("ascii"),
    );
    response
}

/// A malformed header or a token that is unknown, revoked or expired.
pub fn invalid_token() -> Response<Body> {
    let mut response = jsonrpc_error(
        StatusCode::UNAUTHORIZED,
        Value::Null,
        UNAUTHORIZED,
        "The bearer token is invalid, expired or revoked",
    );
    let challenge = format!(
        "Bearer realm=\"{REALM}\", error=\"invalid_token\", error_description=\"The bearer token is invalid, expired or revoked\""
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_str(&challenge).expect("ascii"),
    );
    response
}

/// A valid token without the scope the endpoint requires.
pub fn insufficient_scope(scope: switchboard_core::Scope) -> Response<Body> {
    let mut response = jsonrpc_error(
        StatusCode::FORBIDDEN,
        Value::Null,
        SERVER_ERROR,
        &format!("Forbidden: this token lacks the `{scope}` scope"),
    );
    let challenge =
        format!("Bearer realm=\"{REALM}\", error=\"insufficient_scope\", scope=\"{scope}\"");
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_str(&challenge).expect("ascii"),
    );
    response
}

pub fn verifier_unavailable() -> Response<Body> {
    jsonrpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        Value::Null,
        SERVER_ERROR,
        "Token verification is temporarily unavailable; retry shortly",
    )
}

pub fn forbidden(message: &str) -> Response<Body> {
    jsonrpc_error(
        StatusCode::FORBIDDEN,
        Value::Null,
        SERVER_ERROR,
        &format!("Forbidden: {message}"),
    )
}

pub fn batch_rejected() -> Response<Body> {
    jsonrpc_error(
        StatusCode::BAD_REQUEST,
        Value::Null,
        INVALID_REQUEST,
        "Invalid Request: JSON-RPC batches are not supported; send one message per POST",
    )
}

/// An `initialize` beyond the caller's rate limit: 429 with `Retry-After` and the same -32003
/// error a rate-limited call gets.
pub fn rate_limited(id: Value, limited: crate::rate_limit::RateLimited) -> Response<Body> {
    let error = crate::errors::rate_limited(limited);
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": error });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let retry_after_secs = limited.retry_after.as_secs_f64().ceil().max(1.0) as u64;
    if let Ok(value) = HeaderValue::from_str(&retry_after_secs.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

pub fn unknown_session() -> Response<Body> {
    jsonrpc_error(
        StatusCode::NOT_FOUND,
        Value::Null,
        SERVER_ERROR,
        "Session not found: start a new session with initialize",
    )
}

pub fn header_mismatch(id: Value, message: &str) -> Response<Body> {
    jsonrpc_error(StatusCode::BAD_REQUEST, id, HEADER_MISMATCH, message)
}

pub fn payload_too_large(limit: usize) -> Response<Body> {
    jsonrpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        Value::Null,
        INVALID_REQUEST,
        &format!("Request body exceeds {limit} bytes"),
    )
}

/// The answer for a body the transport could not read as a JSON-RPC message: -32700 when it
/// is not JSON at all, else -32600 (with the request id when one can be found).
pub fn unreadable_message(body: &[u8]) -> Response<Body> {
    match serde_json::from_slice::<Value>(body) {
        Err(error) => jsonrpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            PARSE_ERROR,
            &format!("Parse error: the body is not valid JSON ({error})"),
        ),
        Ok(value) => {
            let id = value
                .get("id")
                .filter(|id| id.is_string() || id.is_number())
                .cloned()
                .unwrap_or(Value::Null);
            jsonrpc_error(
                StatusCode::BAD_REQUEST,
                id,
                INVALID_REQUEST,
                "Invalid Request: the body is not a JSON-RPC 2.0 request, notification or response",
            )
        }
    }
}
