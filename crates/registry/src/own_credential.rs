//! The registry's own credential for our knowledge-graph endpoint. Our `/mcp` applies the
//! scopes of whoever calls it, so the registry needs a token of its own to list that
//! server's capabilities in the background (the chat still forwards each user's own token for
//! their calls). It is a workspace-scoped token with only `schema:read` and `data:read`,
//! acting as a dedicated service user, stored encrypted as the server's own secret.
//!
//! At every start the binary calls [`ServerRegistry::prepare_own_endpoints`]: each marked server
//! is pointed at this process's listener (the port may change between starts; with replicas the
//! stored URL names whichever started last, and no process connects there but that one — each
//! reaches its own, see [`super::own_endpoint`]) and given a working token (a missing or
//! revoked one is replaced). Only what differs is written, and the URL without moving the
//! row's version (`Store::record_server_url`): a start never makes an admin's concurrent edit
//! of that server fail with a conflict. Deleting the server revokes its
//! token ([`ServerRegistry::own_endpoint_removed`]).

use super::{RegistryError, ServerRegistry};
use switchboard_core::{Scope, ScopeSet, TokenId, WorkspaceId};
use switchboard_store::{
    NewToken, ServerPatch, ServerRecord, ServerSecrets, StoreError, UserRecord, UserRole,
};
use url::Url;

/// The service user the token acts as (one per workspace, created when first needed).
pub const OWN_ENDPOINT_SYNC_USER: &str = "switchboard-capability-sync";
/// The token's name in the workspace's token list.
pub const OWN_ENDPOINT_SYNC_TOKEN: &str = "kg capability sync (managed by Switchboard)";

/// The scopes the registry's token carries: those of every kg tool, because `tools/list`
/// offers a caller only the tools its scopes can call and the workspace's catalog (policies,
/// the chat's offer) must hold them all. The token still never serves a call; tokens issued
/// with other scopes are replaced at the next start.
pub fn own_endpoint_sync_scopes() -> ScopeSet {
    [Scope::SchemaRead, Scope::DataRead, Scope::DataWrite]
        .into_iter()
        .collect()
}

impl ServerRegistry {
    /// Points every marked server of every workspace at `url` and makes sure it holds a
    /// working service token. Returns how many servers were prepared.
    pub async fn prepare_own_endpoints(&self, url: &Url) -> Result<usize, RegistryError> {
        let mut prepared = 0;
        for workspace in self.store().list_workspaces().await? {
            let marked: Vec<ServerRecord> = self
                .store()
                .list_servers(&workspace.id)
                .await?
                .into_iter()
                .filter(Self::is_marked_own_endpoint)
                .collect();
            for record in marked {
                self.prepare_own_endpoint(&record, url).await?;
                prepared += 1;
            }
        }
        Ok(prepared)
    }

    async fn prepare_own_endpoint(
        &self,
        record: &ServerRecord,
        url: &Url,
    ) -> Result<ServerRecord, RegistryError> {
        let store = self.store();
        let secrets = store
            .server_secrets(&record.workspace_id, &record.id)
            .await?;
        let current = match &secrets.api_key {
            Some(token) => self.sync_token_id(&record.workspace_id, token).await?,
            None => None,
        };
        let token_works = current.is_some() && secrets.headers.is_empty();
        let url_is_current = record.url.as_deref() == Some(url.as_str());
        if token_works && url_is_current {
            // A restart at the same address writes nothing.
            return Ok(record.clone());
        }
        if !url_is_current {
            // Not a configuration edit (no request may change this URL): the row's version
            // stays, so an admin editing the server at this moment does not get a conflict.
            store
                .record_server_url(&record.workspace_id, &record.id, url.as_str())
                .await?;
        }
        let updated = if token_works {
            store.get_server(&record.workspace_id, &record.id).await?
        } else {
            if let Some(old_token) = &current {
                store.revoke_token(&record.workspace_id, old_token).await?;
            }
            let patch = ServerPatch {
                secrets: Some(ServerSecrets {
                    api_key: Some(self.issue_sync_token(&record.workspace_id).await?),
                    ..ServerSecrets::default()
                }),
                ..ServerPatch::default()
            };
            store
                .update_server(&record.workspace_id, &record.id, record.version, patch)
                .await?
        };
        tracing::info!(server = %record.name, %url, "prepared our own knowledge-graph endpoint (address and capability-sync token)");
        // Sessions made with the old address or token are gone; a sync follows.
        self.server_changed(&updated).await;
        Ok(updated)
    }

