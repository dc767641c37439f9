//! A bud's policies: per (server, tool), overriding the workspace's in the bud's
//! conversations; pinned and audited like workspace policies ([`crate::policies`]).

use crate::error::ApprovalResult;
use crate::policies::ToolPolicyView;
use crate::service::Approvals;
use serde_json::json;
use switchboard_core::{ApprovalPolicy, BudId, Principal, ServerId, WorkspaceId};
use switchboard_store::{NewToolRule, ToolRuleScope};

impl Approvals {
    /// A bud's policies.
    pub async fn list_bud_policies(
        &self,
        workspace_id: &WorkspaceId,
        bud_id: &BudId,
    ) -> ApprovalResult<Vec<ToolPolicyView>> {
        let store = &self.inner.store;
        store.get_bud(workspace_id, bud_id).await?;
        let servers = store.list_servers(workspace_id).await?;
        let rules = store
            .list_tool_rules(workspace_id, &ToolRuleScope::Bud(bud_id.clone()))
            .await?;
        let mut views = Vec::with_capacity(rules.len());
        for rule in rules {
            let Some(server) = servers.iter().find(|server| server.id == rule.server_id) else {
                continue;
            };
            let current = self
                .current_pin(workspace_id, &server.id, &rule.tool_name)
                .await?;
            views.push(ToolPolicyView::explicit(
                rule.into(),
                server.name.clone(),
                Some(bud_id.clone()),
                &current,
            ));
        }
        Ok(views)
    }

    /// Sets a bud's policy for one tool (overrides the workspace policy in the bud's
    /// conversations), pinned like a workspace policy.
    pub async fn set_bud_policy(
        &self,
        principal: &Principal,
        bud_id: &BudId,
        server_id: &ServerId,
        tool_name: &str,
        policy: ApprovalPolicy,
    ) -> ApprovalResult<ToolPolicyView> {
        let store = &self.inner.store;
        let workspace_id = &principal.workspace_id;
        store.get_bud(workspace_id, bud_id).await?;
        let server = store.get_server(workspace_id, server_id).await?;
        let scope = ToolRuleScope::Bud(bud_id.clone());
        let before = store
            .get_tool_rule(workspace_id, &scope, server_id, tool_name)
            .await?;
        let pin = self
            .pin_current_definition(workspace_id, server_id, tool_name)
            .await?;
        let rule = store
            .set_tool_rule(
                workspace_id,
                &scope,
                NewToolRule {
                    server_id: server_id.clone(),
                    tool_name: tool_name.to_owned(),
                    policy,
                    pin_hash: pin.as_ref().map(|pin| pin.pin_hash.clone()),
                    updated_by: Some(principal.user_id.clone()),
                },
            )
            .await?;
        self.audit_policy_change(
            principal,
            "bud_policy.set",
            &server,
            tool_name,
            json!({
                "bud_id": bud_id,
                "before": before.map(|rule| rule.policy),
                "after": policy,
                "pinned": pin.is_some(),
            }),
        )
        .await;
        Ok(ToolPolicyView::explicit(
            rule.into(),
            server.name,
            Some(bud_id.clone()),
            &pin,
        ))
    }

    /// Removes a bud's policy for one tool (the workspace policy applies again).
    pub async fn delete_bud_policy(
        &self,
        principal: &Principal,
        bud_id: &BudId,
        server_id: &ServerId,
        tool_name: &str,
    ) -> ApprovalResult<()> {
        let store = &self.inner.store;
        let workspace_id = &principal.workspace_id;
        store.get_bud(workspace_id, bud_id).await?;
        let server = store.get_server(workspace_id, server_id).await?;
        store
            .delete_tool_rule(
                workspace_id,
                &ToolRuleScope::Bud(bud_id.clone()),
                server_id,
                tool_name,
            )
            .await?;
        self.audit_policy_change(
            principal,
            "bud_policy.deleted",
            &server,
            tool_name,
            json!({"bud_id": bud_id}),
        )
        .await;
        Ok(())
    }
}
