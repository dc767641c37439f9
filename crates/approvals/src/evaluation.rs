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
use switchboard_core::{ApprovalPolicy, BudId, ServerId, UserId, WorkspaceId};
use switchboard_store::{
    GateInputs, GateInputsKey, GateRule, NewToolPolicy, NewToolRule, StoreResult, ToolRuleScope,
};

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

/// Steps: a request's own server gets the default; otherwise the tool's pin context, the
/// admin rule (bud, workspace, default), then what that rule's policy says. Everything the
/// rules need is read in one query ([`switchboard_store::Store::get_gate_inputs`]): a call a
/// rule allows waits for that read before it leaves.
pub(crate) async fn evaluate(
    inner: &ApprovalsInner,
    request: &GateRequest,
) -> StoreResult<Verdict> {
    let GateTarget::Registered { server_id, .. } = &request.target else {
        return Ok(ephemeral_verdict(inner.config.default_policy, request));
    };
    let workspace_id = &request.principal.workspace_id;
    let GateInputs {
        bud_id,
        instructions,
        bud_rule,
        workspace_rule,
        owner_rule,
    } = inner
        .store
        .get_gate_inputs(GateInputsKey {
            workspace_id,
            conversation_id: &request.conversation_id,
            owner: &request.conversation_owner,
            server_id,
            tool_name: &request.tool.name,
        })
        .await?;
    let pin = PinContext {
        server_id: server_id.clone(),
        pin_hash: pin_hash(&request.tool, instructions.as_deref()),
        definition: request.tool.clone(),
        instructions,
    };
    let admin_rule = AdminRule::of(bud_rule, workspace_rule, inner.config.default_policy);
    let call = Evaluation {
        inner,
        request,
        workspace_id,
        server_id,
        tool_name: request.tool.name.as_str(),
        bud_id: &bud_id,
        owner_rule,
        pin,
    };
    match admin_rule.policy {
        ApprovalPolicy::AlwaysDeny => Ok(deny_by(request, admin_rule.source)),
        ApprovalPolicy::AlwaysAllow => call.always_allowed(&admin_rule).await,
        ApprovalPolicy::AskUser => call.ask_user().await,
    }
}

/// A server the request brought along has no rules: the default applies, unpinned.
fn ephemeral_verdict(default_policy: ApprovalPolicy, request: &GateRequest) -> Verdict {
    match default_policy {
        ApprovalPolicy::AlwaysDeny => deny_by(request, RuleSource::Default),
        ApprovalPolicy::AlwaysAllow => Verdict::Allow {
            decided_by: "policy:default".to_owned(),
        },
        ApprovalPolicy::AskUser => Verdict::Ask {
            diff: None,
            pin: None,
        },
    }
}

impl AdminRule {
    /// The bud's rule, else the workspace's, else the configured default.
    fn of(bud: Option<GateRule>, workspace: Option<GateRule>, default: ApprovalPolicy) -> Self {
        let (rule, source) = match (bud, workspace) {
            (Some(rule), _) => (rule, RuleSource::Bud),
            (None, Some(rule)) => (rule, RuleSource::Workspace),
            (None, None) => {
                return AdminRule {
                    policy: default,
                    pin_hash: None,
                    source: RuleSource::Default,
                    updated_by: None,
                };
            }
        };
        AdminRule {
            policy: rule.policy,
            pin_hash: rule.pin_hash,
            source,
            updated_by: rule.updated_by,
        }
    }
}

/// The rule an admin set for `tool_name` of `server_id` (the bud's, else the workspace's, else
/// the configured default), read without a conversation.
async fn admin_rule(
    inner: &ApprovalsInner,
    workspace_id: &WorkspaceId,
    bud_id: Option<&BudId>,
    server_id: &ServerId,
    tool_name: &str,
) -> StoreResult<AdminRule> {
    let store = &inner.store;
    let bud_rule = async {
        match bud_id {
            Some(bud_id) => {
                let scope = ToolRuleScope::Bud(bud_id.clone());
                store
                    .get_tool_rule(workspace_id, &scope, server_id, tool_name)
                    .await
            }
            None => Ok(None),
        }
    };
    // Both are read at once; the workspace's is used only when the bud has no rule.
    let (bud_rule, workspace_policy) = tokio::try_join!(
        bud_rule,
        store.get_tool_policy(workspace_id, server_id, tool_name),
    )?;
    Ok(AdminRule::of(
        bud_rule.map(GateRule::from),
        workspace_policy.map(GateRule::from),
        inner.config.default_policy,
    ))
}

