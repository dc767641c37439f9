//! Authentication (a bearer token, or a browser session cookie from a sign-in with the
//! identity provider, checked the same way on every request) and scope checks. Handlers take
//! [`Authenticated`] (any valid token) and call [`Authenticated::require`], or take [`Scoped<S>`] to state the scope in the
//! signature. A missing or unknown token is 401 with a `WWW-Authenticate` challenge; a valid
//! token without the scope is 403 naming the scope. The token's scopes are bounded by its
//! holder's current role, and a deactivated holder's token is 401 saying so, both read with
//! the token in one query on every request (`store::authentication`).
//!
//! The token is resolved at most once per request (the result is cached in the request's
//! extensions), and only the store ever sees the plaintext.

use crate::error::ApiError;
use crate::oidc::session;
use crate::state::AppState;
use axum::extract::{FromRef, FromRequestParts};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use std::marker::PhantomData;
use switchboard_core::{Principal, Scope};
use switchboard_store::{SessionCheck, TokenCheck};

/// The caller, resolved from `Authorization: Bearer <token>` or, without that header, from the
/// session cookie (which also passes [`session::check_same_origin`]).
#[derive(Clone, Debug)]
pub struct Authenticated(pub Principal);

impl Authenticated {
    /// The principal if it holds `scope` (directly or through `admin`), else 403 naming it.
    pub fn require(&self, scope: Scope) -> Result<&Principal, ApiError> {
        if self.0.allows(scope) {
            Ok(&self.0)
        } else {
            Err(ApiError::MissingScope { missing: scope })
        }
    }

    pub fn principal(&self) -> &Principal {
        &self.0
    }
}

impl<S> FromRequestParts<S> for Authenticated
where
    AppState: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(principal) = parts.extensions.get::<Principal>() {
            return Ok(Authenticated(principal.clone()));
        }
        let state = AppState::from_ref(state);
        if !parts.headers.contains_key(AUTHORIZATION)
            && let Some(secret) = session::session_secret(&parts.headers, &state.config.public_url)
        {
            let principal = session_principal(parts, &state, &secret).await?;
            return Ok(remember(parts, principal));
        }
        let token = bearer_token(parts)?;
        let principal = match state.store.check_token(token).await? {
            TokenCheck::Accepted(principal) => principal,
            TokenCheck::Refused => {
                return Err(ApiError::Unauthorized(
                    "the bearer token is unknown, revoked or expired".into(),
                ));
            }
            TokenCheck::HolderDeactivated { holder_name } => {
                return Err(ApiError::Unauthorized(format!(
                    "the user '{holder_name}' this token acts as is deactivated; \
                     an admin can reactivate them"
                )));
            }
        };
        Ok(remember(parts, principal))
    }
}

/// Caches the resolved caller in the request and names its workspace in the span.
fn remember(parts: &mut Parts, principal: Principal) -> Authenticated {
    tracing::Span::current().record("workspace_id", principal.workspace_id.as_str());
    parts.extensions.insert(principal.clone());
    Authenticated(principal)
}

/// The person a browser session cookie acts as, after the same-origin check (a cookie rides
/// along with other sites' requests; see [`session`]).
async fn session_principal(
    parts: &Parts,
    state: &AppState,
    secret: &str,
) -> Result<Principal, ApiError> {
    session::check_same_origin(parts, &state.config.public_url)?;
    match state.store.check_web_session(secret).await? {
        SessionCheck::Accepted(principal) => Ok(principal),
        SessionCheck::Refused => Err(ApiError::Unauthorized(
            "the session has ended or expired; sign in again".into(),
        )),
        SessionCheck::HolderDeactivated { holder_name } => Err(ApiError::Unauthorized(format!(
            "the user '{holder_name}' is deactivated; an admin can reactivate them"
        ))),
    }
}

/// Reads the token from `Authorization: Bearer <token>` (scheme matched case-insensitively).
fn bearer_token(parts: &Parts) -> Result<&str, ApiError> {
    let header = parts.headers.get(AUTHORIZATION).ok_or_else(|| {
        ApiError::Unauthorized("missing `Authorization: Bearer <token>` header".into())
    })?;
    let value = header
        .to_str()
        .map_err(|_| ApiError::Unauthorized("the Authorization header is not valid text".into()))?;
    let (scheme, token) = value.split_once(' ').ok_or_else(|| {
        ApiError::Unauthorized("the Authorization header must be `Bearer <token>`".into())
    })?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(ApiError::Unauthorized(
            "the Authorization header must be `Bearer <token>`".into(),
        ));
    }
    Ok(token)
}

/// A scope named at the type level, for [`Scoped`].
pub trait RequiredScope: Send + Sync + 'static {
    const SCOPE: Scope;
}

/// Marker types for [`Scoped`], one per [`Scope`].
pub mod scopes {
    use super::RequiredScope;
    use switchboard_core::Scope;

    macro_rules! scope_marker {
        ($($name:ident => $scope:expr),* $(,)?) => {$(
            #[derive(Debug)]
            pub struct $name;
            impl RequiredScope for $name {
                const SCOPE: Scope = $scope;
            }
        )*};
    }

    scope_marker!(
        ChatUse => Scope::ChatUse,
        SchemaRead => Scope::SchemaRead,
        DataRead => Scope::DataRead,
        DataWrite => Scope::DataWrite,
        ServersRead => Scope::ServersRead,
        ServersWrite => Scope::ServersWrite,
        Admin => Scope::Admin,
    );
}

/// An authenticated caller that holds `S::SCOPE`: `Scoped(principal, _): Scoped<scopes::Admin>`.
#[derive(Debug)]
pub struct Scoped<S: RequiredScope>(pub Principal, pub PhantomData<S>);

impl<S, St> FromRequestParts<St> for Scoped<S>
where
    S: RequiredScope,
    AppState: FromRef<St>,
    St: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &St) -> Result<Self, Self::Rejection> {
        let authenticated = Authenticated::from_request_parts(parts, state).await?;
        authenticated.require(S::SCOPE)?;
        Ok(Scoped(authenticated.0, PhantomData))
    }
}
