//! [`GatewayChanges`]: one counter that moves whenever what a gateway client is offered may
//! have changed, so the gateway's cached offers ([`super::offers`]) are rebuilt and its
//! sessions re-list and are told `notifications/tools/list_changed` when their list differs.
//!
//! What moves it: every successful sync of an upstream (the registry's `on_synced`: a manual
//! or background sync, or a resync after the upstream's own `list_changed`), and every
//! successful change made through the HTTP API to what a catalog is built from — servers
//! (added, changed, switched, removed, their tools switched, their policies, per-user values,
//! OAuth connections), buds (selection, policies) and approval decisions (a remembered
//! `deny` is a rule). It is deliberately coarse: a spurious move costs one rebuild per cached
//! offer, a missed one would serve a stale catalog. A catalog is also rebuilt after
//! [`super::offers::MAX_AGE`] whatever happened, for changes made behind the API's back.

use axum::extract::Request;
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use std::sync::Arc;
use switchboard_registry::SyncedHandler;
use tokio::sync::watch;

/// Cheap to clone; clones share the counter.
#[derive(Clone, Debug)]
pub struct GatewayChanges {
    sender: Arc<watch::Sender<u64>>,
}

impl Default for GatewayChanges {
    fn default() -> Self {
        Self {
            sender: Arc::new(watch::Sender::new(0)),
        }
    }
}

impl GatewayChanges {
    /// The current value (an offer built under it is current while it stays).
    pub fn generation(&self) -> u64 {
        *self.sender.borrow()
    }

    /// Something changed.
    pub fn bump(&self) {
        self.sender.send_modify(|generation| *generation += 1);
        super::metrics::catalog_invalidated();
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.sender.subscribe()
    }

    /// The handler to give the server registry (`ServerRegistry::on_synced`).
    pub fn synced_handler(&self) -> SyncedHandler {
        let changes = self.clone();
        Arc::new(move |_synced| changes.bump())
    }
}

/// Middleware: moves `changes` after a successful request that may change a catalog.
pub async fn track_changes(changes: GatewayChanges, request: Request, next: Next) -> Response {
    let relevant = changes_catalogs(request.method(), request.uri().path());
    let response = next.run(request).await;
    if relevant && (response.status().is_success() || response.status().is_redirection()) {
        changes.bump();
    }
    response
}

/// Whether a request of `method` to `path` may change what a gateway client is offered.
fn changes_catalogs(method: &Method, path: &str) -> bool {
    if path.starts_with("/oauth/") {
        // The OAuth callback connects a person's (or the shared) account to a server.
        return true;
    }
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return false;
    }
    let catalog_area = ["/api/mcp/servers", "/api/buds", "/chat/approvals"]
        .iter()
        .any(|prefix| path.starts_with(prefix));
    // Trying a tool or testing a connection changes nothing.
    catalog_area && !path.ends_with("/call") && !path.ends_with("/test")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_to_servers_buds_and_decisions_count_reads_and_calls_do_not() {
        let post = Method::POST;
        assert!(changes_catalogs(
            &Method::PATCH,
            "/api/mcp/servers/s1/tools/echo"
        ));
        assert!(changes_catalogs(
            &Method::PUT,
            "/api/mcp/servers/s1/tools/echo/policy"
        ));
        assert!(changes_catalogs(&Method::DELETE, "/api/buds/b1"));
        assert!(changes_catalogs(&post, "/chat/approvals/a1"));
        assert!(changes_catalogs(&Method::GET, "/oauth/callback"));
        assert!(!changes_catalogs(&Method::GET, "/api/mcp/servers"));
        assert!(!changes_catalogs(
            &post,
            "/api/mcp/servers/s1/tools/echo/call"
        ));
        assert!(!changes_catalogs(&post, "/api/mcp/servers/s1/test"));
        assert!(!changes_catalogs(&post, "/chat/stream"));
    }
}
