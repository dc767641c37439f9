//! `RegistryError`: what the server registry can fail with — the store, the upstream, or the
//! request itself — kept apart so the HTTP layer can answer 404/409/422/502 precisely.

use switchboard_mcp_client::UpstreamError;
use switchboard_mcp_client::server::ServerConfigError;
use switchboard_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
    /// A stored configuration this crate cannot use (or a request naming an invalid value).
    #[error("invalid server configuration: {0}")]
    Config(#[from] ServerConfigError),
    /// The server is switched off (`is_active: false`).
    #[error("the server '{0}' is not active")]
    Inactive(String),
    /// The server takes per-user values the caller has not set (code
    /// [`crate::NEEDS_USER_CREDENTIALS`]).
    #[error("the server '{server}' needs your {}: set it on the servers page", titles.join(", "))]
    NeedsUserCredentials { server: String, titles: Vec<String> },
    /// The server uses OAuth and the caller (or, for a shared connection, the workspace) has
    /// no usable connection to it (code [`crate::NEEDS_AUTH`]).
    #[error("the server '{server}' needs you to sign in: connect your account to use its tools")]
    NeedsAuth { server: String },
    /// The OAuth connection could not be read or refreshed.
    #[error(transparent)]
    OAuth(#[from] crate::oauth::OAuthServiceError),
}
