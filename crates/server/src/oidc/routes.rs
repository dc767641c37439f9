//! The HTTP side of single sign-on (see the module doc of [`super`]). Handlers are thin: the
//! flow is [`super::OidcService`]'s, the cookie [`super::session`]'s.

use super::flow::{CallbackQuery, SignInError};
use super::session;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The public routes, mounted at the root; the callback is also served at
/// `oidc.redirect_path` when that differs (added by [`crate::app`]).
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sign_in_options))
        .routes(routes!(oidc_login))
        .routes(routes!(oidc_callback))
        .routes(routes!(logout))
        .routes(routes!(backchannel_logout))
}

/// `POST /auth/oidc/backchannel-logout` body, form-encoded as the provider sends it.
#[derive(Debug, serde::Deserialize, ToSchema)]
pub struct BackChannelLogoutForm {
    /// The provider's signed logout token (a JWT). Missing or empty is a 400, as Back-Channel
    /// Logout 1.0 answers a request it cannot honour (not the form extractor's 422).
    #[serde(default)]
    pub logout_token: String,
}

/// How people may sign in to the web UI.
#[derive(Debug, Serialize, ToSchema)]
pub struct SignInOptions {
    /// The identity provider, when single sign-on is configured (`[oidc]`); `null` otherwise.
    pub oidc: Option<OidcProviderView>,
    /// API tokens are always accepted.
    pub token: bool,
}

/// The configured identity provider, as the sign-in page shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct OidcProviderView {
    /// "Sign in with {display_name}".
    pub display_name: String,
    /// Where the sign-in button goes.
    pub login_url: String,
}

/// A session ended.
#[derive(Debug, Serialize, ToSchema)]
pub struct LogoutAnswer {
    /// The provider's end-session URL to send the browser to (RP-initiated logout), when the
    /// provider has one and the session came from it.
    pub end_session_url: Option<String>,
}

/// How the web UI offers sign-in: single sign-on (when configured) and API tokens.
#[utoipa::path(
    get,
    path = "/auth/providers",
    tag = "auth",
    responses((status = 200, description = "The sign-in options", body = SignInOptions))
)]
async fn sign_in_options(State(state): State<AppState>) -> Json<SignInOptions> {
    Json(SignInOptions {
        oidc: state.oidc.as_ref().map(|oidc| OidcProviderView {
            display_name: oidc.config().display_name.clone(),
            login_url: "/auth/oidc/login".into(),
        }),
        token: true,
    })
}

/// Starts a single sign-on: 303 to the provider's authorization endpoint (authorization code
/// with PKCE, a fresh `state` and nonce kept server-side for 10 minutes, usable once).
#[utoipa::path(
    get,
    path = "/auth/oidc/login",
    tag = "auth",
    responses(
        (status = 303, description = "To the identity provider; or, when the provider's discovery document or keys cannot be read, to the sign-in page with the reason (`#/signin?sso_error=…`), as this is a browser navigation"),
        (status = 404, description = "Single sign-on is not configured (`[oidc]`)", body = ErrorBody),
    )
)]
async fn oidc_login(State(state): State<AppState>) -> Result<Response, ApiError> {
    let oidc = state.oidc.as_ref().ok_or_else(not_configured)?;
    match oidc.start().await {
        Ok(url) => Ok(see_other(&url, [])),
        Err(error @ SignInError::Provider(_)) => {
            tracing::warn!(code = error.code(), error = %error, "could not start a single sign-on");
            let reason = format!(
                "the identity provider could not be reached ({error}); try again later or sign in with a token"
            );
            Ok(to_sign_in_page(&state.config.public_url, &reason))
        }
        Err(other) => Err(ApiError::internal(other)),
    }
}

/// 303 to the UI's sign-in page, which shows `reason` (a browser navigation gets a page, not JSON).
fn to_sign_in_page(public_url: &crate::config::PublicUrl, reason: &str) -> Response {
    let reason: String = url::form_urlencoded::byte_serialize(reason.as_bytes()).collect();
    see_other(
        &public_url.join(&format!("/#/signin?sso_error={reason}")),
        [],
    )
}

