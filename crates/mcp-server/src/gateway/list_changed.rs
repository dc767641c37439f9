//! `notifications/tools/list_changed` for gateway sessions: a session's first `tools/list`
//! starts one watcher, which wakes when the backend says something changed
//! ([`GatewayBackend::changes`]: an upstream's list, a policy, a switch), lists again as that
//! caller, and tells the client only when its list really differs from the one it was last
//! given (a background resync that found nothing new is not announced).
//!
//! Only sessions of the `initialize` generations are watched: a stateless request
//! (2026-07-28) has no stream to be told on. The watcher ends when the session's transport
//! closes or the backend's change channel does.

use super::{GatewayBackend, GatewayRequest, GatewayServer};
use rmcp::service::{Peer, RequestContext, RoleServer};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use switchboard_core::ToolSpec;
use tokio::sync::watch;

/// Changes this close together are announced once.
const COALESCE: Duration = Duration::from_millis(50);
/// How often a quiet watcher checks that its session is still open.
const CLOSED_CHECK: Duration = Duration::from_secs(30);

impl GatewayServer {
    /// Starts this session's watcher at its first listing (`listed`: what the client got).
    pub(super) fn watch_list(
        &self,
        context: &RequestContext<RoleServer>,
        request: &GatewayRequest,
        listed: &[ToolSpec],
    ) {
        if context.peer.peer_info().is_none() {
            return;
        }
        let Some(changes) = self.backend.changes() else {
            return;
        };
        if self.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let watcher = Watcher {
            backend: self.backend.clone(),
            request: request.clone(),
            peer: context.peer.clone(),
            last_listed: listed.to_vec(),
        };
        tokio::spawn(watcher.run(changes));
    }
}

struct Watcher {
    backend: Arc<dyn GatewayBackend>,
    request: GatewayRequest,
    peer: Peer<RoleServer>,
    last_listed: Vec<ToolSpec>,
}

impl Watcher {
    async fn run(mut self, mut changes: watch::Receiver<u64>) {
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
            if self.peer.is_transport_closed() {
                return;
            }
            let Ok(listed) = self.backend.list_tools(&self.request).await else {
                continue;
            };
            if listed == self.last_listed {
                continue;
            }
            if self.peer.notify_tool_list_changed().await.is_err() {
                return;
            }
            self.last_listed = listed;
        }
    }
}
