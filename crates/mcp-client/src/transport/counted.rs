//! A wrapper around any transport that counts the call notifications (progress and log
//! messages) as they arrive, in wire order. rmcp hands each notification to the handler on a
//! task of its own but gives a response to its caller at once, so a call's answer can reach
//! the caller before the handler has routed the progress and log messages the server sent
//! before that answer. Counting them at the transport, which rmcp reads in order, lets a call
//! wait until everything received before its answer has been routed
//! ([`NotificationRouter::settle`]) — a gateway client or a chat then gets every log message
//! of the call before its result, on every run.

use crate::notifications::NotificationRouter;
use rmcp::model::{GetMeta, ServerJsonRpcMessage, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::sync::Arc;

/// `inner`, with every call notification it receives counted by `router`.
pub(crate) struct Counted<T> {
    inner: T,
    router: Arc<NotificationRouter>,
}

impl<T> Counted<T> {
    pub fn new(inner: T, router: Arc<NotificationRouter>) -> Self {
        Self { inner, router }
    }
}

/// Whether the handler will route `message` to a call: progress and log notifications that
/// are not delivered to a subscription stream instead.
fn is_call_notification(message: &ServerJsonRpcMessage) -> bool {
    let ServerJsonRpcMessage::Notification(notification) = message else {
        return false;
    };
    let (ServerNotification::ProgressNotification(_)
    | ServerNotification::LoggingMessageNotification(_)) = &notification.notification
    else {
        return false;
    };
    notification
        .notification
        .get_meta()
        .subscription_id()
        .is_none()
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Counted<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if is_call_notification(&message) {
            self.router.note_received();
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
