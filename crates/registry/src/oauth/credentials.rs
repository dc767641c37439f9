//! rmcp's `CredentialStore` over the store's OAuth credentials for one connection (a person's,
//! or the workspace's shared one), with the refresh guard backed by the store's refresh lease:
//! a refresh waits until no other holder, in this process or another replica, is refreshing
//! the same token, so a rotating refresh token is never spent twice.
//!
//! The payload kept in the store is [`ConnectionPayload`]: rmcp's stored credentials plus the
//! client they were issued to (later refreshes and the revocation need it). The summary
//! columns (expiry, scopes) are derived from it on every save.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use switchboard_core::{ServerId, UserId, WorkspaceId};
use switchboard_mcp_client::oauth::{
    AuthError, CredentialRefreshGuard, CredentialStore, RegisteredClient, StoredCredentials,
};
use switchboard_store::{OAuthCredentials, Store};

/// How long one refresh may hold the lease (a holder that dies loses it after this).
const LEASE_TTL: Duration = Duration::from_secs(30);
/// How long a refresh waits for another holder before giving up.
const LEASE_WAIT: Duration = Duration::from_secs(15);
const LEASE_POLL: Duration = Duration::from_millis(100);

/// What the store keeps for one connection (sealed).
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct ConnectionPayload {
    pub credentials: StoredCredentials,
    pub client: RegisteredClient,
    /// The MCP server URL (the resource) the tokens were issued for: they are sent nowhere
    /// else, so a server re-pointed at another URL needs signing in again.
    #[serde(default)]
    pub resource: Option<String>,
}

/// One connection's key in the store.
#[derive(Clone, Debug)]
pub(crate) struct ConnectionKey {
    pub workspace_id: WorkspaceId,
    pub server_id: ServerId,
    /// `None`: the workspace's shared connection.
    pub user_id: Option<UserId>,
}

/// The credential store of one connection, for one flow.
pub(crate) struct ConnectionCredentials {
    store: Store,
    key: ConnectionKey,
    /// The client the credentials are (or will be) issued to.
    client: RegisteredClient,
    /// Names this process in lease holders.
    instance: String,
    /// The resource the tokens saved through this store are issued for.
    resource: Option<String>,
}

impl ConnectionCredentials {
    pub fn new(store: Store, key: ConnectionKey, client: RegisteredClient, instance: &str) -> Self {
        Self {
            store,
            key,
            client,
            instance: instance.to_owned(),
            resource: None,
        }
    }

    /// Saves name `resource` as the one the tokens are issued for.
    pub fn for_resource(mut self, resource: &url::Url) -> Self {
        self.resource = Some(resource.to_string());
        self
    }

    /// The stored payload, if the connection has one.
    pub async fn payload(&self) -> Result<Option<ConnectionPayload>, AuthError> {
        let record = self
            .store
            .load_oauth_credentials(
                &self.key.workspace_id,
                &self.key.server_id,
                self.key.user_id.as_ref(),
            )
            .await
            .map_err(store_error)?;
        record
            .map(|record| serde_json::from_value(record.credentials.payload))
            .transpose()
            .map_err(|error| {
                AuthError::CredentialStoreError(format!(
                    "stored OAuth credentials are unreadable: {error}"
                ))
            })
    }
}

#[async_trait]
impl CredentialStore for ConnectionCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.payload().await?.map(|payload| payload.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let (expires_at, scopes) = summary(&credentials);
        let payload = serde_json::to_value(ConnectionPayload {
            credentials,
            client: self.client.clone(),
            resource: self.resource.clone(),
        })
        .map_err(|error| AuthError::CredentialStoreError(error.to_string()))?;
        let record = OAuthCredentials {
            payload,
            expires_at,
            scopes,
            account: None,
        };
        self.store
            .save_oauth_credentials(
                &self.key.workspace_id,
                &self.key.server_id,
                self.key.user_id.as_ref(),
                &record,
            )
            .await
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store
            .delete_oauth_credentials(
                &self.key.workspace_id,
                &self.key.server_id,
                self.key.user_id.as_ref(),
            )
            .await
            .map(|_| ())
            .map_err(store_error)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let holder = unique_holder(&self.instance);
        let deadline = tokio::time::Instant::now() + LEASE_WAIT;
        loop {
            let taken = self
                .store
                .try_acquire_oauth_refresh_lease(
                    &self.key.workspace_id,
                    &self.key.server_id,
                    self.key.user_id.as_ref(),
                    &holder,
                    LEASE_TTL,
                )
                .await
                .map_err(store_error)?;
            if taken {
                return Ok(Some(CredentialRefreshGuard::new(LeaseGuard {
                    store: self.store.clone(),
                    key: self.key.clone(),
                    holder,
                })));
            }
            if self.load().await?.is_none() {
                // Nothing stored: nothing to refresh, nothing to coordinate.
                return Ok(None);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(AuthError::CredentialStoreError(
                    "another refresh of this connection's token did not finish in time".into(),
                ));
            }
            tokio::time::sleep(LEASE_POLL).await;
        }
    }
}

/// Releases the lease when rmcp drops the guard (after the refreshed token is saved).
struct LeaseGuard {
    store: Store,
    key: ConnectionKey,
    holder: String,
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        let store = self.store.clone();
        let key = self.key.clone();
        let holder = std::mem::take(&mut self.holder);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let released = store
                    .release_oauth_refresh_lease(
                        &key.workspace_id,
                        &key.server_id,
                        key.user_id.as_ref(),
                        &holder,
                    )
                    .await;
                if let Err(error) = released {
                    tracing::warn!(server_id = %key.server_id, %error, "an OAuth refresh lease was not released (it expires by itself)");
                }
            });
        }
    }
}

/// A lease holder name no other acquisition uses (two refreshes in one process wait for each
/// other too).
fn unique_holder(instance: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{instance}/{}/{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The summary columns of `credentials`: when the access token expires and the scopes granted.
/// Read through serde so that no OAuth library type is named here.
fn summary(credentials: &StoredCredentials) -> (Option<DateTime<Utc>>, Vec<String>) {
    let expires_in = serde_json::to_value(&credentials.token_response)
        .ok()
        .and_then(|token| token.get("expires_in").and_then(serde_json::Value::as_u64));
    let expires_at = match (credentials.token_received_at, expires_in) {
        (Some(received), Some(lifetime)) => i64::try_from(received.saturating_add(lifetime))
            .ok()
            .and_then(|seconds| DateTime::from_timestamp(seconds, 0)),
        _ => None,
    };
    (expires_at, credentials.granted_scopes.clone())
}

fn store_error(error: switchboard_store::StoreError) -> AuthError {
    AuthError::CredentialStoreError(format!("the OAuth credential store failed: {error}"))
}
