//! What the rules say about one proposed call, before anyone is asked.
//!
//! Order: the conversation's bud policy, else the workspace policy, else the configured default
//! decides between `ALWAYS_DENY` (denied), `ALWAYS_ALLOW` (allowed while the tool still matches
//! the definition it was pinned to; otherwise asked, with the difference) and `ASK_USER`. Under
//! `ASK_USER` the conversation owner's remembered decision ("always" on an earlier approval)
//! applies: a remembered deny denies; a remembered allow allows while the pin matches. A rule
//! made before the tool was ever seen is pinned on first use. Annotations such as
//! `readOnlyHint` are never consulted: a server's own claims grant nothing.

use crate::pinning::{definition_diff, pin_hash, unknown_previous_definition_diff};
use crate::service::ApprovalsInner;
use crate::waiting::PinContext;
use serde_json::Value;
use switchboard_chat::{GateRequest, GateTarget};
use switchboard_core::{ApprovalPolicy, ServerId, UserId, WorkspaceId};
use switchboard_store::{NewToolPolicy, NewToolRule, StoreResult, ToolRuleScope};

/// The rules' answer.
#[derive(Debug)]
pub(crate) enum Verdict {
    Allow {
        decided_by: String,
    },
    Deny {
        decided_by: String,
        reason: String,
    },
    /// A person must decide; `diff` is set when a pinned definition changed.
    Ask {
        diff: Option<Value>,
        pin: Option<Box<PinContext>>,
    },
}

/// Which rule decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RuleSource {
    Bud,
    Workspace,
    Default,
}

impl RuleSource {
    fn label(self) -> &'static str {
        match self {
            RuleSource::Bud => "bud",
            RuleSource::Workspace => "workspace",
            RuleSource::Default => "default",
        }
    }
}

struct AdminRule {
    policy: ApprovalPolicy,
    pin_hash: Option<String>,
    source: RuleSource,
    updated_by: Option<UserId>,
}

pub(crate) async fn evaluate(
    inner: &ApprovalsInner,
    request: &GateRequest,
) -> StoreResult<Verdict> {
    let GateTarget::Registered { server_id, .. } = &request.target else {
        // A server the request brought along has no rules: the default applies, unpinned.
        return Ok(match inner.config.default_policy {
            ApprovalPolicy::AlwaysDeny => deny_by(request, RuleSource::Default),
            ApprovalPolicy::AlwaysAllow => Verdict::Allow {
                decided_by: "policy:default".to_owned(),
            },
            ApprovalPolicy::AskUser => Verdict::Ask {
                diff: None,
                pin: None,
            },
        });
    };
    let store = &inner.store;
    let workspace_id = &request.principal.workspace_id;
    let tool_name = request.tool.name.as_str();
    let instructions = store
        .get_server_instructions(workspace_id, server_id)
        .await?
        .and_then(|observed| observed.instructions);
    let pin = PinContext {
        server_id: server_id.clone(),
        pin_hash: pin_hash(&request.tool, instructions.as_deref()),
        definition: request.tool.clone(),
        instructions,
    };
    let conversation = store
        .get_conversation(workspace_id, &request.conversation_id)
        .await?;
    let bud_rule = match &conversation.bud_id {
        Some(bud_id) => {
            store
                .get_tool_rule(
                    workspace_id,
                    &ToolRuleScope::Bud(bud_id.clone()),
                    server_id,
                    tool_name,
                )
                .await?
        }
        None => None,
    };
    let admin_rule = match bud_rule {
        Some(rule) => AdminRule {
            policy: rule.policy,
            pin_hash: rule.pin_hash,
            source: RuleSource::Bud,
            updated_by: rule.updated_by,
        },
        None => match store
            .get_tool_policy(workspace_id, server_id, tool_name)
            .await?
        {
            Some(policy) => AdminRule {
                policy: policy.policy,
                pin_hash: policy.pinned_definition_hash,
                source: RuleSource::Workspace,
                updated_by: policy.updated_by,
            },
            None => AdminRule {
                policy: inner.config.default_policy,
                pin_hash: None,
                source: RuleSource::Default,
                updated_by: None,
            },
        },
    };
    match admin_rule.policy {
        ApprovalPolicy::AlwaysDeny => Ok(deny_by(request, admin_rule.source)),
        ApprovalPolicy::AlwaysAllow => {
            let decided_by = format!("policy:{}", admin_rule.source.label());
            match (&admin_rule.pin_hash, admin_rule.source) {
                (_, RuleSource::Default) => Ok(Verdict::Allow { decided_by }),
                (None, _) => {
                    pin_on_first_use(inner, workspace_id, &conversation.bud_id, &admin_rule, &pin)
                        .await?;
                    Ok(Verdict::Allow { decided_by })
                }
                (Some(pinned), _) if *pinned == pin.pin_hash => Ok(Verdict::Allow { decided_by }),
                (Some(pinned), _) => {
                    let diff = diff_against(inner, workspace_id, server_id, pinned, &pin).await?;
                    Ok(Verdict::Ask {
                        diff: Some(diff),
                        pin: Some(Box::new(pin)),
                    })
                }
            }
        }
        ApprovalPolicy::AskUser => {
            let owner = ToolRuleScope::User(request.conversation_owner.clone());
            let remembered = store
                .get_tool_rule(workspace_id, &owner, server_id, tool_name)
                .await?;
            let decided_by = format!("remembered:{}", request.conversation_owner);
            match remembered {
                Some(rule) if rule.policy == ApprovalPolicy::AlwaysDeny => Ok(Verdict::Deny {
                    decided_by,
                    reason: format!(
                        "the tool '{}' of server '{}' is always denied for this user (a remembered decision)",
                        tool_name,
                        request.target.server_name()
                    ),
                }),
                Some(rule) if rule.policy == ApprovalPolicy::AlwaysAllow => match &rule.pin_hash {
                    Some(pinned) if *pinned != pin.pin_hash => {
                        let diff =
                            diff_against(inner, workspace_id, server_id, pinned, &pin).await?;
                        Ok(Verdict::Ask {
                            diff: Some(diff),
                            pin: Some(Box::new(pin)),
                        })
                    }
                    Some(_) => Ok(Verdict::Allow { decided_by }),
                    None => {
                        remember_for_user(
                            inner,
                            workspace_id,
                            &request.conversation_owner,
                            &pin,
                            ApprovalPolicy::AlwaysAllow,
                        )
                        .await?;
                        Ok(Verdict::Allow { decided_by })
                    }
                },
                _ => Ok(Verdict::Ask {
                    diff: None,
                    pin: Some(Box::new(pin)),
                }),
            }
        }
    }
}

