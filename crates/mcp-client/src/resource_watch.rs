//! Resource subscriptions on one upstream session, shared by everyone who watches the same
//! URI there. An upstream keeps one subscription per session and URI (a second
//! `resources/subscribe` changes nothing, one `resources/unsubscribe` ends it), while several
//! callers — the gateway's sessions of one person, or of everyone on a shared session — may
//! want the same URI. So the upstream is sent `resources/subscribe` when the first watcher
//! joins and `resources/unsubscribe` when the last one leaves (a [`ResourceWatch`] dropped),
//! and each `notifications/resources/updated` goes to every watcher of its URI.
//!
//! Subscribing and unsubscribing upstream are done in order under one lock per session, so a
//! release never overtakes a new watcher's subscribe. A session with watchers is not closed
//! as idle (`SessionSlot::close_if_idle`); when it ends anyway (the upstream went away), its
//! watches end ([`ResourceWatch::next_update`] answers `None`): the upstream forgot them too.

#![allow(deprecated)] // resources/subscribe is deprecated by 2026-07-28; this serves the earlier versions

use rmcp::model::{ClientRequest, UnsubscribeRequest, UnsubscribeRequestParams};
use rmcp::service::{Peer, RoleClient};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast;

/// Updates buffered per watcher before it lags (a lagging watcher is told its own URI once).
const UPDATES_BUFFER: usize = 16;
/// How long a release waits for the upstream's answer to `resources/unsubscribe`.
const UNSUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The watched URIs of one session.
#[derive(Debug, Default)]
pub(crate) struct ResourceWatches {
    entries: Mutex<HashMap<String, Watched>>,
    /// Held while the upstream is asked to subscribe or unsubscribe.
    pub order: tokio::sync::Mutex<()>,
}

#[derive(Debug)]
struct Watched {
    watchers: usize,
    updates: broadcast::Sender<String>,
}

impl ResourceWatches {
    /// Adds a watcher of `uri`: its updates, and whether it is the first (the upstream must
    /// be asked to subscribe).
    pub fn join(&self, uri: &str) -> (broadcast::Receiver<String>, bool) {
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let watched = entries.entry(uri.to_owned()).or_insert_with(|| Watched {
            watchers: 0,
            updates: broadcast::channel(UPDATES_BUFFER).0,
        });
        watched.watchers += 1;
        (watched.updates.subscribe(), watched.watchers == 1)
    }

    /// Removes a watcher of `uri`; `true` when it was the last (the upstream may be told).
    fn leave(&self, uri: &str) -> bool {
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let Some(watched) = entries.get_mut(uri) else {
            return false;
        };
        watched.watchers = watched.watchers.saturating_sub(1);
        if watched.watchers > 0 {
            return false;
        }
        entries.remove(uri);
        true
    }

    /// The upstream says `uri` was updated: every watcher of it hears.
    pub fn updated(&self, uri: &str) {
        let entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(watched) = entries.get(uri) {
            let _ = watched.updates.send(uri.to_owned());
        }
    }

    /// Whether anyone watches a resource of this session (it is then not idle).
    pub fn any(&self) -> bool {
        self.entries
            .lock()
            .map(|entries| !entries.is_empty())
            .unwrap_or(true)
    }
}

/// One watcher of one upstream resource: its updates until dropped. Dropping it leaves, and
/// the last watcher to leave has the upstream sent `resources/unsubscribe`.
#[derive(Debug)]
pub struct ResourceWatch {
    uri: String,
    updates: broadcast::Receiver<String>,
    release: Option<Release>,
}

#[derive(Debug)]
struct Release {
    peer: Peer<RoleClient>,
    router: Arc<crate::notifications::NotificationRouter>,
}

impl ResourceWatch {
    pub(crate) fn new(
        uri: &str,
        updates: broadcast::Receiver<String>,
        peer: Peer<RoleClient>,
        router: Arc<crate::notifications::NotificationRouter>,
    ) -> Self {
        Self {
            uri: uri.to_owned(),
            updates,
            release: Some(Release { peer, router }),
        }
    }

    /// The upstream's own URI watched.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The URI of the next update (the upstream's own); `None` once the session has ended.
    pub async fn next_update(&mut self) -> Option<String> {
        match self.updates.recv().await {
            Ok(uri) => Some(uri),
            // Some updates were missed: one for the watched URI stands for them.
            Err(broadcast::error::RecvError::Lagged(_)) => Some(self.uri.clone()),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}

impl Drop for ResourceWatch {
    fn drop(&mut self) {
        let Some(release) = self.release.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(release.run(std::mem::take(&mut self.uri)));
    }
}

impl Release {
    async fn run(self, uri: String) {
        let watches = &self.router.watches;
        let _order = watches.order.lock().await;
        if !watches.leave(&uri) || self.peer.is_transport_closed() {
            return;
        }
        let request = ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(
            UnsubscribeRequestParams::new(uri.as_str()),
        ));
        let server = self.router.server_name();
        match tokio::time::timeout(UNSUBSCRIBE_TIMEOUT, self.peer.send_request(request)).await {
            Ok(Ok(_)) => tracing::debug!(server, "unsubscribed from an upstream resource"),
            Ok(Err(error)) => {
                tracing::info!(server, %error, "the upstream refused resources/unsubscribe")
            }
            Err(_) => tracing::info!(server, "resources/unsubscribe was not answered in time"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_watcher_subscribes_and_only_the_last_to_leave_releases() {
        let watches = ResourceWatches::default();
        let (mut first, is_first) = watches.join("demo://a");
        assert!(is_first);
        let (mut second, is_first) = watches.join("demo://a");
        assert!(!is_first);
        let (mut other, _) = watches.join("demo://b");
        watches.updated("demo://a");
        assert_eq!(first.try_recv().unwrap(), "demo://a");
        assert_eq!(second.try_recv().unwrap(), "demo://a");
        assert!(
            other.try_recv().is_err(),
            "another URI's watcher hears nothing"
        );
        assert!(!watches.leave("demo://a"));
        assert!(watches.leave("demo://a"));
        assert!(watches.leave("demo://b"));
        assert!(!watches.any());
        assert!(!watches.leave("demo://a"), "nothing left to release");
    }
}
