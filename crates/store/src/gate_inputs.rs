//! Everything the approval gate reads to decide one call to a registered server, in one query:
//! the conversation's bud, the server's instructions last observed (half of the pin hash), the
//! bud's rule, the workspace's policy and the conversation owner's remembered decision for the
//! tool. A call a rule allows waits for this read before it leaves, so it is one round trip
//! (on SQLite, one hop to a worker thread) instead of two rounds of separate reads; nothing is
//! cached, so a rule changed on any replica applies to the next call.

use crate::backend::on_backend;
use crate::error::{StoreError, StoreResult};
use crate::storable::storable_text;
use crate::store::Store;
use switchboard_core::{ApprovalPolicy, BudId, ConversationId, ServerId, UserId, WorkspaceId};

/// One rule as the gate weighs it: the policy, the pin it holds, who set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateRule {
    pub policy: ApprovalPolicy,
    pub pin_hash: Option<String>,
    pub updated_by: Option<UserId>,
}

/// What the gate needs for a call of `tool_name` of `server_id` in a conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateInputs {
    /// The conversation's bud, if it has one.
    pub bud_id: Option<BudId>,
    /// The server's instructions as last observed (`None`: none observed, or none sent).
    pub instructions: Option<String>,
    /// The bud's rule for the tool.
    pub bud_rule: Option<GateRule>,
    /// The workspace's policy for the tool.
    pub workspace_rule: Option<GateRule>,
    /// The remembered decision of `owner` (the person asked) for the tool.
    pub owner_rule: Option<GateRule>,
}

/// Which call the gate is deciding.
#[derive(Clone, Copy, Debug)]
pub struct GateInputsKey<'a> {
    pub workspace_id: &'a WorkspaceId,
    pub conversation_id: &'a ConversationId,
    pub owner: &'a UserId,
    pub server_id: &'a ServerId,
    pub tool_name: &'a str,
}

#[derive(sqlx::FromRow)]
struct GateInputsRow {
    bud_id: Option<String>,
    instructions: Option<String>,
    bud_policy: Option<String>,
    bud_pin_hash: Option<String>,
    bud_updated_by: Option<String>,
    workspace_policy: Option<String>,
    workspace_pin_hash: Option<String>,
    workspace_updated_by: Option<String>,
    owner_policy: Option<String>,
    owner_pin_hash: Option<String>,
}

const SELECT_GATE_INPUTS: &str = "SELECT c.bud_id, si.instructions, \
     b.policy AS bud_policy, b.pin_hash AS bud_pin_hash, b.updated_by AS bud_updated_by, \
     w.policy AS workspace_policy, w.pinned_definition_hash AS workspace_pin_hash, \
     w.updated_by AS workspace_updated_by, \
     u.policy AS owner_policy, u.pin_hash AS owner_pin_hash \
     FROM conversations c \
     LEFT JOIN server_instructions si \
       ON si.workspace_id = c.workspace_id AND si.server_id = $3 \
     LEFT JOIN bud_tool_policies b \
       ON b.workspace_id = c.workspace_id AND b.bud_id = c.bud_id \
       AND b.server_id = $3 AND b.tool_name = $4 \
     LEFT JOIN tool_approval_policies w \
       ON w.workspace_id = c.workspace_id AND w.server_id = $3 AND w.tool_name = $4 \
     LEFT JOIN user_tool_decisions u \
       ON u.workspace_id = c.workspace_id AND u.user_id = $5 \
       AND u.server_id = $3 AND u.tool_name = $4 \
     WHERE c.workspace_id = $1 AND c.id = $2";

impl Store {
    /// The gate's inputs for one call ([`GateInputs`]), in one query.
    /// `NotFound { entity: "conversation" }` when the conversation is not in the workspace.
    pub async fn get_gate_inputs(&self, key: GateInputsKey<'_>) -> StoreResult<GateInputs> {
        let tool_name = storable_text(key.tool_name);
        let row: Option<GateInputsRow> =
            on_backend!(self, |pool| sqlx::query_as(SELECT_GATE_INPUTS)
                .bind(key.workspace_id.as_str())
                .bind(key.conversation_id.as_str())
                .bind(key.server_id.as_str())
                .bind(&*tool_name)
                .bind(key.owner.as_str())
                .fetch_optional(pool)
                .await)?;
        row.ok_or_else(|| StoreError::not_found("conversation"))?
            .try_into()
    }
}

impl TryFrom<GateInputsRow> for GateInputs {
    type Error = StoreError;

    fn try_from(row: GateInputsRow) -> StoreResult<Self> {
        Ok(GateInputs {
            bud_id: row.bud_id.map(BudId::from_string),
            instructions: row.instructions,
            bud_rule: gate_rule(row.bud_policy, row.bud_pin_hash, row.bud_updated_by)?,
            workspace_rule: gate_rule(
                row.workspace_policy,
                row.workspace_pin_hash,
                row.workspace_updated_by,
            )?,
            owner_rule: gate_rule(row.owner_policy, row.owner_pin_hash, None)?,
        })
    }
}

/// A joined rule's columns, `None` when no row joined (its policy column is `NOT NULL`).
fn gate_rule(
    policy: Option<String>,
    pin_hash: Option<String>,
    updated_by: Option<String>,
) -> StoreResult<Option<GateRule>> {
    let Some(policy) = policy else {
        return Ok(None);
    };
    Ok(Some(GateRule {
        policy: policy.parse().map_err(StoreError::corrupt)?,
        pin_hash,
        updated_by: updated_by.map(UserId::from_string),
    }))
}

impl From<crate::ToolRuleRecord> for GateRule {
    fn from(rule: crate::ToolRuleRecord) -> Self {
        GateRule {
            policy: rule.policy,
            pin_hash: rule.pin_hash,
            updated_by: rule.updated_by,
        }
    }
}

impl From<crate::ToolPolicyRecord> for GateRule {
    fn from(policy: crate::ToolPolicyRecord) -> Self {
        GateRule {
            policy: policy.policy,
            pin_hash: policy.pinned_definition_hash,
            updated_by: policy.updated_by,
        }
    }
}
