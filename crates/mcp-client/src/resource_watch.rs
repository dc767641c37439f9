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
//! as idle (`SessionSlot::close_if_idle`); when the upstream session ends anyway, its watches
//! end ([`ResourceWatch::next_update`] answers `None`): the upstream forgot them too, and a
//! watcher that still wants the resource watches it again on the server's next session (the
//! gateway does, with backoff). An upstream session ends when our transport closes (its own
//! signal, or rmcp's peer seen closed), when we close it (replaced, shut down), and — over
//! Streamable HTTP, where rmcp re-initializes a forgotten session underneath the same
//! transport — when the upstream answers 404 to our session id ([`ResourceWatches::end_all`],
//! called by `transport::http_measured`). Each subscription is one *generation* of its URI's
//! entry, so the release of a watch from an ended session never counts against a newer one.

#![allow(deprecated)] // resources/subscribe is deprecated by 2026-07-28; this serves the earlier versions

use rmcp::model::{ClientRequest, UnsubscribeRequest, UnsubscribeRequestParams};
use rmcp::service::{Peer, RoleClient};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// Updates buffered per watcher before it lags (a lagging watcher is told its own URI once).
const UPDATES_BUFFER: usize = 16;
/// How long a release waits for the upstream's answer to `resources/unsubscribe`.
const UNSUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a quiet watch checks that rmcp still has its session's transport open (our own
/// transports say so at once; rmcp's peer has no signal to wait on).
const CLOSED_CHECK: Duration = Duration::from_secs(5);

/// The watched URIs of one session.
#[derive(Debug, Default)]
pub(crate) struct ResourceWatches {
    entries: Mutex<HashMap<String, Watched>>,
    /// Held while the upstream is asked to subscribe or unsubscribe.
    pub order: tokio::sync::Mutex<()>,
    /// The generation the next new entry gets.
    generations: AtomicU64,
}

#[derive(Debug)]
struct Watched {
    watchers: usize,
    /// Tells this entry from an earlier one of the same URI ended with its session.
    generation: u64,
    updates: broadcast::Sender<String>,
    /// On a 2026-07-28 session, the URI's listen stream, stopped when the entry goes
    /// ([`crate::resource_listen`]).
    listener: Option<tokio_util::sync::DropGuard>,
}

/// A watcher's place in [`ResourceWatches`]: its updates, its entry's generation, and whether
/// it is the first (the upstream must be asked to subscribe).
#[derive(Debug)]
pub(crate) struct Joined {
    pub updates: broadcast::Receiver<String>,
    pub generation: u64,
    pub first: bool,
}

impl ResourceWatches {
    /// Adds a watcher of `uri`.
    pub fn join(&self, uri: &str) -> Joined {
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let watched = entries.entry(uri.to_owned()).or_insert_with(|| Watched {
            watchers: 0,
            generation: self.generations.fetch_add(1, Ordering::Relaxed),
            updates: broadcast::channel(UPDATES_BUFFER).0,
            listener: None,
        });
        watched.watchers += 1;
        Joined {
            updates: watched.updates.subscribe(),
            generation: watched.generation,
            first: watched.watchers == 1,
        }
    }

    /// Keeps `listener` (the URI's listen stream) with `uri`'s entry `generation`, or drops it
    /// at once (stopping the stream) when that entry is already gone.
    pub fn keep_listener(&self, uri: &str, generation: u64, listener: tokio_util::sync::DropGuard) {
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(watched) = entries
            .get_mut(uri)
            .filter(|watched| watched.generation == generation)
        {
            watched.listener = Some(listener);
        }
    }

