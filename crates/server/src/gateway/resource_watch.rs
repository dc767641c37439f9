//! A gateway client's subscription to one resource, kept through the upstream's restarts. The
//! upstream's subscription lives in one upstream session (`mcp-client`'s `resource_watch`);
//! when that session ends (the upstream restarted or the connection was lost) its watch ends,
//! yet the client still believes it is subscribed. So the client's watch is renewed on the
//! server's next session — the caller's offer resolved again (credentials, access), the
//! session reopened as for any request, with backoff while that fails — and the client is
//! told one `notifications/resources/updated` for the URI once it is watched again: the
//! resource may have changed while nobody watched it.
//!
//! The renewal lives in the stream the client's session reads ([`ResourceUpdates`]), so it
//! stops when that stream is dropped: the client unsubscribed or its session ended. It gives
//! up only when the caller is no longer offered the resource or its subscriptions (removed
//! server, lost access): nothing could be renewed any more.

use super::ChatGateway;
use futures::StreamExt;
use std::time::Duration;
use switchboard_chat::{GatewayResourceWatch, GatewaySubscription};
use switchboard_mcp_server::gateway::{GatewayError, GatewayRequest, ResourceUpdates};

/// The first wait before watching again, doubled after each failure up to [`LAST_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(250);
const LAST_RETRY: Duration = Duration::from_secs(30);

impl ChatGateway {
    /// Watches the gateway URI `uri` for the caller of `request` at the upstream that owns it.
    pub(super) async fn subscribe_resource(
        &self,
        request: &GatewayRequest,
        uri: &str,
    ) -> Result<GatewayResourceWatch, GatewayError> {
        let offer = self.offer(request).await?;
        let subscription = self
            .chat
            .gateway_watch_resource(&request.caller.principal, &offer.tools, uri, offer.naming)
            .await
            .map_err(super::items::upstream_error)?;
        match subscription {
            GatewaySubscription::Watching(watch) => Ok(watch),
            GatewaySubscription::NotOffered => Err(GatewayError::Upstream {
                code: -32601,
                message: format!("the server of {uri} does not offer resource subscriptions"),
                data: None,
            }),
            GatewaySubscription::UnknownResource => {
                Err(GatewayError::UnknownResource(uri.to_owned()))
            }
        }
    }
}

/// The updates of `watch` under the gateway's names, renewed on the upstream's next session
/// whenever one ends.
pub(super) fn renewed_updates(
    gateway: ChatGateway,
    request: GatewayRequest,
    uri: String,
    watch: GatewayResourceWatch,
) -> ResourceUpdates {
    let renewing = Renewing {
        gateway,
        request,
        uri,
        watch: Some(watch),
    };
    futures::stream::unfold(renewing, Renewing::next).boxed()
}

struct Renewing {
    gateway: ChatGateway,
    request: GatewayRequest,
    /// The gateway URI the client subscribed to.
    uri: String,
    /// `None` while the upstream session is gone and the watch not yet renewed.
    watch: Option<GatewayResourceWatch>,
}

impl Renewing {
    async fn next(mut self) -> Option<(String, Self)> {
        if let Some(watch) = &mut self.watch {
            if let Some(updated) = watch.next_update().await {
                return Some((updated, self));
            }
            tracing::info!(uri = %self.uri, "the upstream session of a watched resource ended; watching it on the next one");
            self.watch = None;
        }
        let watch = self.renew().await?;
        self.watch = Some(watch);
        // What changed while nobody watched is told as one update.
        let uri = self.uri.clone();
        Some((uri, self))
    }

    /// The watch on the server's next session, retried with backoff; `None` when it can never
    /// be renewed.
    async fn renew(&self) -> Option<GatewayResourceWatch> {
        let mut delay = FIRST_RETRY;
        loop {
            tokio::time::sleep(delay).await;
            match self
                .gateway
                .subscribe_resource(&self.request, &self.uri)
                .await
            {
                Ok(watch) => {
                    tracing::info!(uri = %self.uri, "a watched resource is watched again");
                    return Some(watch);
                }
                Err(error) if lasting(&error) => {
                    tracing::info!(uri = %self.uri, %error, "a watched resource can no longer be watched");
                    return None;
                }
                Err(error) => {
                    tracing::debug!(uri = %self.uri, %error, ?delay, "watching a resource again failed; retrying");
                    delay = (delay * 2).min(LAST_RETRY);
                }
            }
        }
    }
}

/// Whether a failed renewal will fail the same way however often it is tried: the caller is
/// no longer offered the resource (or its server's subscriptions). An upstream that cannot be
/// reached, or refuses for now, may answer later.
fn lasting(error: &GatewayError) -> bool {
    match error {
        GatewayError::UnknownResource(_)
        | GatewayError::UnknownBud(_)
        | GatewayError::UnknownServer(_) => true,
        GatewayError::Upstream { code, .. } => *code == -32601,
        _ => false,
    }
}
