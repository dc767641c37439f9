//! Single sign-on with OpenID Connect: people sign in to the web UI with their identity
//! provider instead of pasting a token. The routes are at the root, public (the flow's `state`
//! and the session cookie are the credentials), and in the OpenAPI document under `auth`:
//!
//! - `GET /auth/providers` — what the sign-in page offers;
//! - `GET /auth/oidc/login` — starts a sign-in (303 to the provider; 303 to the sign-in page
//!   with the reason when the provider cannot be reached);
//! - `GET /auth/oidc/callback` (or `oidc.redirect_path`) — finishes it: a session cookie and
//!   303 to the UI, or 303 to the sign-in page with the reason;
//! - `POST /auth/logout` — ends the session (and names the provider's end-session URL);
//! - `POST /auth/oidc/backchannel-logout` — the provider's back-channel logout: a signed
//!   `logout_token` ends every browser session of the person it names ([`backchannel`]).
//!
//! [`flow`] runs the protocol with the `openidconnect` crate, [`provider`] keeps the
//! provider's metadata and keys, [`identity`] reads the claims, [`session`] is the cookie and
//! its cross-site checks, [`audit`] records every sign-in and refusal; the store keeps identities, sign-ins in progress and sessions
//! (`switchboard_store::{oidc, web_sessions}`). Bearer tokens are unchanged.

mod audit;
pub mod backchannel;
pub mod config;
pub mod flow;
pub mod identity;
pub mod provider;
mod routes;
pub mod session;

pub use config::OidcConfig;
pub use flow::OidcService;
/// The callback handler, also served at a configured `redirect_path` ([`crate::app`]).
pub(crate) use routes::oidc_callback;
pub use routes::{LogoutAnswer, OidcProviderView, SignInOptions, router};

/// The single sign-on service for `config`, its HTTP under `policy` (the URL policy of
/// admin-configured URLs), redirected back to `public_url` + `config.redirect_path`.
pub fn service(
    config: OidcConfig,
    public_url: &crate::config::PublicUrl,
    policy: switchboard_mcp_client::UrlPolicy,
    store: switchboard_store::Store,
) -> Result<OidcService, switchboard_mcp_client::oauth::OAuthHttpError> {
    let http = switchboard_mcp_client::oauth::PolicedOAuthHttp::new(policy)?;
    let redirect_uri = public_url.join(&config.redirect_path);
    let provider = provider::Provider::new(std::sync::Arc::new(config), redirect_uri, http);
    Ok(OidcService::new(provider, store))
}
