//! What an authorization in flight keeps in the store until its callback (sealed, single use):
//! rmcp's stored authorization state (PKCE verifier, expected issuer, requested scopes) and the
//! client the flow registered or chose, which the code exchange must use.

use serde::{Deserialize, Serialize};
use switchboard_mcp_client::oauth::{OAuthError, RegisteredClient, StoredAuthorizationState};

#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct StatePayload {
    pub authorization: StoredAuthorizationState,
    pub client: RegisteredClient,
}

impl StatePayload {
    pub fn to_json(&self) -> Result<serde_json::Value, OAuthError> {
        serde_json::to_value(self).map_err(|error| OAuthError::Store(error.to_string()))
    }

    pub fn from_json(value: serde_json::Value) -> Result<Self, OAuthError> {
        serde_json::from_value(value).map_err(|error| {
            OAuthError::Store(format!("the saved authorization is unreadable: {error}"))
        })
    }
}
