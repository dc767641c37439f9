//! Managing policies: per (server, tool) for the workspace (per bud: [`crate::bud_policies`]).
//! Setting a policy pins
//! it to the tool's current definition and its server's instructions (when the tool is known;
//! otherwise it is pinned on first use), and every change is audited with its before and
//! after. The built-in knowledge-graph server's read-only tools are seeded `ALWAYS_ALLOW`
//! (editable like any other policy).

use crate::error::ApprovalResult;
use crate::evaluation::save_snapshot;
use crate::pinning::pin_hash;
use crate::service::Approvals;
use crate::waiting::PinContext;
use chrono::{DateTime, Utc};
use serde_json::json;
use switchboard_core::{ApprovalPolicy, BudId, Principal, ServerId, UserId, WorkspaceId};
use switchboard_store::{NewToolPolicy, ServerRecord, ToolPolicyRecord, ToolRuleRecord};

use crate::audit::ConfigurationChange;

/// Where a tool's policy comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicySource {
    /// An explicit row for this tool.
    Explicit,
    /// No row: the configured default applies.
    Default,
}

/// A tool's policy as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolPolicyView {
    pub server_id: ServerId,
    pub server_name: String,
    pub tool_name: String,
    /// The bud whose policy this is (`None`: the workspace's).
    pub bud_id: Option<BudId>,
    pub policy: ApprovalPolicy,
    pub source: PolicySource,
    /// The pin the policy holds (`None` until the tool is first seen).
    pub pinned_hash: Option<String>,
    /// Whether the tool as currently synced still matches the pin (`None` when either is
    /// unknown).
    pub pin_matches: Option<bool>,
    pub updated_by: Option<UserId>,
    pub updated_at: Option<DateTime<Utc>>,
}

/// What a view shows of an explicit row: a workspace policy or a bud's rule.
pub(crate) struct ExplicitRule {
    server_id: ServerId,
    tool_name: String,
    policy: ApprovalPolicy,
    pinned_hash: Option<String>,
    updated_by: Option<UserId>,
    updated_at: DateTime<Utc>,
}

impl From<ToolPolicyRecord> for ExplicitRule {
    fn from(record: ToolPolicyRecord) -> Self {
        ExplicitRule {
            server_id: record.server_id,
            tool_name: record.tool_name,
            policy: record.policy,
            pinned_hash: record.pinned_definition_hash,
            updated_by: record.updated_by,
            updated_at: record.updated_at,
        }
    }
}

impl From<ToolRuleRecord> for ExplicitRule {
    fn from(rule: ToolRuleRecord) -> Self {
        ExplicitRule {
            server_id: rule.server_id,
            tool_name: rule.tool_name,
            policy: rule.policy,
            pinned_hash: rule.pin_hash,
            updated_by: rule.updated_by,
            updated_at: rule.updated_at,
        }
    }
}

impl ToolPolicyView {
    /// The view of an explicit row, compared with the tool's `current` pin.
    pub(crate) fn explicit(
        rule: ExplicitRule,
        server_name: String,
        bud_id: Option<BudId>,
        current: &Option<PinContext>,
    ) -> Self {
        ToolPolicyView {
            pin_matches: pin_matches(rule.pinned_hash.as_deref(), current),
            server_id: rule.server_id,
            server_name,
            tool_name: rule.tool_name,
            bud_id,
            policy: rule.policy,
            source: PolicySource::Explicit,
            pinned_hash: rule.pinned_hash,
            updated_by: rule.updated_by,
            updated_at: Some(rule.updated_at),
        }
    }
}

impl Approvals {
    /// The workspace policy of one tool (the default when no row is set).
    pub async fn tool_policy(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        tool_name: &str,
    ) -> ApprovalResult<ToolPolicyView> {
        let store = &self.inner.store;
        let server = store.get_server(workspace_id, server_id).await?;
        let explicit = store
            .get_tool_policy(workspace_id, server_id, tool_name)
            .await?;
        let current = self.current_pin(workspace_id, server_id, tool_name).await?;
        Ok(match explicit {
            Some(record) => ToolPolicyView::explicit(record.into(), server.name, None, &current),
            None => self.default_view(server, tool_name, None),
        })
    }

    /// Every explicit workspace policy (one server's when given).
    pub async fn list_tool_policies(
        &self,
        workspace_id: &WorkspaceId,
        server_id: Option<&ServerId>,
    ) -> ApprovalResult<Vec<ToolPolicyView>> {
        let store = &self.inner.store;
        let servers = store.list_servers(workspace_id).await?;
        if let Some(server_id) = server_id {
            store.get_server(workspace_id, server_id).await?;
        }
        let records = store.list_tool_policies(workspace_id, server_id).await?;
        let mut views = Vec::with_capacity(records.len());
        for record in records {
            let Some(server) = servers.iter().find(|server| server.id == record.server_id) else {
                continue;
            };
            let current = self
                .current_pin(workspace_id, &server.id, &record.tool_name)
                .await?;
            views.push(ToolPolicyView::explicit(
                record.into(),
                server.name.clone(),
                None,
                &current,
            ));
        }
        Ok(views)
    }

