//! OAuth 2.1 connections to remote MCP servers (issue 11): what the host keeps between requests.
//!
//! - [`credentials`]: the tokens of one connection — a person's (per-user servers) or the
//!   workspace's (shared) — as an opaque JSON payload sealed with the store's cipher, a plain
//!   summary (expiry, scopes, account) for the API, and a refresh lease so two replicas never
//!   refresh one token at the same time.
//! - [`states`]: authorization requests in flight, keyed by the SHA-256 of their `state`,
//!   taken exactly once by the callback.
//! - [`clients`]: clients registered at an authorization server (dynamic registration), per
//!   server and issuer.
//!
//! The store does not interpret payloads (the host puts rmcp's stored credentials or its own
//! flow state there); it only guarantees they are sealed at rest, bound to their row's key
//! (a ciphertext moved to another row does not open), and gone with their server or user.

pub mod clients;
pub mod credentials;
pub mod states;

pub use credentials::{OAuthConnectionSummary, OAuthCredentials, OAuthCredentialsRecord};
pub use states::{NewOAuthState, OAuthStateRecord, OAuthStateTake};

use crate::error::{StoreError, StoreResult};
use crate::store::Store;
use serde_json::Value;

/// Payload values are secrets: `Debug` of the records that carry one prints this instead.
pub(crate) const REDACTED: &str = "[REDACTED]";

impl Store {
    /// Seals a JSON payload for the row whose key is written in `associated_data`.
    pub(crate) fn seal_json(&self, payload: &Value, associated_data: &str) -> StoreResult<Vec<u8>> {
        let plaintext = serde_json::to_vec(payload)
            .map_err(|error| StoreError::Crypto(format!("cannot serialise a payload: {error}")))?;
        self.cipher.encrypt(&plaintext, associated_data.as_bytes())
    }

    /// Opens what [`Store::seal_json`] sealed for the same row.
    pub(crate) fn open_json(&self, sealed: &[u8], associated_data: &str) -> StoreResult<Value> {
        let plaintext = self.cipher.decrypt(sealed, associated_data.as_bytes())?;
        serde_json::from_slice(&plaintext)
            .map_err(|error| StoreError::corrupt(format!("sealed payload: {error}")))
    }
}