    /// For our own endpoint at one of our URLs whose service token no longer works (revoked
    /// or missing): a new token, stored; the updated record. `None` when nothing was renewed.
    pub(super) async fn renew_own_endpoint_token(
        &self,
        record: &ServerRecord,
    ) -> Option<ServerRecord> {
        if !Self::is_marked_own_endpoint(record) || !self.points_at_own_endpoint(record) {
            return None;
        }
        let renewed = async {
            let store = self.store();
            let secrets = store
                .server_secrets(&record.workspace_id, &record.id)
                .await?;
            if let Some(token) = &secrets.api_key
                && self
                    .sync_token_id(&record.workspace_id, token)
                    .await?
                    .is_some()
            {
                return Ok::<_, RegistryError>(None);
            }
            let current = store.get_server(&record.workspace_id, &record.id).await?;
            let patch = ServerPatch {
                secrets: Some(ServerSecrets {
                    api_key: Some(self.issue_sync_token(&record.workspace_id).await?),
                    ..ServerSecrets::default()
                }),
                ..ServerPatch::default()
            };
            let updated = store
                .update_server(&record.workspace_id, &record.id, current.version, patch)
                .await?;
            self.client().close_server(&record.id).await;
            Ok(Some(updated))
        };
        match renewed.await {
            Ok(Some(updated)) => {
                tracing::info!(server = %record.name, "our own knowledge-graph endpoint refused the registry's token; a new one was issued");
                Some(updated)
            }
            Ok(None) => None,
            Err(error) => {
                tracing::warn!(server = %record.name, %error, "could not renew the registry's token for our own knowledge-graph endpoint");
                None
            }
        }
    }

    /// The id of `token` when it is a live service token of this workspace with exactly the
    /// sync scopes (never a person's token).
    async fn sync_token_id(
        &self,
        workspace_id: &WorkspaceId,
        token: &str,
    ) -> Result<Option<TokenId>, RegistryError> {
        let Some(principal) = self.store().authenticate(token).await? else {
            return Ok(None);
        };
        let Some(token_id) = principal.token_id else {
            return Ok(None);
        };
        if &principal.workspace_id != workspace_id || principal.scopes != own_endpoint_sync_scopes()
        {
            return Ok(None);
        }
        let record = self.store().get_token(workspace_id, &token_id).await?;
        Ok((record.name == OWN_ENDPOINT_SYNC_TOKEN).then_some(token_id))
    }

    async fn issue_sync_token(&self, workspace_id: &WorkspaceId) -> Result<String, RegistryError> {
        let store = self.store();
        let user = match self.sync_user(workspace_id).await? {
            Some(user) => user,
            None => match store
                .create_user(workspace_id, OWN_ENDPOINT_SYNC_USER, UserRole::Member)
                .await
            {
                Ok(user) => user,
                // Another renewal (a second marked server, another replica) made it just now.
                Err(StoreError::UniqueViolation { .. }) => self
                    .sync_user(workspace_id)
                    .await?
                    .ok_or(StoreError::NotFound { entity: "user" })?,
                Err(error) => return Err(error.into()),
            },
        };
        let issued = store
            .create_token(
                workspace_id,
                NewToken {
                    user_id: user.id,
                    name: OWN_ENDPOINT_SYNC_TOKEN.to_owned(),
                    scopes: own_endpoint_sync_scopes(),
                    expires_at: None,
                },
            )
            .await?;
        Ok(issued.plaintext.into_string())
    }

    /// The workspace's service user of the own endpoint's sync, if it has one yet.
    async fn sync_user(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Option<UserRecord>, RegistryError> {
        Ok(self
            .store()
            .list_users(workspace_id)
            .await?
            .into_iter()
            .find(|user| user.name == OWN_ENDPOINT_SYNC_USER))
    }

    /// Before a marked server is deleted: its service token is revoked.
    pub async fn own_endpoint_removed(&self, record: &ServerRecord) -> Result<(), RegistryError> {
        if !Self::is_marked_own_endpoint(record) {
            return Ok(());
        }
        let secrets = self
            .store()
            .server_secrets(&record.workspace_id, &record.id)
            .await?;
        if let Some(token) = &secrets.api_key
            && let Some(token_id) = self.sync_token_id(&record.workspace_id, token).await?
        {
            self.store()
                .revoke_token(&record.workspace_id, &token_id)
                .await?;
        }
        Ok(())
    }
}
