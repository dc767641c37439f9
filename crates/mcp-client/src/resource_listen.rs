//! Resource subscriptions on a 2026-07-28 session. That protocol has no
//! `resources/subscribe`: a client opens a `subscriptions/listen` request whose filter names the
//! URIs it wants (`resourceSubscriptions`), and the server sends
//! `notifications/resources/updated` on that request's stream while it stays open. So the first
//! watcher of a URI on such a session opens one stream for it (the server must acknowledge the
//! URI, as it would answer `resources/subscribe`), the updates it carries go to every watcher
//! ([`crate::resource_watch::ResourceWatches::updated`]), and the stream is cancelled when the
//! URI's entry goes (its last watcher left, or the session ended): the [`DropGuard`] kept in the
//! entry. A stream that ends while still wanted is opened again after a pause, and its
//! watchers are told of one update, since one may have been missed in between.

use crate::UpstreamError;
use crate::notifications::NotificationRouter;
use crate::session::live::LiveSession;
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient, Subscription};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::{CancellationToken, DropGuard};

const FIRST_PAUSE: Duration = Duration::from_millis(500);
const LONGEST_PAUSE: Duration = Duration::from_secs(30);

/// Whether `peer` is a session without `initialize` (2026-07-28 and later), where resources
/// are watched by listening.
pub(crate) fn is_stateless(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| !info.protocol_version.has_initialize())
}

/// Opens the stream for `uri` on `live` (within `timeout`, acknowledged by the server), and
/// keeps it open in a task until the returned guard is dropped.
pub(crate) async fn listen_to(
    live: &LiveSession,
    uri: &str,
    timeout: Duration,
) -> Result<DropGuard, UpstreamError> {
    let filter = SubscriptionFilter::builder()
        .resource_subscription(uri)
        .build();
    let subscription = match tokio::time::timeout(timeout, live.peer.listen(filter.clone())).await {
        Ok(Ok(subscription)) => subscription,
        Ok(Err(error)) => return Err(live.errors.request_failure(error)),
        Err(_) => return Err(UpstreamError::Timeout(timeout)),
    };
    let acknowledged = subscription
        .acknowledged()
        .resource_subscriptions
        .as_ref()
        .is_some_and(|uris| uris.iter().any(|listed| listed == uri));
    if !acknowledged {
        return Err(UpstreamError::Rpc {
            code: rmcp::model::ErrorCode::INVALID_PARAMS.0,
            message: format!("the server did not accept a subscription to {uri}"),
            data: None,
        });
    }
    let stop = CancellationToken::new();
    let stream = ListenedResource {
        peer: live.peer.clone(),
        router: live.router.clone(),
        uri: uri.to_owned(),
        filter,
        stop: stop.clone(),
    };
    tokio::spawn(stream.keep_open(subscription));
    Ok(stop.drop_guard())
}

struct ListenedResource {
    peer: Peer<RoleClient>,
    router: Arc<NotificationRouter>,
    uri: String,
    filter: SubscriptionFilter,
    stop: CancellationToken,
}

impl ListenedResource {
    /// Routes the stream's updates; opens it again when it ends while still wanted.
    async fn keep_open(self, mut subscription: Subscription) {
        let mut pause = FIRST_PAUSE;
        loop {
            if !self.route_until_end(&mut subscription).await {
                let _ = subscription.cancel().await;
                return;
            }
            loop {
                tokio::select! {
                    () = self.stop.cancelled() => return,
                    () = tokio::time::sleep(pause) => {}
                }
                if self.peer.is_transport_closed() {
                    return;
                }
                pause = (pause * 2).min(LONGEST_PAUSE);
                if let Ok(reopened) = self.peer.listen(self.filter.clone()).await {
                    subscription = reopened;
                    // An update may have come while no stream was open.
                    self.router.watches.updated(&self.uri);
                    pause = FIRST_PAUSE;
                    break;
                }
            }
        }
    }

    /// `false` when told to stop; `true` when the stream ended by itself.
    async fn route_until_end(&self, subscription: &mut Subscription) -> bool {
        loop {
            let next = tokio::select! {
                () = self.stop.cancelled() => return false,
                next = subscription.next() => next,
            };
            match next {
                Ok(Some(ServerNotification::ResourceUpdatedNotification(updated))) => {
                    self.router.watches.updated(&updated.params.uri);
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => {
                    tracing::debug!(
                        server = self.router.server_name(),
                        "a resource's listen stream ended"
                    );
                    return true;
                }
            }
        }
    }
}
