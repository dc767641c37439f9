//! Re-checking pins after every capability sync or list change: the MCP client (or whoever
//! syncs) reports the server's instructions and tools; the instructions are recorded (they are
//! part of every pin of that server), and each `ALWAYS_ALLOW` rule whose tool no longer matches
//! its pin is reported, audited once per new definition (`tool_definition.changed`, with the
//! diff) and counted. The gate enforces the fallback to asking at call time on its own; this
//! makes the change visible as soon as it is seen.
//!
//! Tools that appeared have no rule (the default applies); removed tools need nothing;
//! reordering changes no hash.

use crate::error::ApprovalResult;
use crate::pinning::{definition_diff, pin_hash, unknown_previous_definition_diff};
use crate::service::Approvals;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use switchboard_core::{ApprovalPolicy, ServerId, ToolDefinition, WorkspaceId};
use switchboard_registry::{SyncedCapabilities, SyncedHandler};
use switchboard_store::{NewAuditEvent, Store, StoreResult, ToolRuleScope};

/// An `ALWAYS_ALLOW` rule whose tool changed since it was pinned: its calls are asked again.
#[derive(Clone, Debug, PartialEq)]
pub struct PinDrift {
    pub tool_name: String,
    /// `workspace`, `bud:<id>` or `user:<id>`.
    pub rule: String,
    pub pinned_hash: String,
    pub current_hash: String,
    /// What changed (see [`crate::pinning::definition_diff`]).
    pub diff: Value,
}

impl Approvals {
    /// The handler to give the server registry (`ServerRegistry::on_synced`): every successful sync
    /// re-checks the server's pins (in a task; failures are logged).
    pub fn synced_handler(&self) -> SyncedHandler {
        let approvals = self.clone();
        Arc::new(move |synced: SyncedCapabilities| {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return;
            };
            let approvals = approvals.clone();
            runtime.spawn(async move {
                if let Err(error) = approvals
                    .observe_server_sync(
                        &synced.workspace_id,
                        &synced.server_id,
                        synced.instructions.as_deref(),
                        &synced.tools,
                    )
                    .await
                {
                    tracing::warn!(server_id = %synced.server_id, %error, "could not re-check pins after a sync");
                }
            });
        })
    }

    /// See the module docs. Returns the rules that no longer match.
    pub async fn observe_server_sync(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        instructions: Option<&str>,
        tools: &[ToolDefinition],
    ) -> ApprovalResult<Vec<PinDrift>> {
        let store = &self.inner.store;
        let server = store.get_server(workspace_id, server_id).await?;
        store
            .record_server_instructions(workspace_id, server_id, instructions)
            .await?;
        let current: HashMap<&str, (&ToolDefinition, String)> = tools
            .iter()
            .map(|tool| (tool.name.as_str(), (tool, pin_hash(tool, instructions))))
            .collect();
        let pinned_rules = pinned_allow_rules(store, workspace_id, server_id).await?;
        let mut drifts = Vec::new();
        for (tool_name, rule, pinned_hash) in pinned_rules {
            let Some((definition, current_hash)) = current.get(tool_name.as_str()) else {
                continue;
            };
            if *current_hash == pinned_hash {
                continue;
            }
            let diff = match store
                .get_tool_pin_snapshot(workspace_id, server_id, &pinned_hash)
                .await?
            {
                Some(snapshot) => definition_diff(
                    &snapshot.definition,
                    snapshot.instructions.as_deref(),
                    definition,
                    instructions,
                ),
                None => unknown_previous_definition_diff(),
            };
            drifts.push(PinDrift {
                tool_name,
                rule,
                pinned_hash,
                current_hash: current_hash.clone(),
                diff,
            });
        }
        for drift in &drifts {
            self.report_drift(workspace_id, server_id, &server.name, drift)
                .await;
        }
        Ok(drifts)
    }

    /// Counts, logs and audits a drift — once per rule and new definition.
    async fn report_drift(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        server_name: &str,
        drift: &PinDrift,
    ) {
        if !self.inner.waiting.first_report_of_drift(
            server_id,
            &drift.tool_name,
            &drift.rule,
            &drift.current_hash,
        ) {
            return;
        }
        metrics::counter!("approval_pins_changed_total", "server" => server_name.to_owned())
            .increment(1);
        tracing::warn!(server = %server_name, tool = %drift.tool_name, rule = %drift.rule, "a pinned tool changed: its calls will be asked about again");
        self.inner
            .audit
            .record(
                workspace_id,
                NewAuditEvent {
                    actor: "system".to_owned(),
                    action: "tool_definition.changed".to_owned(),
                    target: Some(format!("{}/{}", server_name, drift.tool_name)),
                    server_name: Some(server_name.to_owned()),
                    tool_name: Some(drift.tool_name.clone()),
                    status: Some("changed".to_owned()),
                    details: json!({
                        "rule": drift.rule,
                        "pinned_hash": drift.pinned_hash,
                        "current_hash": drift.current_hash,
                        "diff": drift.diff,
                        "effect": "ALWAYS_ALLOW falls back to ASK_USER until approved again",
                    }),
                    ..NewAuditEvent::default()
                },
            )
            .await;
    }
}

/// The server's pinned `ALWAYS_ALLOW` rules as (tool, rule label, pinned hash): workspace
/// policies, then bud and user rules.
async fn pinned_allow_rules(
    store: &Store,
    workspace_id: &WorkspaceId,
    server_id: &ServerId,
) -> StoreResult<Vec<(String, String, String)>> {
    let mut pinned_rules: Vec<(String, String, String)> = store
        .list_tool_policies(workspace_id, Some(server_id))
        .await?
        .into_iter()
        .filter(|policy| policy.policy == ApprovalPolicy::AlwaysAllow)
        .filter_map(|policy| {
            policy
                .pinned_definition_hash
                .map(|hash| (policy.tool_name, "workspace".to_owned(), hash))
        })
        .collect();
    pinned_rules.extend(
        store
            .list_server_tool_rules(workspace_id, server_id)
            .await?
            .into_iter()
            .filter(|rule| rule.policy == ApprovalPolicy::AlwaysAllow)
            .filter_map(|rule| {
                let label = match &rule.scope {
                    ToolRuleScope::Bud(bud_id) => format!("bud:{bud_id}"),
                    ToolRuleScope::User(user_id) => format!("user:{user_id}"),
                };
                rule.pin_hash.map(|hash| (rule.tool_name, label, hash))
            }),
    );
    Ok(pinned_rules)
}
