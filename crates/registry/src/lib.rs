//! `switchboard-registry`: the servers a workspace has registered (records in the store) meet
//! live sessions (from `switchboard-mcp-client`'s [`McpClient`]). [`ServerRegistry`] turns a
//! record into an upstream description, keeps each server's capability cache in the store fresh
//! (TTL, background refresh, on-demand refresh, resync on `list_changed`), answers the registry
//! API's questions (state, capabilities, test, try a tool) and reacts to servers being changed
//! or removed. Our own kg endpoint is registered like any other server (`own_endpoint`,
//! `own_credential`).
//!
//! Why its own crate: the protocol client below it knows nothing of the store, so it can be
//! used (and fuzzed, and benchmarked) without a database; everything store-backed lives here.
//! The HTTP wire shapes are the server crate's business; this crate returns typed values and
//! names no rmcp type.
//!
//! # For the chat engine
//! ```text
//! // per resolved server record: Ok(enabled tools, cache refreshed if stale) or Err(Unusable
//! // { state, code: "needs_auth" | "empty" | "inactive" | <error code>, message })
//! let tools = registry.usable_tools(&record).await;
//! let upstream = registry.upstream_as(&record, user_token_for_own_endpoint).await?;
//! // then the client's ToolCatalog and McpClient::call_tool (see switchboard-mcp-client)
//! ```

mod error;
mod metrics;
pub mod oauth;
mod oauth_upstream;
mod operations;
mod own_credential;
mod own_endpoint;
mod refresh;
pub mod state;
pub mod sync;
pub mod upstream;
mod user_fields;

pub use error::RegistryError;
pub use oauth_upstream::{Attempted, NEEDS_AUTH, is_per_caller, is_per_user_oauth, uses_oauth};
pub use operations::{CapabilitiesView, ReadinessSummary, ServerOverview, Unusable};
pub use own_credential::{
    OWN_ENDPOINT_SYNC_TOKEN, OWN_ENDPOINT_SYNC_USER, own_endpoint_sync_scopes,
};
pub use own_endpoint::{OWN_ENDPOINT_MARKER, is_same_endpoint};
pub use state::CapabilityState;
pub use sync::{SyncReport, SyncedCapabilities, SyncedHandler};
pub use user_fields::{NEEDS_USER_CREDENTIALS, has_user_fields};

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use switchboard_core::{ServerId, WorkspaceId};
use switchboard_mcp_client::McpClient;
use switchboard_mcp_client::server::{UpstreamEndpoint, UpstreamServer};
use switchboard_store::{ServerRecord, Store};
use tokio_util::sync::CancellationToken;

/// Cheap to clone; clones share state.
#[derive(Clone, Debug)]
pub struct ServerRegistry {
    pub(crate) inner: Arc<RegistryInner>,
}

pub(crate) struct RegistryInner {
    client: McpClient,
    store: Store,
    sync_locks: Mutex<HashMap<ServerId, Arc<tokio::sync::Mutex<()>>>>,
    /// Servers with a sync running, and since when (the view tells a failure recorded while
    /// a sync ran from one recorded before it began).
    syncing: Mutex<HashMap<ServerId, chrono::DateTime<chrono::Utc>>>,
    /// The failure of each server's last sync (cleared by a success), for callers that waited
    /// on a sync someone else started.
    last_failures: Mutex<HashMap<ServerId, switchboard_mcp_client::UpstreamError>>,
    /// Where this process serves its own MCP endpoint (see [`own_endpoint`]).
    own_endpoints: Mutex<Vec<url::Url>>,
    /// Which workspace a server belongs to, for notifications that name only the server.
    workspaces: Mutex<HashMap<ServerId, WorkspaceId>>,
    /// Told after every successful sync (approvals re-check their pins; the gateway
    /// refreshes its catalogs).
    synced: Mutex<Vec<SyncedHandler>>,
    /// The OAuth connections whose tokens the upstreams of `oauth` servers carry (set once by
    /// whoever wires the process; without it such servers need sign-in).
    oauth: OnceLock<oauth::OAuthService>,
    background: CancellationToken,
}

