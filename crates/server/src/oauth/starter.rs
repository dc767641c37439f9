//! The chat engine's [`AuthorizationStarter`] over the registry's OAuth service: an
//! `auth_required` event carries an authorization URL started for the person who asked.
//! A flow that cannot start (a shared server and a caller who is not an admin, an
//! authorization server that cannot be discovered) leaves the URL out; the UI then asks the
//! authorize API, which says why.

use async_trait::async_trait;
use switchboard_chat::AuthorizationStarter;
use switchboard_core::{Principal, ServerId};
use switchboard_registry::oauth::OAuthService;

#[derive(Clone, Debug)]
pub struct OAuthStarter(pub OAuthService);

#[async_trait]
impl AuthorizationStarter for OAuthStarter {
    async fn authorization_url(
        &self,
        principal: &Principal,
        server_id: &ServerId,
    ) -> Option<String> {
        match self.0.authorize(principal, server_id).await {
            Ok(url) => Some(url),
            Err(error) => {
                tracing::info!(%server_id, code = error.code(), "no authorization URL for an auth_required event");
                None
            }
        }
    }
}
