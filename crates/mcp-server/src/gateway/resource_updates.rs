//! `resources/subscribe` and `resources/unsubscribe` of gateway sessions, and the
//! `notifications/resources/updated` they bring: a session's subscription to a URI is a watch
//! the backend hands back ([`ResourceUpdates`]: the resource's updates under the gateway's
//! name for it, [`super::GatewayBackend::watch_resource`]), read by one task that tells the client.
//! The session keeps those tasks by the URI it subscribed; `resources/unsubscribe` ends the
//! URI's task, and the session's end (`DELETE`, expiry, a closed transport) drops them all
//! with the session's handler. A task's end drops its watch, which is how the backend
//! learns it may release the upstream's subscription (when no other session still wants it).
//!
//! Only sessions of the `initialize` generations subscribe: a stateless request (2026-07-28)
//! has no stream to be told on, and is answered -32600.

use super::{GatewayServer, to_error_data};
use futures::StreamExt;
use rmcp::ErrorData;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RequestContext, RoleServer};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::task::AbortOnDropHandle;

/// The updates of one watched resource, as the URIs to tell the client; dropping it ends the
/// watch.
pub type ResourceUpdates = futures::stream::BoxStream<'static, String>;

/// How often a quiet subscription checks that its session is still open.
const CLOSED_CHECK: Duration = Duration::from_secs(30);

/// One session's subscriptions: the task telling the client each URI's updates, by that URI.
/// Shared by the clones of the session's handler; dropped (tasks aborted) with the last.
#[derive(Clone, Debug, Default)]
pub(super) struct SessionSubscriptions(Arc<Mutex<HashMap<String, AbortOnDropHandle<()>>>>);

impl SessionSubscriptions {
    fn contains(&self, uri: &str) -> bool {
        self.0
            .lock()
            .is_ok_and(|subscriptions| subscriptions.contains_key(uri))
    }

    fn insert(&self, uri: String, task: AbortOnDropHandle<()>) {
        if let Ok(mut subscriptions) = self.0.lock() {
            subscriptions.insert(uri, task);
        }
    }

    /// Ends the subscription to `uri` (its task aborted, its watch dropped), if there is one.
    fn remove(&self, uri: &str) {
        let removed = self
            .0
            .lock()
            .ok()
            .and_then(|mut subscriptions| subscriptions.remove(uri));
        drop(removed);
    }
}

impl GatewayServer {
    pub(super) async fn answer_subscribe(
        &self,
        uri: String,
        subscribe: bool,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let method = if subscribe {
            "resources/subscribe"
        } else {
            "resources/unsubscribe"
        };
        let request = self.admitted(&context, method)?;
        if !subscribe {
            self.subscriptions.remove(&uri);
            return Ok(());
        }
        if context.peer.peer_info().is_none() {
            return Err(ErrorData::invalid_request(
                "resources/subscribe needs a session (initialize): a stateless request has no stream to be told on",
                None,
            ));
        }
        if self.subscriptions.contains(&uri) {
            return Ok(());
        }
        let updates = self
            .backend
            .watch_resource(&request, uri.clone())
            .await
            .map_err(to_error_data)?;
        let task = tokio::spawn(tell_updates(updates, context.peer.clone()));
        self.subscriptions.insert(uri, AbortOnDropHandle::new(task));
        Ok(())
    }
}

/// Tells the client each update until the watch or the session ends.
async fn tell_updates(mut updates: ResourceUpdates, peer: Peer<RoleServer>) {
    loop {
        let next = tokio::select! {
            next = updates.next() => next,
            () = tokio::time::sleep(CLOSED_CHECK) => {
                if peer.is_transport_closed() {
                    return;
                }
                continue;
            }
        };
        let Some(uri) = next else {
            return;
        };
        let told = peer
            .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
            .await;
        if told.is_err() {
            return;
        }
    }
}