impl std::fmt::Debug for RegistryInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerRegistry")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl ServerRegistry {
    /// Wires the registry to the client: upstream list changes trigger a resync.
    pub fn new(client: McpClient, store: Store) -> Self {
        let inner = Arc::new(RegistryInner {
            client,
            store,
            sync_locks: Mutex::new(HashMap::new()),
            syncing: Mutex::new(HashMap::new()),
            last_failures: Mutex::new(HashMap::new()),
            own_endpoints: Mutex::new(Vec::new()),
            workspaces: Mutex::new(HashMap::new()),
            synced: Mutex::new(Vec::new()),
            oauth: OnceLock::new(),
            background: CancellationToken::new(),
        });
        let weak: Weak<RegistryInner> = Arc::downgrade(&inner);
        inner
            .client
            .on_list_changed(Arc::new(move |server_id, kind| {
                let Some(inner) = weak.upgrade() else { return };
                let registry = ServerRegistry { inner };
                let server_id = server_id.clone();
                tokio::spawn(async move {
                    tracing::info!(%server_id, ?kind, "resyncing after a list change");
                    registry.resync(&server_id).await;
                });
            }));
        Self { inner }
    }

    /// Calls `handler` (besides those added before) after every successful sync (manual,
    /// background, on demand, after a list change) with what was stored.
    pub fn on_synced(&self, handler: SyncedHandler) {
        if let Ok(mut synced) = self.inner.synced.lock() {
            synced.push(handler);
        }
    }

    pub fn client(&self) -> &McpClient {
        &self.inner.client
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The upstream description for a record, with its decrypted credentials — except for our
    /// own endpoint, whose stored service token serves capability listing only: calls reach it
    /// with a caller's token ([`Self::upstream_as`]) or none. Seeds the client's
    /// protocol-version memory from the store on first use, so a restart does not probe again.
    pub async fn upstream(&self, record: &ServerRecord) -> Result<UpstreamServer, RegistryError> {
        let mut upstream = self.stored_upstream(record).await?;
        if Self::is_marked_own_endpoint(record) {
            without_credentials(&mut upstream);
        }
        Ok(upstream)
    }

    /// [`Self::upstream`] with the stored secrets as they are (for our own endpoint: its
    /// service token, and only while it is reached at one of our own URLs — this process's,
    /// see [`Self::connection_url`]).
    pub(crate) async fn stored_upstream(
        &self,
        record: &ServerRecord,
    ) -> Result<UpstreamServer, RegistryError> {
        let secrets = self
            .store()
            .server_secrets(&record.workspace_id, &record.id)
            .await?;
        let mut upstream = upstream::upstream_for_record(record, secrets)?;
        if Self::is_marked_own_endpoint(record)
            && let Some(own) = self.connection_url(record)
            && let UpstreamEndpoint::Remote(remote) = &mut upstream.endpoint
        {
            // The same service on every replica: reached here, never at another replica's
            // address (the stored one is the listener of whichever started last).
            remote.url = own;
        }
        let own_url = self.points_at_own_endpoint(record);
        if Self::is_marked_own_endpoint(record) && !own_url {
            // The service credential of our own endpoint goes nowhere else.
            without_credentials(&mut upstream);
        }
        if own_url {
            // Our own `/mcp` is reached whatever the URL policy says of its address.
            upstream.origin = switchboard_mcp_client::url_policy::ServerOrigin::OwnEndpoint;
        }
        if let Ok(mut workspaces) = self.inner.workspaces.lock() {
            workspaces.insert(record.id.clone(), record.workspace_id.clone());
        }
        if self
            .client()
            .remembered_protocol_version(&upstream)
            .is_none()
            && let Ok(Some(stored)) = self
                .store()
                .get_mcp_observation(&record.workspace_id, &record.id)
                .await
            && let Some(version) = stored.observation.protocol_version
        {
            self.client().remember_protocol_version(&upstream, &version);
        }
        Ok(upstream)
    }

    /// After a configuration change: sessions made with the old configuration are closed, a
    /// past ERROR no longer delays the next attempt, and an active server is synced again.
    pub async fn server_changed(&self, record: &ServerRecord) {
        self.client().close_server(&record.id).await;
        self.client().reset_errors(&record.id);
        if record.is_active {
            // Marked before the task runs, so an answer given right after this change already
            // says `syncing` (not `never_synced`) however late the task is scheduled.
            self.mark_syncing(&record.id, true);
            let registry = self.clone();
            let record = record.clone();
            tokio::spawn(async move {
                registry.sync_record(&record).await;
            });
        }
    }

    /// After a delete: every session (and stdio child) of the server is gone on return.
    pub async fn server_removed(&self, server_id: &ServerId) {
        self.client().close_server(server_id).await;
        if let Ok(mut workspaces) = self.inner.workspaces.lock() {
            workspaces.remove(server_id);
        }
    }

    /// Stops the background refresh and closes every session (within the configured limit).
    pub async fn shutdown(&self) {
        self.inner.background.cancel();
        self.client().shutdown().await;
    }

    /// Syncs a server again after one of its sessions said a list changed — whichever path
    /// opened that session (a sync here, or a chat turn or the gateway building the upstream
    /// itself, as after a restart that synced nothing yet).
    async fn resync(&self, server_id: &ServerId) {
        let Some(workspace_id) = self.workspace_of(server_id).await else {
            tracing::debug!(%server_id, "a list change of a server no workspace has");
            return;
        };
        match self.store().get_server(&workspace_id, server_id).await {
            Ok(record) if record.is_active => {
                self.sync_record(&record).await;
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%server_id, %error, "cannot resync a server"),
        }
    }
}

impl ServerRegistry {
    /// The workspace of `server_id`: known from an upstream built here, else looked up in the
    /// store (and remembered). A notification names only the server, and the store keys
    /// servers by workspace; list changes are rare enough for the look-up to go through every
    /// workspace.
    async fn workspace_of(&self, server_id: &ServerId) -> Option<WorkspaceId> {
        let known = self
            .inner
            .workspaces
            .lock()
            .ok()
            .and_then(|workspaces| workspaces.get(server_id).cloned());
        if known.is_some() {
            return known;
        }
        let workspaces = match self.store().list_workspaces().await {
            Ok(workspaces) => workspaces,
            Err(error) => {
                tracing::warn!(%server_id, %error, "cannot find the workspace of a server");
                return None;
            }
        };
        for workspace in workspaces {
            let Ok(servers) = self.store().list_servers(&workspace.id).await else {
                continue;
            };
            if servers.iter().any(|server| server.id == *server_id) {
                if let Ok(mut known) = self.inner.workspaces.lock() {
                    known.insert(server_id.clone(), workspace.id.clone());
                }
                return Some(workspace.id);
            }
        }
        None
    }
}

/// Drops a remote upstream's key and headers.
fn without_credentials(upstream: &mut UpstreamServer) {
    if let switchboard_mcp_client::server::UpstreamEndpoint::Remote(remote) = &mut upstream.endpoint
    {
        remote.api_key = None;
        remote.headers.clear();
    }
}
