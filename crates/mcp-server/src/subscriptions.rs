//! `resources/subscribe`: sessions that asked to hear about a resource get
//! `notifications/resources/updated` when a schema change touches it (`kg://schema` and
//! `kg://changelog` on every change, `kg://types/{name}` when that type changed).
//!
//! Any URI may be subscribed to (a type may not exist yet); only ours are ever notified. A
//! subscription whose session has gone is dropped the first time a notification fails.

use crate::graphs::GraphEvent;
use crate::resources::{CHANGELOG_URI, SCHEMA_URI, TYPE_URI_PREFIX};
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use switchboard_core::WorkspaceId;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

struct Subscription {
    /// The handler instance (one per session) that subscribed.
    session: u64,
    uri: String,
    peer: Peer<RoleServer>,
}

/// Whether a schema change of `changed_types` changes the resource at `uri`.
pub fn is_touched_by_schema_change(uri: &str, changed_types: &[String]) -> bool {
    uri == SCHEMA_URI
        || uri == CHANGELOG_URI
        || uri
            .strip_prefix(TYPE_URI_PREFIX)
            .is_some_and(|name| changed_types.iter().any(|t| t == name))
}

#[derive(Default)]
pub struct Subscriptions {
    by_workspace: Mutex<HashMap<WorkspaceId, Vec<Subscription>>>,
}

impl std::fmt::Debug for Subscriptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count: usize = self
            .by_workspace
            .lock()
            .map(|map| map.values().map(Vec::len).sum())
            .unwrap_or_default();
        f.debug_struct("Subscriptions")
            .field("count", &count)
            .finish()
    }
}

impl Subscriptions {
    pub fn subscribe(
        &self,
        workspace_id: &WorkspaceId,
        session: u64,
        uri: &str,
        peer: Peer<RoleServer>,
    ) {
        let mut map = self.by_workspace.lock().expect("subscriptions lock");
        let list = map.entry(workspace_id.clone()).or_default();
        if !list.iter().any(|s| s.session == session && s.uri == uri) {
            list.push(Subscription {
                session,
                uri: uri.to_owned(),
                peer,
            });
        }
    }

    pub fn unsubscribe(&self, workspace_id: &WorkspaceId, session: u64, uri: &str) {
        if let Some(list) = self
            .by_workspace
            .lock()
            .expect("subscriptions lock")
            .get_mut(workspace_id)
        {
            list.retain(|s| !(s.session == session && s.uri == uri));
        }
    }

    /// Forwards graph events to subscribers until `shutdown` is cancelled.
    pub fn spawn_notifier(
        self: Arc<Self>,
        mut events: broadcast::Receiver<GraphEvent>,
        shutdown: CancellationToken,
    ) {
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    _ = shutdown.cancelled() => return,
                    event = events.recv() => event,
                };
                match event {
                    Ok(event) => self.notify(&event).await,
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "resource subscription notifier fell behind");
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    async fn notify(&self, event: &GraphEvent) {
        let GraphEvent::SchemaChanged {
            workspace_id,
            changed_types,
            ..
        } = event
        else {
            return;
        };
        let touched = |uri: &str| is_touched_by_schema_change(uri, changed_types);
        let targets: Vec<(u64, String, Peer<RoleServer>)> = {
            let map = self.by_workspace.lock().expect("subscriptions lock");
            map.get(workspace_id)
                .into_iter()
                .flatten()
                .filter(|s| touched(&s.uri))
                .map(|s| (s.session, s.uri.clone(), s.peer.clone()))
                .collect()
        };
        for (session, uri, peer) in targets {
            let sent = peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone()))
                .await;
            if let Err(error) = sent {
                tracing::debug!(%error, uri = %switchboard_core::log_text(&uri.to_string()), "dropping resource subscription of a closed session");
                self.unsubscribe(workspace_id, session, &uri);
            }
        }
    }
}
