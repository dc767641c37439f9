//! People deciding: approving or denying a waiting call (once, or "always" — remembered for
//! the conversation's owner and pinned to the definition they were shown), and listing the
//! requests of their conversations. Only the conversation's owner or an admin may decide;
//! requests of another workspace are "not found".

use crate::error::{ApprovalError, ApprovalResult};
use crate::evaluation::remember_for_user;
use crate::service::{Approvals, authorize_owner_or_admin};
use crate::waiting::{PersonDecision, PinContext};
use chrono::Utc;
use serde_json::json;
use switchboard_core::{ApprovalId, ApprovalPolicy, ConversationId, Principal};
use switchboard_store::{
    ApprovalRequestFilter, ApprovalRequestRecord, ApprovalResolution, ApprovalStatus, NewAuditEvent,
};

/// A person's answer to an approval request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalChoice {
    Approve,
    Deny,
}

/// Whether the answer holds for this call only or from now on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Remember {
    #[default]
    Once,
    /// Remembered for the conversation's owner, for this tool as currently defined.
    Always,
}

impl Remember {
    pub fn as_str(self) -> &'static str {
        match self {
            Remember::Once => "once",
            Remember::Always => "always",
        }
    }
}

/// Which requests to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApprovalListing {
    /// Only this conversation's (which the caller must own, unless admin).
    pub conversation_id: Option<ConversationId>,
    /// Decided, expired and cancelled ones too (a conversation's history), not only pending.
    pub include_settled: bool,
    /// Every user's (admins only); otherwise the caller's own conversations.
    pub all_users: bool,
}

/// What a decision did.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionOutcome {
    pub request: ApprovalRequestRecord,
    /// True when "always" was recorded as a remembered decision (a server the request
    /// brought along cannot be remembered: the decision then holds once).
    pub remembered: bool,
}

/// What the audit entry of a decision says.
struct AuditedDecision<'a> {
    record: &'a ApprovalRequestRecord,
    status: &'static str,
    remember: Remember,
    remembered: bool,
    pin_hash: Option<String>,
}

impl Approvals {
    /// Records `choice` on a pending request and wakes the call waiting for it.
    pub async fn decide(
        &self,
        principal: &Principal,
        approval_id: &ApprovalId,
        choice: ApprovalChoice,
        remember: Remember,
    ) -> ApprovalResult<DecisionOutcome> {
        let inner = &self.inner;
        let workspace_id = &principal.workspace_id;
        let record = self.decidable_request(principal, approval_id).await?;
        let approve = choice == ApprovalChoice::Approve;
        let pin = match remember {
            Remember::Always => self.pin_for_remembering(&record).await?,
            Remember::Once => None,
        };
        let resolved = inner
            .store
            .resolve_approval_request(
                workspace_id,
                approval_id,
                ApprovalResolution {
                    status: if approve {
                        ApprovalStatus::Approved
                    } else {
                        ApprovalStatus::Denied
                    },
                    remember: Some(remember.as_str().to_owned()),
                    decided_by: principal.user_id.as_str().to_owned(),
                    reason: None,
                },
            )
            .await?;
        let remembered = match &pin {
            Some(pin) => {
                let policy = if approve {
                    ApprovalPolicy::AlwaysAllow
                } else {
                    ApprovalPolicy::AlwaysDeny
                };
                remember_for_user(inner, workspace_id, &record.owner_user_id, pin, policy).await?;
                true
            }
            None => false,
        };
        inner.waiting.deliver_decision(
            approval_id,
            PersonDecision {
                approve,
                decided_by: principal.user_id.clone(),
            },
        );
        let audited = AuditedDecision {
            record: &record,
            status: resolved.status.as_str(),
            remember,
            remembered,
            pin_hash: pin.as_ref().map(|pin| pin.pin_hash.clone()),
        };
        self.audit_decision(principal, audited).await;
        Ok(DecisionOutcome {
            request: resolved,
            remembered,
        })
    }

