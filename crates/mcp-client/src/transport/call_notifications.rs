//! A wrapper around any transport that routes the call notifications (progress and log
//! messages) itself, as they arrive, in wire order. rmcp hands each notification to the
//! handler on a task of its own, so two notifications of one call could reach the caller in
//! either order, and a call's answer could reach it before the notifications the server sent
//! before that answer. The transport is read in order by rmcp's one service loop, so routing
//! here — before the next message, the answer included, is read — gives the caller every
//! progress report and log message in the order the server sent them, and all of them before
//! the answer. Routed notifications are not passed on to rmcp (the handler has nothing left
//! to do with them; we keep our own call clock, not rmcp's progress timeout).

use crate::notifications::NotificationRouter;
use rmcp::model::{GetMeta, ServerJsonRpcMessage, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::sync::Arc;

/// `inner`, with every call notification it receives routed by `router`.
pub(crate) struct RoutingCallNotifications<T> {
    inner: T,
    router: Arc<NotificationRouter>,
}

impl<T> RoutingCallNotifications<T> {
    pub fn new(inner: T, router: Arc<NotificationRouter>) -> Self {
        Self { inner, router }
    }
}

/// Routes `message` when it is a call notification — progress or a log message not meant for
/// a subscription stream — and says whether it did.
#[allow(deprecated)] // `notifications/message` is deprecated by SEP-2577; servers up to 2025-11-25 send it.
fn route_call_notification(message: &ServerJsonRpcMessage, router: &NotificationRouter) -> bool {
    let ServerJsonRpcMessage::Notification(notification) = message else {
        return false;
    };
    let notification = &notification.notification;
    if notification.get_meta().subscription_id().is_some() {
        return false;
    }
    match notification {
        ServerNotification::ProgressNotification(progress) => {
            let params = &progress.params;
            router.progress(
                &params.progress_token,
                params.progress,
                params.total,
                params.message.clone(),
            );
            true
        }
        ServerNotification::LoggingMessageNotification(log) => {
            let params = &log.params;
            let level = serde_json::to_value(params.level)
                .ok()
                .and_then(|value| value.as_str().map(str::to_owned))
                .unwrap_or_else(|| "info".to_owned());
            router.log(level, params.logger.clone(), params.data.clone());
            true
        }
        _ => false,
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for RoutingCallNotifications<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            if !route_call_notification(&message, &self.router) {
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
