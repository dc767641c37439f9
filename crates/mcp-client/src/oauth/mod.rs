//! OAuth 2.1 to remote MCP servers: the store-free protocol side of the MCP authorization spec
//! (2025-03-26 fallbacks, 2025-06-18, 2025-11-25), built on rmcp's `auth` feature.
//!
//! rmcp does discovery (Protected Resource Metadata, then authorization server metadata in the
//! spec's order, the legacy `/authorize` `/token` `/register` fallback), Dynamic Client
//! Registration, PKCE, scope selection, the `iss` check, refresh under a guard and the client
//! credentials grant. What is ours:
//! - [`PolicedOAuthHttp`] — every OAuth request under the outbound URL policy: metadata names
//!   URLs the client then calls, a classic SSRF path.
//! - [`OAuthFlow`] — the façade the host calls, one step per HTTP request of the person
//!   connecting, so nothing lives in memory between steps: what a later step needs is in the
//!   host's [`CredentialStore`] and [`StateStore`] (rmcp's traits, implemented over the
//!   database) and in the [`RegisteredClient`] the host keeps with the connection.
//! - [`OAuthError`] — failures as sentences, never carrying a token or a secret.
//! - `legacy_metadata` — the one 2025-03-26 case rmcp's RFC 8414 issuer check refuses: the
//!   server's origin serving metadata whose issuer is a path of that same origin.
//!
//! rmcp's store traits and stored types are re-exported here on purpose: they are the
//! interface the host implements, the one place where an rmcp type crosses this crate's
//! boundary.

mod error;
mod flow;
mod http;
mod legacy_metadata;
mod revoke;
mod stores;

pub use error::OAuthError;
pub use flow::{
    AuthorizationStart, CallbackParams, GrantInfo, OAuthFlow, PendingAuthorization,
    PreregisteredClient, REFRESH_AHEAD, RegisteredClient, Revocation, STATE_LIFETIME,
    TokenEndpointAuthMethod, challenged_scopes,
};
pub use http::{MAX_OAUTH_BODY_BYTES, OAUTH_REQUEST_TIMEOUT, OAuthHttpError, PolicedOAuthHttp};
pub use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, InMemoryCredentialStore,
    InMemoryStateStore, OAuthHttpRedirectPolicy, StateStore, StoredAuthorizationState,
    StoredCredentials,
};