    /// The request, if `principal` may decide it (its owner or an admin) and it still waits.
    async fn decidable_request(
        &self,
        principal: &Principal,
        approval_id: &ApprovalId,
    ) -> ApprovalResult<ApprovalRequestRecord> {
        let record = self
            .inner
            .store
            .get_approval_request(&principal.workspace_id, approval_id)
            .await?;
        authorize_owner_or_admin(
            principal,
            &record.owner_user_id,
            "decide this approval request",
        )?;
        if record.status != ApprovalStatus::Pending {
            return Err(ApprovalError::AlreadySettled(format!(
                "the approval request is already {}",
                record.status
            )));
        }
        if record.expires_at <= Utc::now() {
            return Err(ApprovalError::AlreadySettled(format!(
                "the approval request expired at {}",
                record.expires_at.to_rfc3339()
            )));
        }
        Ok(record)
    }

    /// `approval.approved` / `approval.denied` in the audit log.
    async fn audit_decision(&self, principal: &Principal, decision: AuditedDecision<'_>) {
        let record = decision.record;
        let status = decision.status;
        self.inner
            .audit
            .record(
                &principal.workspace_id,
                NewAuditEvent {
                    actor: principal.user_id.as_str().to_owned(),
                    action: format!("approval.{status}"),
                    target: Some(record.id.as_str().to_owned()),
                    user_id: Some(record.owner_user_id.clone()),
                    conversation_id: Some(record.conversation_id.clone()),
                    server_name: Some(record.server_name.clone()),
                    tool_name: Some(record.tool_name.clone()),
                    status: Some(status.to_owned()),
                    duration_ms: None,
                    details: json!({
                        "approval_id": record.id,
                        "tool_call_id": record.tool_call_id,
                        "decision": status,
                        "decided_by": principal.user_id,
                        "remember": decision.remember.as_str(),
                        "remembered": decision.remembered,
                        "pin_hash": decision.pin_hash,
                    }),
                },
            )
            .await;
    }

    /// What "always" pins: what the person was shown (kept by the waiting call), else the
    /// tool as the store has it now (a request waiting in another process).
    async fn pin_for_remembering(
        &self,
        record: &ApprovalRequestRecord,
    ) -> ApprovalResult<Option<PinContext>> {
        if let Some(pin) = self.inner.waiting.approval_pin(&record.id) {
            return Ok(Some(pin));
        }
        let Some(server_id) = &record.server_id else {
            return Ok(None);
        };
        self.current_pin(&record.workspace_id, server_id, &record.tool_name)
            .await
    }

    /// Requests of the caller's conversations (see [`ApprovalListing`]), oldest first.
    pub async fn list_approvals(
        &self,
        principal: &Principal,
        listing: ApprovalListing,
    ) -> ApprovalResult<Vec<ApprovalRequestRecord>> {
        let store = &self.inner.store;
        let workspace_id = &principal.workspace_id;
        if listing.all_users && !principal.is_admin() {
            return Err(ApprovalError::Forbidden(
                "only an admin may list every user's approval requests".to_owned(),
            ));
        }
        if let Some(conversation_id) = &listing.conversation_id {
            let conversation = store
                .get_conversation(workspace_id, conversation_id)
                .await?;
            if conversation.owner_user_id != principal.user_id && !principal.is_admin() {
                // Someone else's conversation is not even acknowledged.
                return Err(ApprovalError::NotFound("conversation"));
            }
        }
        let owner = (!listing.all_users && listing.conversation_id.is_none())
            .then(|| principal.user_id.clone());
        Ok(store
            .list_approval_requests(
                workspace_id,
                ApprovalRequestFilter {
                    owner_user_id: owner,
                    conversation_id: listing.conversation_id,
                    status: (!listing.include_settled).then_some(ApprovalStatus::Pending),
                    limit: switchboard_store::approval_requests::MAX_APPROVAL_PAGE,
                },
            )
            .await?)
    }
}
