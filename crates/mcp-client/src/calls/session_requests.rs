//! Requests a gateway passes on that change what an upstream session sends rather than
//! asking it for something: `logging/setLevel` and `resources/subscribe` /
//! `resources/unsubscribe` (a [`ResourceWatch`], released when dropped). They go through the
//! caller's session (the one its calls use, so
//! the log messages and `notifications/resources/updated` they govern arrive where the
//! caller listens) under the same limits as a call. An upstream that did not declare the
//! capability is not asked: the answer says so (`Ok(false)`, `Ok(None)`).

#![allow(deprecated)] // logging and resources/subscribe are deprecated by 2026-07-28; this forwards them

use super::CallContext;
use crate::UpstreamError;
use crate::client::McpClient;
use crate::resource_watch::ResourceWatch;
use crate::server::UpstreamServer;
use rmcp::model::{
    ClientRequest, LoggingLevel, SetLevelRequest, SetLevelRequestParams, SubscribeRequest,
    SubscribeRequestParams,
};
use serde_json::Value;

impl McpClient {
    /// `logging/setLevel` to `level` (`debug` … `emergency`); `Ok(false)`: the upstream
    /// declares no `logging` capability and was not asked.
    pub async fn set_log_level(
        &self,
        server: &UpstreamServer,
        level: &str,
        context: &CallContext,
    ) -> Result<bool, UpstreamError> {
        let level: LoggingLevel = serde_json::from_value(Value::from(level))
            .map_err(|_| UpstreamError::Protocol(format!("{level:?} is not a logging level")))?;
        let (_, live) = self.session_for_call(server, context).await?;
        let declared = live
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.logging.is_some());
        if !declared {
            return Ok(false);
        }
        let request =
            ClientRequest::SetLevelRequest(SetLevelRequest::new(SetLevelRequestParams::new(level)));
        self.send(server, request, context).await?;
        Ok(true)
    }

    /// Watches the upstream's own `uri` ([`ResourceWatch`]: its `notifications/resources/updated`
    /// until dropped) on the caller's session, which is sent `resources/subscribe` (on
    /// 2026-07-28, a `subscriptions/listen` stream for the URI is opened) unless someone there
    /// already watches it; `Ok(None)`: the upstream does not declare `resources.subscribe`.
    pub async fn watch_resource(
        &self,
        server: &UpstreamServer,
        uri: &str,
        context: &CallContext,
    ) -> Result<Option<ResourceWatch>, UpstreamError> {
        let (_, live) = self.session_for_call(server, context).await?;
        let declared = live.peer.peer_info().is_some_and(|info| {
            info.capabilities
                .resources
                .as_ref()
                .and_then(|resources| resources.subscribe)
                .unwrap_or(false)
        });
        if !declared {
            return Ok(None);
        }
        let watches = &live.router.watches;
        let _order = watches.order.lock().await;
        let joined = watches.join(uri);
        let (first, generation) = (joined.first, joined.generation);
        // Dropped on failure, the watch leaves again (its unsubscribe is harmless).
        let watch = ResourceWatch::new(uri, joined, &live);
        if first && crate::resource_listen::is_stateless(&live.peer) {
            let timeout = self.limits(server).timeout;
            let listener = crate::resource_listen::listen_to(&live, uri, timeout).await?;
            watches.keep_listener(uri, generation, listener);
        } else if first {
            let request = ClientRequest::SubscribeRequest(SubscribeRequest::new(
                SubscribeRequestParams::new(uri),
            ));
            self.send(server, request, context).await?;
        }
        Ok(Some(watch))
    }
}
