//! Adapters handing the host's stores (shared `Arc`s, one per connection) to rmcp's
//! `AuthorizationManager`, which takes its stores by value.

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StateStore, StoredAuthorizationState,
    StoredCredentials,
};
use std::sync::Arc;

pub(crate) struct SharedCredentials(pub(crate) Arc<dyn CredentialStore>);

#[async_trait]
impl CredentialStore for SharedCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }

    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.0.on_refresh_token_rejected(credentials).await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        self.0.acquire_refresh_guard().await
    }
}

pub(crate) struct SharedStates(pub(crate) Arc<dyn StateStore>);

#[async_trait]
impl StateStore for SharedStates {
    async fn save(
        &self,
        csrf_token: &str,
        state: StoredAuthorizationState,
    ) -> Result<(), AuthError> {
        self.0.save(csrf_token, state).await
    }

    async fn load(&self, csrf_token: &str) -> Result<Option<StoredAuthorizationState>, AuthError> {
        self.0.load(csrf_token).await
    }

    async fn delete(&self, csrf_token: &str) -> Result<(), AuthError> {
        self.0.delete(csrf_token).await
    }
}
