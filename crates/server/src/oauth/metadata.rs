//! `GET /oauth/client-metadata.json`: the Client ID Metadata Document (OAuth Client ID
//! Metadata Document draft, as the MCP authorization spec uses it). An authorization server
//! fetches it to learn who Switchboard is and where it may send people back; the document names
//! itself as `client_id`. Public client: PKCE, no secret (`token_endpoint_auth_method: none`).

use super::{CALLBACK_PATH, CLIENT_METADATA_PATH};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// Authorization servers fetch the document on every authorization; an hour keeps them from
/// asking each time while a changed `public_url` still shows the same day.
const CACHE_CONTROL: &str = "public, max-age=3600";

/// The document's fields (RFC 7591 client metadata names).
#[derive(Debug, Serialize, ToSchema)]
pub struct ClientMetadataDocument {
    /// This document's own URL.
    pub client_id: String,
    pub client_name: &'static str,
    /// Switchboard's home page (`server.public_url`).
    pub client_uri: String,
    /// Exactly one: `{server.public_url}/oauth/callback`.
    pub redirect_uris: Vec<String>,
    pub grant_types: [&'static str; 2],
    pub response_types: [&'static str; 1],
    pub token_endpoint_auth_method: &'static str,
}

impl ClientMetadataDocument {
    /// The document for a Switchboard reached at `public_url`.
    pub fn for_public_url(public_url: &crate::config::PublicUrl) -> Self {
        Self {
            client_id: public_url.join(CLIENT_METADATA_PATH),
            client_name: "Switchboard",
            client_uri: public_url.join(""),
            redirect_uris: vec![public_url.join(CALLBACK_PATH)],
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: "none",
        }
    }
}

pub(super) async fn client_metadata(State(state): State<AppState>) -> Response {
    let document = ClientMetadataDocument::for_public_url(&state.config.public_url);
    let mut response = Json(document).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    );
    response
}
