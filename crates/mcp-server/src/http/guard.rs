//! The middleware in front of the MCP transport, in order: Host/Origin check (403),
//! authentication (401 / anonymous scopes), session ownership (404 for another caller's
//! session), then for POSTs: refuse JSON-RPC batches, check `Mcp-Method`/`Mcp-Name` against
//! the body for revisions the transport does not check itself, attach the [`Caller`] for the
//! handler, and turn the transport's "cannot deserialize" answer into -32700/-32600. A new
//! session is bound to its creator when `initialize` answers. `initialize` is taken from the
//! caller's rate limit, and a caller's sessions are capped (`session_limits`).

use super::rejection;
use super::session_binding::{BindingSessionManager, SessionBindings, SessionOwner};
use super::session_limits::{SessionLimits, evict_over_the_cap};
use crate::auth::{Authentication, Authenticator, Caller, CallerKey};
use crate::origin_policy::OriginPolicy;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request};
use axum::http::Response as HttpResponse;
use axum::http::{HeaderMap, HeaderName, Method, StatusCode, Uri, header};
use axum::response::Response;
use futures::future::BoxFuture;
use http_body_util::combinators::BoxBody;
use rmcp::transport::streamable_http_server::session::SessionManager;
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::{Service, ServiceExt};

pub const SESSION_ID_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");
/// From this revision on, the transport itself checks `Mcp-Method`/`Mcp-Name`.
const STANDARD_HEADERS_VERSION: &str = "2026-07-28";

/// What the guard needs; shared by all requests.
#[derive(Debug)]
pub struct Guard {
    pub origins: OriginPolicy,
    pub authenticator: Authenticator,
    pub bindings: Arc<SessionBindings>,
    /// To close sessions: evicted past the per-caller cap, or never used after `initialize`.
    pub sessions: Arc<BindingSessionManager>,
    pub limits: SessionLimits,
    pub max_request_body_bytes: usize,
    /// A scope every request must hold (the gateway's `gateway:use`); 403 without it.
    pub required_scope: Option<switchboard_core::Scope>,
}

/// Runs the guard around `inner` (the MCP transport).
async fn guard_request<S>(guard: &Guard, request: Request, inner: S) -> Response
where
    S: Service<Request, Response = HttpResponse<BoxBody<Bytes, Infallible>>, Error = Infallible>,
{
    let caller = match admit_caller(guard, request.uri(), request.headers()).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let session_id = header_text(request.headers(), &SESSION_ID_HEADER).map(str::to_owned);
    if let Some(session_id) = &session_id
        && let Some(refused) = check_session(guard, session_id, caller.key).await
    {
        return refused;
    }
    if request.method() != Method::POST {
        if let Some(session_id) = &session_id {
            guard.bindings.touch(session_id, true);
        }
        return attach_and_run(request, caller, inner).await;
    }
    guard_post(guard, request, caller, session_id, inner).await
}

/// The Host/Origin check, then authentication: the caller, or the refusal to answer with.
/// (Takes the URI and headers, not the request: its body is not `Sync`.)
async fn admit_caller(
    guard: &Guard,
    uri: &Uri,
    headers: &HeaderMap,
) -> Result<Arc<Caller>, Response> {
    let authority = uri.authority().map(|authority| authority.as_str());
    if let Err(rejection) = guard.origins.check(authority, headers) {
        tracing::warn!(
            reason = rejection.message(),
            "refused MCP request (DNS rebinding protection)"
        );
        return Err(rejection::forbidden(rejection.message()));
    }
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(|value| value.as_bytes());
    match guard.authenticator.authenticate(authorization).await {
        Authentication::Accepted(caller) => match guard.required_scope {
            Some(scope) if !caller.principal.allows(scope) => {
                Err(rejection::insufficient_scope(scope))
            }
            _ => Ok(caller),
        },
        Authentication::Missing => Err(rejection::missing_token()),
        Authentication::Invalid => Err(rejection::invalid_token()),
        Authentication::Unavailable(error) => {
            tracing::error!(%error, "token verification unavailable");
            Err(rejection::verifier_unavailable())
        }
    }
}

/// A POST from an admitted caller: the body is read (capped) and checked, the message counted,
/// the transport run, and a session the transport created bound to its caller.
async fn guard_post<S>(
    guard: &Guard,
    request: Request,
    caller: Arc<Caller>,
    session_id: Option<String>,
    inner: S,
) -> Response
where
    S: Service<Request, Response = HttpResponse<BoxBody<Bytes, Infallible>>, Error = Infallible>,
{
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(address)| address.ip());
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, guard.max_request_body_bytes).await {
        Ok(bytes) => bytes,
        Err(_) => return rejection::payload_too_large(guard.max_request_body_bytes),
    };
    if bytes.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'[') {
        return rejection::batch_rejected();
    }
    if let Some(response) = check_routing_headers(&parts.headers, &bytes) {
        return response;
    }
    if let Some(refused) = count_the_message(guard, session_id.as_deref(), &caller, &bytes) {
        return refused;
    }
    let declares_json = declares_json(&parts.headers);
    let request = Request::from_parts(parts, Body::from(bytes.clone()));
    let response = attach_and_run(request, caller.clone(), inner).await;
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE && declares_json {
        return rejection::unreadable_message(&bytes);
    }
    if session_id.is_none()
        && let Some(new_session) = header_text(response.headers(), &SESSION_ID_HEADER)
    {
        let owner = SessionOwner::new(caller.key, peer);
        guard.bindings.bind(new_session, owner);
        evict_over_the_cap(
            &guard.sessions,
            &guard.bindings,
            owner,
            guard.limits.max_sessions_per_caller,
        )
        .await;
    }
    response
}

