//! `subscriptions/listen` (protocol 2026-07-28): a stream on which the server reports changes
//! of the resources the client named. Schema changes in the caller's workspace become
//! `notifications/resources/updated` for `kg://schema`, `kg://changelog` and the changed
//! `kg://types/{name}`. rmcp sends the acknowledgment and tags every notification with the
//! subscription id; this module only decides what to send and when.

use crate::auth::Caller;
use crate::graphs::{GraphEvent, KnowledgeGraphs};
use crate::subscriptions::is_touched_by_schema_change;
use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;
use tokio::sync::broadcast;

/// What we deliver: resource updates for any URI asked for (a type may appear later); no list
/// changes (tools and prompts are fixed, and the resource list is not watched).
pub fn accepted_filter(requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
    let mut accepted = requested.clone();
    accepted.tools_list_changed = None;
    accepted.prompts_list_changed = None;
    accepted.resources_list_changed = None;
    Some(accepted)
}

/// Runs one listen stream until the client cancels it or the server shuts down.
pub async fn serve(graphs: &KnowledgeGraphs, caller: &Caller, context: SubscriptionContext) {
    let uris = context
        .accepted()
        .resource_subscriptions
        .clone()
        .unwrap_or_default();
    if uris.is_empty() {
        context.cancelled().await;
        return;
    }
    let mut events = graphs.subscribe();
    loop {
        let event = tokio::select! {
            _ = context.cancelled() => return,
            event = events.recv() => event,
        };
        let event = match event {
            Ok(event) => event,
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let GraphEvent::SchemaChanged {
            workspace_id,
            changed_types,
            ..
        } = event
        else {
            continue;
        };
        if workspace_id != caller.principal.workspace_id {
            continue;
        }
        for uri in uris
            .iter()
            .filter(|uri| is_touched_by_schema_change(uri, &changed_types))
        {
            if context
                .sink()
                .notify_resource_updated(uri.clone())
                .await
                .is_err()
            {
                return;
            }
        }
    }
}