/// Finishes a single sign-on (the redirect URI): the ID token verified (signature via the
/// provider's JWKS, `iss`, `aud`, `exp`, nonce), the person matched by (issuer, subject) or
/// created, a session cookie set, and 303 to the UI. A refusal (unknown or reused `state`, a
/// bad ID token, a disallowed e-mail domain, a deactivated person…) is 303 to the sign-in page
/// with the reason in `#/signin?sso_error=…`, and no cookie.
#[utoipa::path(
    get,
    path = "/auth/oidc/callback",
    tag = "auth",
    params(CallbackQuery),
    responses(
        (status = 303, description = "To the UI, signed in (`Set-Cookie`), or to the sign-in page with the reason"),
        (status = 400, description = "The query string cannot be read (an encoded NUL character, a malformed parameter)", body = ErrorBody),
        (status = 404, description = "Single sign-on is not configured (`[oidc]`)", body = ErrorBody),
    )
)]
pub(crate) async fn oidc_callback(
    State(state): State<AppState>,
    Query(query): Query<CallbackQuery>,
) -> Result<Response, ApiError> {
    let oidc = state.oidc.as_ref().ok_or_else(not_configured)?;
    let public_url = &state.config.public_url;
    match oidc.finish(query).await {
        Ok(signed_in) => {
            tracing::info!(user = %signed_in.user.name, created = signed_in.created, "signed in with single sign-on");
            super::audit::signed_in(&state, &signed_in).await;
            let cookies = session::set_cookies(
                public_url,
                &signed_in.session.secret,
                oidc.config().session_lifetime(),
            );
            Ok(see_other(&public_url.join("/#/chat"), cookies))
        }
        Err(error) => {
            tracing::info!(code = error.code(), error = %switchboard_core::log_text(&error.to_string()), "a single sign-on was refused");
            super::audit::refused(&state, &oidc.config().workspace, &error).await;
            Ok(to_sign_in_page(public_url, &error.to_string()))
        }
    }
}

/// Ends the browser session of the cookie sent (a request with the cookie must pass the same
/// cross-site checks as any other: `X-Switchboard-CSRF` and a same-origin `Origin`) and clears
/// the cookie. Bearer tokens are not affected (revoke them with the tokens API).
#[utoipa::path(
    post,
    path = "/auth/logout",
    tag = "auth",
    responses(
        (status = 200, description = "The session ended (or there was none)", body = LogoutAnswer),
        (status = 403, description = "A cross-site request with the cookie", body = ErrorBody),
    )
)]
async fn logout(State(state): State<AppState>, parts: Parts) -> Result<Response, ApiError> {
    let public_url = &state.config.public_url;
    let mut end_session_url = None;
    if let Some(secret) = session::session_secret(&parts.headers, public_url) {
        session::check_same_origin(&parts, public_url)?;
        let id_token = state.store.end_web_session(&secret).await?;
        if let (Some(oidc), Some(id_token)) = (state.oidc.as_ref(), id_token) {
            end_session_url = oidc
                .end_session_url(Some(&id_token), &public_url.join("/"))
                .await;
        }
    }
    let mut response = Json(LogoutAnswer { end_session_url }).into_response();
    for cookie in session::clear_cookies(public_url) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    Ok(response)
}

/// OpenID Connect Back-Channel Logout 1.0: the provider ends a person's sessions here. The
/// `logout_token` is verified (signature against the provider's JWKS, `iss`, `aud`, `iat`,
/// `exp`, the logout event, a `sub`, no `nonce`) and every browser session of the person linked
/// to (issuer, `sub`) ends; nobody linked is a success too. Register
/// `{public_url}/auth/oidc/backchannel-logout` as the client's back-channel logout URI.
#[utoipa::path(
    post,
    path = "/auth/oidc/backchannel-logout",
    tag = "auth",
    request_body(content = BackChannelLogoutForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "The person's browser sessions ended (or there were none)"),
        (status = 400, description = "No `logout_token`, or one that was refused (the message says why)", body = ErrorBody),
        (status = 404, description = "Single sign-on is not configured (`[oidc]`)", body = ErrorBody),
        (status = 502, description = "The provider's keys could not be read", body = ErrorBody),
    )
)]
async fn backchannel_logout(
    State(state): State<AppState>,
    axum::Form(form): axum::Form<BackChannelLogoutForm>,
) -> Result<Response, ApiError> {
    use super::backchannel::{LogoutTokenError, log_out};
    let oidc = state.oidc.as_ref().ok_or_else(not_configured)?;
    if form.logout_token.is_empty() {
        return Err(ApiError::BadRequest(
            "the request has no `logout_token` (the form field holding the provider's signed logout token)".into(),
        ));
    }
    match log_out(oidc, &form.logout_token, chrono::Utc::now().timestamp()).await {
        Ok(done) => {
            super::audit::logged_out_by_provider(&state, &done).await;
            let mut response = StatusCode::OK.into_response();
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            Ok(response)
        }
        Err(LogoutTokenError::Provider(error)) => Err(ApiError::BadGateway(error.to_string())),
        Err(LogoutTokenError::Store(error)) => Err(error.into()),
        Err(refused) => {
            tracing::info!(error = %refused, "a back-channel logout was refused");
            Err(ApiError::BadRequest(refused.to_string()))
        }
    }
}

fn not_configured() -> ApiError {
    ApiError::NotFound("single sign-on is not configured on this Switchboard ([oidc])".into())
}

/// 303 to `location`, never cached, sending no referrer (the provider's URL carries the state).
fn see_other<const N: usize>(location: &str, cookies: [HeaderValue; N]) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, value);
    }
    for cookie in cookies {
        headers.append(header::SET_COOKIE, cookie);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
