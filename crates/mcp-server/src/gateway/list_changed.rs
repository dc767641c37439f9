//! `notifications/tools/list_changed`, `notifications/resources/list_changed` and
//! `notifications/prompts/list_changed` for gateway sessions: a session's first listing (of
//! any list) starts one watcher, which wakes when the backend says something changed
//! ([`GatewayBackend::changes`]: an upstream's list, a policy, a switch), lists again as that
//! caller every list the client has listed, and tells the client of each that really differs
//! from what it was last given (a background resync that found nothing new is not announced).
//! Resources and resource templates share `resources/list_changed`.
//!
//! Only sessions of the `initialize` generations are watched: a stateless request
//! (2026-07-28) has no stream to be told on. The watcher ends when the session's transport
//! closes or the backend's change channel does.

use super::{GatewayBackend, GatewayList, GatewayRequest, GatewayServer};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::ToolSpec;
use tokio::sync::watch;

/// Changes this close together are announced once.
const COALESCE: Duration = Duration::from_millis(50);
/// How often a quiet watcher checks that its session is still open.
const CLOSED_CHECK: Duration = Duration::from_secs(30);

/// What one session's client was last given of each list, and whether its watcher runs.
/// Shared by the session's handler (which records each listing) and its watcher.
#[derive(Clone, Debug, Default)]
pub(super) struct SessionListings {
    watching: Arc<AtomicBool>,
    listed: Arc<Mutex<Listed>>,
}

#[derive(Debug, Default)]
struct Listed {
    tools: Option<Vec<ToolSpec>>,
    items: HashMap<GatewayList, Vec<Value>>,
}

/// What a session's client lists.
pub(super) enum Listing<'a> {
    Tools(&'a [ToolSpec]),
    Items(GatewayList, &'a [Value]),
}

impl SessionListings {
    fn record(&self, listing: Listing<'_>) {
        let Ok(mut listed) = self.listed.lock() else {
            return;
        };
        match listing {
            Listing::Tools(tools) => listed.tools = Some(tools.to_vec()),
            Listing::Items(list, items) => {
                listed.items.insert(list, items.to_vec());
            }
        }
    }

    /// The lists the client has listed (tools: `None` when it has not).
    fn watched(&self) -> (bool, Vec<GatewayList>) {
        self.listed.lock().map_or((false, Vec::new()), |listed| {
            (
                listed.tools.is_some(),
                listed.items.keys().copied().collect(),
            )
        })
    }

    /// Records `listing` as the client's current one; `true` when it differs from the last.
    fn changed(&self, listing: Listing<'_>) -> bool {
        let differs = self.listed.lock().is_ok_and(|listed| match &listing {
            Listing::Tools(tools) => listed.tools.as_deref() != Some(*tools),
            Listing::Items(list, items) => {
                listed.items.get(list).map(Vec::as_slice) != Some(*items)
            }
        });
        if differs {
            self.record(listing);
        }
        differs
    }
}

impl GatewayServer {
    /// Records what the client was given, and starts this session's watcher at its first
    /// listing.
    pub(super) fn watch_list(
        &self,
        context: &RequestContext<RoleServer>,
        request: &GatewayRequest,
        listing: Listing<'_>,
    ) {
        if context.peer.peer_info().is_none() {
            return;
        }
        let Some(changes) = self.backend.changes() else {
            return;
        };
        self.listings.record(listing);
        if self.listings.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let watcher = Watcher {
            backend: self.backend.clone(),
            request: request.clone(),
            peer: context.peer.clone(),
            listings: self.listings.clone(),
        };
        tokio::spawn(watcher.run(changes));
    }
}

struct Watcher {
    backend: Arc<dyn GatewayBackend>,
    request: GatewayRequest,
    peer: Peer<RoleServer>,
    listings: SessionListings,
}

impl Watcher {
    async fn run(self, mut changes: watch::Receiver<u64>) {
        changes.mark_unchanged();
        loop {
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                () = tokio::time::sleep(CLOSED_CHECK) => {
                    if self.peer.is_transport_closed() {
                        return;
                    }
                    continue;
                }
            }
            tokio::time::sleep(COALESCE).await;
            changes.mark_unchanged();
            if self.peer.is_transport_closed() || self.tell_changes().await.is_err() {
                return;
            }
        }
    }

    /// Lists again what the client listed and tells it of every list that differs.
    async fn tell_changes(&self) -> Result<(), rmcp::service::ServiceError> {
        let (tools, lists) = self.listings.watched();
        if tools
            && let Ok(listed) = self.backend.list_tools(&self.request).await
            && self.listings.changed(Listing::Tools(&listed))
        {
            self.peer.notify_tool_list_changed().await?;
        }
        let (mut resources, mut prompts) = (false, false);
        for list in lists {
            let Ok(listed) = self.backend.list_items(&self.request, list).await else {
                continue;
            };
            if self.listings.changed(Listing::Items(list, &listed)) {
                match list {
                    GatewayList::Resources | GatewayList::ResourceTemplates => resources = true,
                    GatewayList::Prompts => prompts = true,
                }
            }
        }
        if resources {
            self.peer.notify_resource_list_changed().await?;
        }
        if prompts {
            self.peer.notify_prompt_list_changed().await?;
        }
        Ok(())
    }
}
