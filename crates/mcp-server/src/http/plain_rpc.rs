//! `POST /mcp/rpc`: plain JSON-RPC 2.0 over HTTP, for the design documents' simple clients
//! (`fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'}, body})`).
//!
//! Unlike `/mcp` (strict Streamable HTTP: the `Accept: application/json, text/event-stream`
//! pair, `initialize` first, `Mcp-Session-Id` afterwards), this path needs only
//! `Content-Type: application/json`: `initialize` is optional, no session is made or needed,
//! and every answer is one `application/json` JSON-RPC message (a notification gets 202).
//!
//! It is the same handler behind the same guard (Host/Origin, bearer token, per-tool scopes,
//! rate limit), run by rmcp's transport in stateless mode; this layer only supplies the
//! `Accept` pair the transport insists on, drops a session header (there are no sessions here),
//! and, when the handler sent something before its answer (the transport then falls back to
//! an SSE stream), answers with the final JSON-RPC message alone. So error codes are the
//! handler's own (-32001 scope, -32002 not found, -32003 rate limit, -32601 unknown method).

use super::guard::SESSION_ID_HEADER;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use futures::future::BoxFuture;
use serde_json::Value;
use std::convert::Infallible;
use std::task::{Context, Poll};
use tower::{Service, ServiceExt};

const BOTH_MEDIA_TYPES: &str = "application/json, text/event-stream";

/// The plain JSON-RPC front of a guarded, stateless MCP transport `S`.
#[derive(Clone, Debug)]
pub struct PlainRpc<S> {
    pub inner: S,
    pub max_response_bytes: usize,
}

impl<S> Service<Request> for PlainRpc<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let inner = self.inner.clone();
        let max_response_bytes = self.max_response_bytes;
        Box::pin(async move { Ok(answer(inner, request, max_response_bytes).await) })
    }
}

async fn answer<S>(inner: S, mut request: Request, max_response_bytes: usize) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    if request.method() != Method::POST {
        return method_not_allowed();
    }
    let headers = request.headers_mut();
    headers.insert(header::ACCEPT, HeaderValue::from_static(BOTH_MEDIA_TYPES));
    headers.remove(&SESSION_ID_HEADER);
    let response = match inner.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    let is_event_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if !is_event_stream {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, max_response_bytes)
        .await
        .unwrap_or_default();
    let Some(message) = final_message(&bytes) else {
        return super::rejection::jsonrpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            Value::Null,
            super::rejection::SERVER_ERROR,
            "the request ended without an answer",
        );
    };
    parts.headers.remove(header::CACHE_CONTROL);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(message))
}

/// The JSON-RPC answer (a message with an `id` and a `result` or `error`) among the `data:`
/// lines of an SSE body; notifications sent before it are left out.
fn final_message(body: &Bytes) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    text.lines()
        .rev()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .find(|data| {
            serde_json::from_str::<Value>(data).is_ok_and(|message| {
                message.get("id").is_some()
                    && (message.get("result").is_some() || message.get("error").is_some())
            })
        })
        .map(str::to_owned)
}

fn method_not_allowed() -> Response {
    let mut response = super::rejection::jsonrpc_error(
        StatusCode::METHOD_NOT_ALLOWED,
        Value::Null,
        super::rejection::INVALID_REQUEST,
        "/mcp/rpc takes JSON-RPC 2.0 requests by POST (Content-Type: application/json)",
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_picked_out_of_an_event_stream() {
        let body = Bytes::from_static(
            b"retry: 3000\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n\
              data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\n\n",
        );
        let message = final_message(&body).unwrap();
        let value: Value = serde_json::from_str(&message).unwrap();
        assert_eq!(value["id"], 7);
        assert_eq!(value["result"]["ok"], true);
    }
}
