//! The public side of Switchboard as an OAuth client of remote MCP servers: what authorization
//! servers and browsers reach without a bearer token, at the root (not under `/api`), so they
//! are outside the API's OpenAPI document like `/healthz`:
//!
//! - `GET /oauth/client-metadata.json` — the Client ID Metadata Document: Switchboard's
//!   `client_id` is this document's own URL (`{server.public_url}/oauth/client-metadata.json`),
//!   so an authorization server that supports such documents needs no registration.
//!
//! Everything here is built from `server.public_url`; nothing here reads the store.

mod metadata;

use crate::state::AppState;
use axum::Router;
use axum::routing::get;

pub use metadata::ClientMetadataDocument;

/// Path of the Client ID Metadata Document (and so of Switchboard's `client_id`).
pub const CLIENT_METADATA_PATH: &str = "/oauth/client-metadata.json";
/// Path of the redirect URI every authorization request names.
pub const CALLBACK_PATH: &str = "/oauth/callback";

/// The unauthenticated OAuth routes, mounted at the root.
pub fn public_router() -> Router<AppState> {
    Router::new().route(CLIENT_METADATA_PATH, get(metadata::client_metadata))
}
