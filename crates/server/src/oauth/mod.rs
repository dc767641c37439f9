//! The public side of Switchboard as an OAuth client of remote MCP servers: what authorization
//! servers and browsers reach without a bearer token, at the root (not under `/api`), so they
//! are outside the API's OpenAPI document like `/healthz`:
//!
//! - `GET /oauth/client-metadata.json` — the Client ID Metadata Document: Switchboard's
//!   `client_id` is this document's own URL (`{server.public_url}/oauth/client-metadata.json`),
//!   so an authorization server that supports such documents needs no registration.
//! - `GET /oauth/callback` — the redirect URI: the registry's OAuth service finishes the flow,
//!   and the browser is sent back to the servers page with the outcome.
//!
//! Addresses are built from `server.public_url`; the flow itself is the registry's
//! (`switchboard_registry::oauth`).

mod callback;
mod metadata;
mod starter;

use crate::state::AppState;
use axum::Router;
use axum::routing::get;

pub use metadata::ClientMetadataDocument;
pub use starter::OAuthStarter;

/// Path of the Client ID Metadata Document (and so of Switchboard's `client_id`).
pub const CLIENT_METADATA_PATH: &str = "/oauth/client-metadata.json";
/// Path of the redirect URI every authorization request names.
pub const CALLBACK_PATH: &str = "/oauth/callback";

/// The registry's OAuth settings for a Switchboard reached at `public_url`.
pub fn settings(
    public_url: &crate::config::PublicUrl,
    instance: &str,
) -> switchboard_registry::oauth::OAuthSettings {
    switchboard_registry::oauth::OAuthSettings {
        redirect_uri: public_url.join(CALLBACK_PATH),
        client_metadata_url: public_url.join(CLIENT_METADATA_PATH),
        instance: instance.to_owned(),
    }
}

/// The unauthenticated OAuth routes, mounted at the root.
pub fn public_router() -> Router<AppState> {
    Router::new()
        .route(CLIENT_METADATA_PATH, get(metadata::client_metadata))
        .route(CALLBACK_PATH, get(callback::callback))
}