fn deny_by(request: &GateRequest, source: RuleSource) -> Verdict {
    Verdict::Deny {
        decided_by: format!("policy:{}", source.label()),
        reason: format!(
            "the tool '{}' of server '{}' is set to ALWAYS_DENY ({} policy)",
            request.tool.name,
            request.target.server_name(),
            source.label()
        ),
    }
}

/// The difference between what `pinned` stood for and the current definition.
async fn diff_against(
    inner: &ApprovalsInner,
    workspace_id: &WorkspaceId,
    server_id: &ServerId,
    pinned: &str,
    current: &PinContext,
) -> StoreResult<Value> {
    Ok(
        match inner
            .store
            .get_tool_pin_snapshot(workspace_id, server_id, pinned)
            .await?
        {
            Some(snapshot) => definition_diff(
                &snapshot.definition,
                snapshot.instructions.as_deref(),
                &current.definition,
                current.instructions.as_deref(),
            ),
            None => unknown_previous_definition_diff(),
        },
    )
}

/// Keeps the snapshot a pin hash names.
pub(crate) async fn save_snapshot(
    inner: &ApprovalsInner,
    workspace_id: &WorkspaceId,
    pin: &PinContext,
) -> StoreResult<()> {
    inner
        .store
        .save_tool_pin_snapshot(
            workspace_id,
            &pin.server_id,
            &pin.pin_hash,
            &pin.definition,
            pin.instructions.as_deref(),
        )
        .await
}

async fn pin_on_first_use(
    inner: &ApprovalsInner,
    workspace_id: &WorkspaceId,
    bud_id: &Option<switchboard_core::BudId>,
    rule: &AdminRule,
    pin: &PinContext,
) -> StoreResult<()> {
    save_snapshot(inner, workspace_id, pin).await?;
    match (rule.source, bud_id) {
        (RuleSource::Bud, Some(bud_id)) => {
            inner
                .store
                .set_tool_rule(
                    workspace_id,
                    &ToolRuleScope::Bud(bud_id.clone()),
                    NewToolRule {
                        server_id: pin.server_id.clone(),
                        tool_name: pin.definition.name.clone(),
                        policy: rule.policy,
                        pin_hash: Some(pin.pin_hash.clone()),
                        updated_by: rule.updated_by.clone(),
                    },
                )
                .await?;
        }
        _ => {
            inner
                .store
                .set_tool_policy(
                    workspace_id,
                    NewToolPolicy {
                        server_id: pin.server_id.clone(),
                        tool_name: pin.definition.name.clone(),
                        policy: rule.policy,
                        pinned_definition_hash: Some(pin.pin_hash.clone()),
                        updated_by: rule.updated_by.clone(),
                    },
                )
                .await?;
        }
    }
    tracing::info!(server_id = %pin.server_id, tool = %pin.definition.name, source = rule.source.label(), "pinned an approval rule to the tool's definition on first use");
    Ok(())
}

/// Records `user`'s remembered decision for the pinned definition.
pub(crate) async fn remember_for_user(
    inner: &ApprovalsInner,
    workspace_id: &WorkspaceId,
    user: &UserId,
    pin: &PinContext,
    policy: ApprovalPolicy,
) -> StoreResult<()> {
    save_snapshot(inner, workspace_id, pin).await?;
    inner
        .store
        .set_tool_rule(
            workspace_id,
            &ToolRuleScope::User(user.clone()),
            NewToolRule {
                server_id: pin.server_id.clone(),
                tool_name: pin.definition.name.clone(),
                policy,
                pin_hash: Some(pin.pin_hash.clone()),
                updated_by: Some(user.clone()),
            },
        )
        .await?;
    Ok(())
}