/// The policy an admin rule gives `tool_name` of `server_id` in `bud` (none: the workspace's):
/// what the gateway asks to leave `ALWAYS_DENY` tools out of its list. Pins and a person's
/// remembered decisions are the gate's business, at call time.
pub(crate) async fn admin_policy(
    inner: &ApprovalsInner,
    workspace_id: &WorkspaceId,
    bud_id: Option<&BudId>,
    server_id: &ServerId,
    tool_name: &str,
) -> StoreResult<ApprovalPolicy> {
    Ok(
        admin_rule(inner, workspace_id, bud_id, server_id, tool_name)
            .await?
            .policy,
    )
}

/// One call to a registered server, being evaluated.
struct Evaluation<'a> {
    inner: &'a ApprovalsInner,
    request: &'a GateRequest,
    workspace_id: &'a WorkspaceId,
    server_id: &'a ServerId,
    tool_name: &'a str,
    bud_id: &'a Option<BudId>,
    /// The conversation owner's remembered decision for the tool.
    owner_rule: Option<GateRule>,
    /// The tool as it is now (definition, instructions, their hash).
    pin: PinContext,
}

impl Evaluation<'_> {
    /// `ALWAYS_ALLOW`: allowed while the tool matches its pin (pinned on first use);
    /// a changed tool is asked about, with the difference. The default rule is unpinned.
    async fn always_allowed(self, admin_rule: &AdminRule) -> StoreResult<Verdict> {
        let decided_by = format!("policy:{}", admin_rule.source.label());
        match (&admin_rule.pin_hash, admin_rule.source) {
            (_, RuleSource::Default) => Ok(Verdict::Allow { decided_by }),
            (None, _) => {
                pin_on_first_use(
                    self.inner,
                    self.workspace_id,
                    self.bud_id,
                    admin_rule,
                    &self.pin,
                )
                .await?;
                Ok(Verdict::Allow { decided_by })
            }
            (Some(pinned), _) if *pinned == self.pin.pin_hash => Ok(Verdict::Allow { decided_by }),
            (Some(pinned), _) => self.ask_with_diff(pinned).await,
        }
    }

    /// `ASK_USER`: the owner's remembered decision applies (a remembered allow while the pin
    /// matches); otherwise a person is asked.
    async fn ask_user(mut self) -> StoreResult<Verdict> {
        let owner = &self.request.conversation_owner;
        let remembered = self.owner_rule.take();
        let decided_by = format!("remembered:{owner}");
        match remembered {
            Some(rule) if rule.policy == ApprovalPolicy::AlwaysDeny => Ok(Verdict::Deny {
                decided_by,
                reason: format!(
                    "the tool '{}' of server '{}' is always denied for this user (a remembered decision)",
                    self.tool_name,
                    self.request.target.server_name()
                ),
            }),
            Some(rule) if rule.policy == ApprovalPolicy::AlwaysAllow => match &rule.pin_hash {
                Some(pinned) if *pinned != self.pin.pin_hash => self.ask_with_diff(pinned).await,
                Some(_) => Ok(Verdict::Allow { decided_by }),
                None => {
                    remember_for_user(
                        self.inner,
                        self.workspace_id,
                        owner,
                        &self.pin,
                        ApprovalPolicy::AlwaysAllow,
                    )
                    .await?;
                    Ok(Verdict::Allow { decided_by })
                }
            },
            _ => Ok(Verdict::Ask {
                diff: None,
                pin: Some(Box::new(self.pin)),
            }),
        }
    }

    /// A person decides, shown what changed since the definition pinned as `pinned`.
    async fn ask_with_diff(self, pinned: &str) -> StoreResult<Verdict> {
        let diff = diff_against(
            self.inner,
            self.workspace_id,
            self.server_id,
            pinned,
            &self.pin,
        )
        .await?;
        Ok(Verdict::Ask {
            diff: Some(diff),
            pin: Some(Box::new(self.pin)),
        })
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
