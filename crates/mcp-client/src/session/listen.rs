//! `subscriptions/listen` (protocol 2026-07-28). A stateless upstream never pushes list
//! changes by itself: a client opens a long-lived listen request naming what it wants to hear,
//! and the notifications arrive on that request's stream. Each session at such a version opens
//! one for the tools / resources / prompts list changes the server says it reports, and routes
//! them exactly like an `initialize` session's `list_changed` notifications (the registry
//! invalidates and resyncs).
//!
//! The stream is not resumable: when it ends while the session lives, it is opened again after
//! a pause (growing to a minute while it keeps failing), and a resync is asked for, since a
//! change may have been missed in between. A server that does not serve the method is left
//! alone.

use crate::notifications::{ListChangeKind, NotificationRouter};
use rmcp::model::{ErrorCode, ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient, ServiceError, SubscriptionEnd};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::{CancellationToken, DropGuard};

const FIRST_PAUSE: Duration = Duration::from_millis(500);
const LONGEST_PAUSE: Duration = Duration::from_secs(60);
/// A stream that lasted this long resets the pause to its first length.
const HEALTHY_STREAM: Duration = Duration::from_secs(30);

/// Stops the listener when dropped (the session closed or went away).
pub(crate) struct ListChangeListener {
    _stop: DropGuard,
}

/// The list changes `peer` says it reports, if it is a session without `initialize` (at
/// 2026-07-28 list changes arrive only on listen streams).
fn wanted_filter(peer: &Peer<RoleClient>) -> Option<SubscriptionFilter> {
    let info = peer.peer_info()?;
    if info.protocol_version.has_initialize() {
        return None;
    }
    let filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .resources_list_changed()
        .prompts_list_changed()
        .build()
        .supported_by(&info.capabilities);
    let wants_something = filter.tools_list_changed.is_some()
        || filter.resources_list_changed.is_some()
        || filter.prompts_list_changed.is_some();
    wants_something.then_some(filter)
}

/// Starts listening when the session's protocol needs it and someone wants to know.
pub(crate) fn start(
    peer: &Peer<RoleClient>,
    router: &Arc<NotificationRouter>,
) -> Option<ListChangeListener> {
    if !router.wants_list_changes() {
        return None;
    }
    let filter = wanted_filter(peer)?;
    let stop = CancellationToken::new();
    tokio::spawn(listen_while_alive(
        peer.clone(),
        router.clone(),
        filter,
        stop.clone(),
    ));
    Some(ListChangeListener {
        _stop: stop.drop_guard(),
    })
}

fn kinds(filter: &SubscriptionFilter) -> Vec<ListChangeKind> {
    let mut kinds = Vec::new();
    if filter.tools_list_changed == Some(true) {
        kinds.push(ListChangeKind::Tools);
    }
    if filter.resources_list_changed == Some(true) {
        kinds.push(ListChangeKind::Resources);
    }
    if filter.prompts_list_changed == Some(true) {
        kinds.push(ListChangeKind::Prompts);
    }
    kinds
}

async fn listen_while_alive(
    peer: Peer<RoleClient>,
    router: Arc<NotificationRouter>,
    filter: SubscriptionFilter,
    stop: CancellationToken,
) {
    let server = router.server_name().to_owned();
    let mut pause = FIRST_PAUSE;
    let mut reopening = false;
    loop {
        if stop.is_cancelled() || peer.is_transport_closed() {
            return;
        }
        let opened = tokio::select! {
            opened = peer.listen(filter.clone()) => opened,
            () = stop.cancelled() => return,
        };
        match opened {
            Ok(mut subscription) => {
                let acknowledged = kinds(subscription.acknowledged());
                tracing::debug!(%server, ?acknowledged, "listening for list changes");
                if reopening {
                    // Changes made while no stream was open were not heard.
                    for kind in &acknowledged {
                        router.list_changed(*kind);
                    }
                }
                let started = Instant::now();
                loop {
                    let next = tokio::select! {
                        next = subscription.next() => next,
                        () = stop.cancelled() => {
                            let _ = subscription.cancel().await;
                            return;
                        }
                    };
                    match next {
                        Ok(Some(notification)) => route(&router, &notification),
                        Ok(None) => break,
                        Err(error) => {
                            tracing::info!(%server, error = %switchboard_core::log_text(&error.to_string()), "the list-change stream failed");
                            break;
                        }
                    }
                }
                if let Some(SubscriptionEnd::Lagged { .. }) = subscription.end() {
                    for kind in &acknowledged {
                        router.list_changed(*kind);
                    }
                }
                if started.elapsed() >= HEALTHY_STREAM {
                    pause = FIRST_PAUSE;
                }
                tracing::debug!(%server, end = ?subscription.end(), "the list-change stream ended");
            }
            Err(ServiceError::McpError(error)) if error.code == ErrorCode::METHOD_NOT_FOUND => {
                tracing::info!(%server, "the server does not serve subscriptions/listen; list changes are found by the periodic refresh");
                return;
            }
            Err(error) => {
                tracing::debug!(%server, error = %switchboard_core::log_text(&error.to_string()), "opening the list-change stream failed");
            }
        }
        reopening = true;
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = stop.cancelled() => return,
        }
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

fn route(router: &NotificationRouter, notification: &ServerNotification) {
    let kind = match notification {
        ServerNotification::ToolListChangedNotification(_) => ListChangeKind::Tools,
        ServerNotification::ResourceListChangedNotification(_) => ListChangeKind::Resources,
        ServerNotification::PromptListChangedNotification(_) => ListChangeKind::Prompts,
        _ => return,
    };
    router.list_changed(kind);
}
