//! The layers every request passes through, outermost first: request id (taken from
//! `x-request-id` or generated, echoed on the response), a tracing span carrying it, per-route
//! metrics, panic recovery, error-shape normalisation (any error response that is not already
//! our JSON shape — axum's 404/405/415/422 text, the body-limit 413 — becomes
//! `{"error":{"code","message"}}`), `X-Content-Type-Options: nosniff` on every answer, the
//! body-read deadline (408, `body_timeout`), the body size limit, and the refusal of URLs carrying an
//! encoded NUL (`%00`): no id, name or filter holds one, and PostgreSQL cannot even take one as
//! a query parameter, so such a request is a 400 here rather than a 500 from the store.

use crate::body_timeout::enforce_body_deadline;
use crate::error::{ApiError, error_body};
use axum::Router;
use axum::body::Body;
use axum::extract::DefaultBodyLimit;
use axum::http::Request;
use axum::http::{HeaderValue, Response, StatusCode, header};
use axum::middleware::{Next, from_fn, map_response};
use http_body_util::Limited;
use std::any::Any;
use std::time::Duration;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{
    MakeRequestUuid, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

/// Longest error text from an inner layer we pass on as the message; longer ones are replaced
/// by the status's reason phrase.
const MAX_PASSED_THROUGH_MESSAGE_BYTES: usize = 1024;

/// Wraps `router` in the common layers. `max_request_body_bytes` bounds every request body,
/// `body_read_timeout` the time it may take to arrive.
pub(crate) fn with_common_layers<S>(
    router: Router<S>,
    max_request_body_bytes: usize,
    body_read_timeout: Duration,
) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    router.layer(
        ServiceBuilder::new()
            .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
            .layer(
                TraceLayer::new_for_http()
                    .make_span_with(make_request_span)
                    .on_request(())
                    .on_response(DefaultOnResponse::new().level(Level::INFO))
                    // 5xx are logged once, by ApiError (or the panic handler), not again here.
                    .on_failure(()),
            )
            .layer(PropagateRequestIdLayer::x_request_id())
            // Browsers must not guess another type for our JSON (or any) answer.
            .layer(SetResponseHeaderLayer::if_not_present(
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ))
            // Outside the panic catcher, so a panic is counted as the 500 it becomes.
            .layer(from_fn(crate::metrics::record_http_metrics))
            .layer(CatchPanicLayer::custom(panic_response))
            .layer(map_response(move |response| {
                normalize_error_response(response, max_request_body_bytes)
            }))
            // Outside the length limit, so the limit's error reaches the extractors unwrapped.
            .layer(from_fn(move |request, next| {
                enforce_body_deadline(request, next, body_read_timeout)
            }))
            .layer(from_fn(move |request, next| {
                limit_request_body(request, next, max_request_body_bytes)
            }))
            .layer(from_fn(refuse_nul_in_url))
            .layer(DefaultBodyLimit::max(max_request_body_bytes)),
    )
}

fn make_request_span<B>(request: &Request<B>) -> tracing::Span {
    let request_id = request
        .extensions()
        .get::<RequestId>()
        .and_then(|id| id.header_value().to_str().ok())
        .unwrap_or("-");
    tracing::info_span!(
        "request",
        request_id,
        method = %request.method(),
        path = %request.uri().path(),
        workspace_id = tracing::field::Empty,
    )
}

/// Refuses a declared `Content-Length` over the limit before reading anything, and caps
/// bodies of unknown length while they stream (every reader of the body — axum extractors,
/// the MCP endpoint — then fails with a length-limit error that becomes 413).
async fn limit_request_body(
    request: Request<Body>,
    next: Next,
    max_request_body_bytes: usize,
) -> Response<Body> {
    let declared_length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared_length.is_some_and(|length| length > max_request_body_bytes as u64) {
        return axum::response::IntoResponse::into_response(ApiError::PayloadTooLarge {
            limit_bytes: max_request_body_bytes,
        });
    }
    let request = request.map(|body| Body::new(Limited::new(body, max_request_body_bytes)));
    next.run(request).await
}

/// Refuses a path or query holding `%00` (see the module doc).
async fn refuse_nul_in_url(request: Request<Body>, next: Next) -> Response<Body> {
    let holds_nul = |text: &str| text.as_bytes().windows(3).any(|w| w == b"%00");
    let uri = request.uri();
    if holds_nul(uri.path()) || uri.query().is_some_and(holds_nul) {
        return axum::response::IntoResponse::into_response(ApiError::BadRequest(
            "the request URL contains an encoded NUL character (%00), which no id, name or filter may hold".to_owned(),
        ));
    }
    next.run(request).await
}

fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response<Body> {
    let detail = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("non-string panic payload");
    tracing::error!(panic = %switchboard_core::log_text(detail), "handler panicked");
    let body = error_body("internal", "internal server error").to_string();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Rewrites non-JSON error responses into the JSON error shape, keeping their status.
async fn normalize_error_response(
    response: Response<Body>,
    max_request_body_bytes: usize,
) -> Response<Body> {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(&response) {
        return response;
    }
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return axum::response::IntoResponse::into_response(ApiError::PayloadTooLarge {
            limit_bytes: max_request_body_bytes,
        });
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_PASSED_THROUGH_MESSAGE_BYTES)
        .await
        .ok()
        .and_then(|bytes| String::from_utf8(bytes.to_vec()).ok())
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty());
    let message = text.unwrap_or_else(|| {
        status
            .canonical_reason()
            .unwrap_or("request failed")
            .to_owned()
    });
    let body = error_body(code_for_status(status), &message).to_string();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(body))
}

fn is_json(response: &Response<Body>) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"))
}

fn code_for_status(status: StatusCode) -> &'static str {
    match status {
        StatusCode::BAD_REQUEST => "bad_request",
        StatusCode::UNAUTHORIZED => "unauthorized",
        StatusCode::FORBIDDEN => "forbidden",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::REQUEST_TIMEOUT => "request_timeout",
        StatusCode::CONFLICT => "conflict",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::UNPROCESSABLE_ENTITY => "invalid_request",
        StatusCode::TOO_MANY_REQUESTS => "too_many_requests",
        StatusCode::SERVICE_UNAVAILABLE => "unavailable",
        StatusCode::GATEWAY_TIMEOUT => "upstream_timeout",
        status if status.is_server_error() => "internal",
        _ => "bad_request",
    }
}