    /// Removes a watcher of `uri`'s entry `generation`; `true` when it was the last (the
    /// upstream may be told). A watcher of an ended entry has nothing to leave.
    fn leave(&self, uri: &str, generation: u64) -> bool {
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let Some(watched) = entries
            .get_mut(uri)
            .filter(|watched| watched.generation == generation)
        else {
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

    /// The upstream session ended: every watch of it ends (its watchers' next update is
    /// `None`, once they have read what came before), and the next watcher of a URI is its
    /// first again.
    pub fn end_all(&self) {
        let ended = std::mem::take(
            &mut *self
                .entries
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        if !ended.is_empty() {
            tracing::info!(
                watched = ended.len(),
                "the upstream session ended: its resource watches end"
            );
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
    /// Our transport's own end-of-connection signal, where it has one.
    transport_closed: Option<CancellationToken>,
    release: Option<Release>,
}

#[derive(Debug)]
struct Release {
    peer: Peer<RoleClient>,
    router: Arc<crate::notifications::NotificationRouter>,
    generation: u64,
}

impl ResourceWatch {
    pub(crate) fn new(uri: &str, joined: Joined, live: &crate::session::live::LiveSession) -> Self {
        Self {
            uri: uri.to_owned(),
            updates: joined.updates,
            transport_closed: live.transport_closed_signal(),
            release: Some(Release {
                peer: live.peer.clone(),
                router: live.router.clone(),
                generation: joined.generation,
            }),
        }
    }

    /// The upstream's own URI watched.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The URI of the next update (the upstream's own); `None` once the upstream session has
    /// ended (the subscription is gone with it).
    pub async fn next_update(&mut self) -> Option<String> {
        let transport_closed = self.transport_closed.clone().unwrap_or_default();
        loop {
            let received = tokio::select! {
                received = self.updates.recv() => received,
                () = transport_closed.cancelled() => return None,
                () = tokio::time::sleep(CLOSED_CHECK) => {
                    if self.release.as_ref().is_some_and(|release| release.peer.is_transport_closed()) {
                        return None;
                    }
                    continue;
                }
            };
            return match received {
                Ok(uri) => Some(uri),
                // Some updates were missed: one for the watched URI stands for them.
                Err(broadcast::error::RecvError::Lagged(_)) => Some(self.uri.clone()),
                Err(broadcast::error::RecvError::Closed) => None,
            };
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
        if !watches.leave(&uri, self.generation) || self.peer.is_transport_closed() {
            return;
        }
        if crate::resource_listen::is_stateless(&self.peer) {
            // Leaving dropped the entry and its listen stream: nothing to send.
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
        let mut first = watches.join("demo://a");
        assert!(first.first);
        let mut second = watches.join("demo://a");
        assert!(!second.first);
        let mut other = watches.join("demo://b");
        watches.updated("demo://a");
        assert_eq!(first.updates.try_recv().unwrap(), "demo://a");
        assert_eq!(second.updates.try_recv().unwrap(), "demo://a");
        assert!(
            other.updates.try_recv().is_err(),
            "another URI's watcher hears nothing"
        );
        assert!(!watches.leave("demo://a", first.generation));
        assert!(watches.leave("demo://a", second.generation));
        assert!(watches.leave("demo://b", other.generation));
        assert!(!watches.any());
        assert!(
            !watches.leave("demo://a", first.generation),
            "nothing left to release"
        );
    }

    #[test]
    fn an_ended_session_ends_its_watches_and_their_late_release_spares_the_next_ones() {
        let watches = ResourceWatches::default();
        let mut old = watches.join("demo://a");
        watches.updated("demo://a");
        watches.end_all();
        assert!(!watches.any());
        // What came before the end is still read, then the watch is over.
        assert_eq!(old.updates.try_recv().unwrap(), "demo://a");
        assert_eq!(
            old.updates.try_recv(),
            Err(broadcast::error::TryRecvError::Closed)
        );
        // Watching again on the next session subscribes again.
        let renewed = watches.join("demo://a");
        assert!(renewed.first);
        assert!(
            !watches.leave("demo://a", old.generation),
            "the ended watch's release is not the renewed one's"
        );
        assert!(watches.any());
        assert!(watches.leave("demo://a", renewed.generation));
    }
}
