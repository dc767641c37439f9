//! Bearer-token authentication and scope checks. Handlers take [`Authenticated`] (any valid
//! token) and call [`Authenticated::require`], or take [`Scoped<S>`] to state the scope in the
//! signature. A missing or unknown token is 401 with a `WWW-Authenticate` challenge; a valid
//! token without the scope is 403 naming the scope. The token's scopes are bounded by its
//! holder's current role, and a deactivated holder's token is 401 saying so, both read with
//! the token in one query on every request (`store::authentication`).
//!
//! The token is resolved at most once per request (the result is cached in the request's
//! extensions), and only the store ever sees the plaintext.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{FromRef, FromRequestParts};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use std::marker::PhantomData;
use switchboard_core::{Principal, Scope};
use switchboard_store::TokenCheck;

/// The caller, resolved from `Authorization: Bearer <token>`.
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
        let token = bearer_token(parts)?;
        let state = AppState::from_ref(state);
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
        tracing::Span::current().record("workspace_id", principal.workspace_id.as_str());
        parts.extensions.insert(principal.clone());
        Ok(Authenticated(principal))
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
