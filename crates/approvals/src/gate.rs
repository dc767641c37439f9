//! [`InteractiveApprovalGate`]: the approvals module behind the chat engine's gate seam. Rules
//! decide what they can ([`crate::evaluation`]); otherwise the call pauses while its owner
//! decides ([`crate::asking`]). Allowed calls are registered as running (for elicitation
//! routing) until the chat reports them finished; each is audited by the row
//! [`ApprovalGate::audit_event`] gives, which the chat commits with the call's final state.

use crate::asking::ask_person;
use crate::evaluation::{Verdict, evaluate};
use crate::metrics;
use crate::service::Approvals;
use crate::waiting::ActiveCall;
use async_trait::async_trait;
use switchboard_chat::{ApprovalGate, CallReport, EventSink, GateDecision, GateRequest};
use switchboard_store::NewAuditEvent;

#[derive(Debug)]
pub struct InteractiveApprovalGate {
    approvals: Approvals,
}

/// The rules left the call to a person (see [`Verdict::Ask`]).
struct Asked {
    diff: Option<serde_json::Value>,
    pin: Option<Box<crate::waiting::PinContext>>,
}

impl InteractiveApprovalGate {
    pub fn new(approvals: Approvals) -> Self {
        Self { approvals }
    }

    /// What the rules decide (an unreadable rule denies), or that a person must.
    async fn rules_decision(&self, request: &GateRequest) -> Result<GateDecision, Asked> {
        match evaluate(&self.approvals.inner, request).await {
            Err(error) => {
                tracing::error!(%error, tool_call_id = %request.tool_call_id, "approval rules could not be read; denying the call");
                Ok(GateDecision::Deny {
                    reason: format!("the approval rules could not be read: {error}"),
                    decided_by: "policy:unreadable".to_owned(),
                })
            }
            Ok(Verdict::Allow { decided_by }) => {
                metrics::decided_by_rule(request.target.metric_label(), true);
                Ok(GateDecision::Allow { decided_by })
            }
            Ok(Verdict::Deny { decided_by, reason }) => {
                metrics::decided_by_rule(request.target.metric_label(), false);
                Ok(GateDecision::Deny { reason, decided_by })
            }
            Ok(Verdict::Ask { diff, pin }) => Err(Asked { diff, pin }),
        }
    }

    /// An allowed call is registered as running (for elicitation routing) until it finishes.
    fn register_if_allowed(
        &self,
        request: &GateRequest,
        events: &EventSink,
        decision: &GateDecision,
    ) {
        if matches!(decision, GateDecision::Allow { .. }) {
            self.approvals.inner.waiting.call_started(ActiveCall {
                workspace_id: request.principal.workspace_id.clone(),
                conversation_id: request.conversation_id.clone(),
                owner: request.conversation_owner.clone(),
                tool_call_id: request.tool_call_id.clone(),
                server_name: request.target.server_name().to_owned(),
                events: events.clone(),
                cancellation: request.cancellation.clone(),
            });
        }
    }
}

#[async_trait]
impl ApprovalGate for InteractiveApprovalGate {
    async fn review(&self, request: &GateRequest, events: &EventSink) -> GateDecision {
        let decision = match self.rules_decision(request).await {
            Ok(decision) => decision,
            Err(Asked { diff, pin }) => {
                ask_person(
                    &self.approvals.inner,
                    request,
                    events,
                    diff,
                    pin.map(|pin| *pin),
                )
                .await
            }
        };
        self.register_if_allowed(request, events, &decision);
        decision
    }

    async fn review_by_rules(&self, request: &GateRequest) -> Option<GateDecision> {
        let decision = self.rules_decision(request).await.ok()?;
        self.register_if_allowed(request, &EventSink::discard(), &decision);
        Some(decision)
    }

    /// Every reviewed call is audited; the chat commits the row with the call's final state.
    fn audit_event(&self, report: &CallReport) -> Option<NewAuditEvent> {
        Some(crate::audit::tool_call_event(report))
    }

    async fn call_finished(&self, report: &CallReport) {
        self.approvals
            .inner
            .waiting
            .call_ended(&report.request.tool_call_id);
    }
}