    /// Sets the workspace policy of one tool, pinned to its current definition.
    pub async fn set_tool_policy(
        &self,
        principal: &Principal,
        server_id: &ServerId,
        tool_name: &str,
        policy: ApprovalPolicy,
    ) -> ApprovalResult<ToolPolicyView> {
        let store = &self.inner.store;
        let workspace_id = &principal.workspace_id;
        let server = store.get_server(workspace_id, server_id).await?;
        let before = store
            .get_tool_policy(workspace_id, server_id, tool_name)
            .await?;
        let pin = self
            .pin_current_definition(workspace_id, server_id, tool_name)
            .await?;
        store
            .set_tool_policy(
                workspace_id,
                NewToolPolicy {
                    server_id: server_id.clone(),
                    tool_name: tool_name.to_owned(),
                    policy,
                    pinned_definition_hash: pin.as_ref().map(|pin| pin.pin_hash.clone()),
                    updated_by: Some(principal.user_id.clone()),
                },
            )
            .await?;
        self.audit_policy_change(
            principal,
            "policy.set",
            &server,
            tool_name,
            json!({
                "before": before.map(|record| record.policy),
                "after": policy,
                "pinned": pin.is_some(),
            }),
        )
        .await;
        self.tool_policy(workspace_id, server_id, tool_name).await
    }

    /// Removes the workspace policy of one tool (the default applies again).
    pub async fn delete_tool_policy(
        &self,
        principal: &Principal,
        server_id: &ServerId,
        tool_name: &str,
    ) -> ApprovalResult<ToolPolicyView> {
        let store = &self.inner.store;
        let workspace_id = &principal.workspace_id;
        let server = store.get_server(workspace_id, server_id).await?;
        let before = store
            .get_tool_policy(workspace_id, server_id, tool_name)
            .await?;
        store
            .delete_tool_policy(workspace_id, server_id, tool_name)
            .await?;
        self.audit_policy_change(
            principal,
            "policy.deleted",
            &server,
            tool_name,
            json!({"before": before.map(|record| record.policy), "after": null}),
        )
        .await;
        Ok(self.default_view(server, tool_name, None))
    }

    /// First registration of the built-in knowledge-graph server: its read-only tools get
    /// `ALWAYS_ALLOW` (pinned on first use), unless a policy is already set. Returns how many
    /// were seeded.
    pub async fn seed_read_only_policies(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        read_only_tools: &[&str],
    ) -> ApprovalResult<usize> {
        let store = &self.inner.store;
        let server = store.get_server(workspace_id, server_id).await?;
        let mut seeded = Vec::new();
        for tool_name in read_only_tools {
            if store
                .get_tool_policy(workspace_id, server_id, tool_name)
                .await?
                .is_some()
            {
                continue;
            }
            store
                .set_tool_policy(
                    workspace_id,
                    NewToolPolicy {
                        server_id: server_id.clone(),
                        tool_name: (*tool_name).to_owned(),
                        policy: ApprovalPolicy::AlwaysAllow,
                        pinned_definition_hash: None,
                        updated_by: None,
                    },
                )
                .await?;
            seeded.push(*tool_name);
        }
        if !seeded.is_empty() {
            self.inner
                .audit
                .record(
                    workspace_id,
                    switchboard_store::NewAuditEvent {
                        actor: "system".to_owned(),
                        action: "policy.seeded".to_owned(),
                        target: Some(server.name.clone()),
                        server_name: Some(server.name.clone()),
                        status: Some("changed".to_owned()),
                        details: json!({"policy": ApprovalPolicy::AlwaysAllow, "tools": seeded}),
                        ..switchboard_store::NewAuditEvent::default()
                    },
                )
                .await;
        }
        Ok(seeded.len())
    }

    /// [`Self::current_pin`] with its snapshot kept, for a rule about to be pinned to it (so a
    /// later change can be shown as a diff).
    pub(crate) async fn pin_current_definition(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        tool_name: &str,
    ) -> ApprovalResult<Option<PinContext>> {
        let pin = self.current_pin(workspace_id, server_id, tool_name).await?;
        if let Some(pin) = &pin {
            save_snapshot(&self.inner, workspace_id, pin).await?;
        }
        Ok(pin)
    }

    /// The pin of the tool as last synced (`None` when the tool is not known yet).
    pub(crate) async fn current_pin(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        tool_name: &str,
    ) -> ApprovalResult<Option<PinContext>> {
        let store = &self.inner.store;
        let tool = match store.get_tool(workspace_id, server_id, tool_name).await {
            Ok(tool) => tool,
            Err(error) if error.is_not_found() => return Ok(None),
            Err(error) => return Err(error.into()),
        };
        let instructions = store
            .get_server_instructions(workspace_id, server_id)
            .await?
            .and_then(|observed| observed.instructions);
        let definition = tool.definition();
        Ok(Some(PinContext {
            server_id: server_id.clone(),
            pin_hash: pin_hash(&definition, instructions.as_deref()),
            definition,
            instructions,
        }))
    }

    fn default_view(
        &self,
        server: ServerRecord,
        tool_name: &str,
        bud_id: Option<BudId>,
    ) -> ToolPolicyView {
        ToolPolicyView {
            server_id: server.id,
            server_name: server.name,
            tool_name: tool_name.to_owned(),
            bud_id,
            policy: self.inner.config.default_policy,
            source: PolicySource::Default,
            pinned_hash: None,
            pin_matches: None,
            updated_by: None,
            updated_at: None,
        }
    }

    pub(crate) async fn audit_policy_change(
        &self,
        principal: &Principal,
        action: &str,
        server: &ServerRecord,
        tool_name: &str,
        details: serde_json::Value,
    ) {
        let target = format!("{}/{tool_name}", server.name);
        self.inner
            .audit
            .configuration_change(
                principal,
                ConfigurationChange {
                    action,
                    target: &target,
                    server_name: Some(&server.name),
                    tool_name: Some(tool_name),
                    details,
                },
            )
            .await;
    }
}

pub(crate) fn pin_matches(pinned: Option<&str>, current: &Option<PinContext>) -> Option<bool> {
    match (pinned, current) {
        (Some(pinned), Some(current)) => Some(pinned == current.pin_hash),
        _ => None,
    }
}