/// Whether the request says its body is JSON (`Content-Type: application/json`, any params).
fn declares_json(headers: &HeaderMap) -> bool {
    header_text(headers, &header::CONTENT_TYPE).is_some_and(|value| {
        value
            .split(';')
            .next()
            .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
    })
}

/// A presented session must be the caller's, and not one left unused past its time (closed
/// here if the sweeper has not got to it yet).
async fn check_session(guard: &Guard, session_id: &str, caller: CallerKey) -> Option<Response> {
    if guard
        .bindings
        .owner(session_id)
        .is_some_and(|owner| owner != caller)
    {
        return Some(rejection::unknown_session());
    }
    if guard
        .bindings
        .is_expired_unused(session_id, guard.limits.unused_session_timeout)
    {
        let _ = guard.sessions.close_session(&Arc::from(session_id)).await;
        return Some(rejection::unknown_session());
    }
    None
}

/// Takes an `initialize` from the caller's rate-limit budget, and records a message in its
/// session (anything but `notifications/initialized` counts as using it).
fn count_the_message(
    guard: &Guard,
    session_id: Option<&str>,
    caller: &Caller,
    bytes: &Bytes,
) -> Option<Response> {
    let envelope: Option<Envelope<'_>> = serde_json::from_slice(bytes).ok();
    let method = envelope
        .as_ref()
        .and_then(|envelope| envelope.method.as_deref());
    match session_id {
        Some(session_id) => {
            guard
                .bindings
                .touch(session_id, method != Some("notifications/initialized"));
        }
        None if method == Some("initialize") => {
            if let Some(limiter) = &guard.limits.limiter
                && let Err(limited) = limiter.check(caller.key)
            {
                let id = envelope
                    .and_then(|envelope| envelope.id)
                    .unwrap_or(Value::Null);
                return Some(rejection::rate_limited(id, limited));
            }
        }
        None => {}
    }
    None
}

async fn attach_and_run<S>(mut request: Request, caller: Arc<Caller>, inner: S) -> Response
where
    S: Service<Request, Response = HttpResponse<BoxBody<Bytes, Infallible>>, Error = Infallible>,
{
    request.extensions_mut().insert(caller);
    match inner.oneshot(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
}

/// The guard as a tower service wrapping the MCP transport `S`.
#[derive(Clone, Debug)]
pub struct Guarded<S> {
    pub inner: S,
    pub guard: Arc<Guard>,
}

impl<S> Service<Request> for Guarded<S>
where
    S: Service<Request, Response = HttpResponse<BoxBody<Bytes, Infallible>>, Error = Infallible>
        + Clone
        + Send
        + 'static,
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
        let guard = self.guard.clone();
        Box::pin(async move { Ok(guard_request(&guard, request, inner).await) })
    }
}

fn header_text<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(borrow, default)]
    params: Option<RoutingParams<'a>>,
}

#[derive(Deserialize)]
struct RoutingParams<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    uri: Option<Cow<'a, str>>,
}

/// For revisions before 2026-07-28: a supplied `Mcp-Method` or `Mcp-Name` header must agree
/// with the body (proxies route on them). Later revisions are checked by the transport.
fn check_routing_headers(headers: &HeaderMap, body: &Bytes) -> Option<Response> {
    let method_header = headers.get(&METHOD_HEADER);
    let name_header = headers.get(&NAME_HEADER);
    if method_header.is_none() && name_header.is_none() {
        return None;
    }
    let checked_by_transport = header_text(headers, &PROTOCOL_VERSION_HEADER)
        .is_some_and(|version| version >= STANDARD_HEADERS_VERSION);
    if checked_by_transport {
        return None;
    }
    // An unreadable body is the transport's to report (-32700/-32600).
    let envelope: Envelope<'_> = serde_json::from_slice(body).ok()?;
    let id = envelope.id.clone().unwrap_or(Value::Null);
    if let Some(value) = method_header {
        let declared = value.to_str().unwrap_or("\u{fffd}");
        let actual = envelope.method.as_deref().unwrap_or("");
        if declared != actual {
            return Some(rejection::header_mismatch(
                id,
                &format!(
                    "Mcp-Method header `{declared}` does not match the body's method `{actual}`"
                ),
            ));
        }
    }
    if let Some(value) = name_header {
        let declared = value.to_str().unwrap_or("\u{fffd}");
        let params = envelope.params.as_ref();
        let actual = params
            .and_then(|p| p.name.as_deref().or(p.uri.as_deref()))
            .unwrap_or("");
        if declared != actual {
            return Some(rejection::header_mismatch(
                id,
                &format!("Mcp-Name header `{declared}` does not match the body's name `{actual}`"),
            ));
        }
    }
    None
}
