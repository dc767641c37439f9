//! Asking the calling client instead of only Switchboard's UI: a gateway client that declared
//! MCP elicitation is put the approval question (`GateRequest::client_approver`) while the
//! approval request waits in the store as any other ([`crate::asking`]), so whichever answers
//! first — the client's user in the form, or a person in `GET /chat/approvals` and the web UI
//! — decides, once (compare-and-set in the store). A client that gives no usable answer (the
//! request failed, an unreadable form) leaves the decision to a person.
//!
//! A client's answer is recorded as its user's decision (`decided_by` is the token's user;
//! `reason` says it came through elicitation and from which client) and audited
//! `approval.approved` / `approval.denied` with `via: "elicitation"` and the client's name.

use crate::service::ApprovalsInner;
use serde::Serialize;
use std::time::Duration;
use switchboard_chat::GateRequest;
use switchboard_core::{ApprovalQuestion, ClientAnswer};
use switchboard_store::{ApprovalRequestRecord, ApprovalStatus, NewAuditEvent};

/// `details.via` of the audit entry of a client's answer.
pub(crate) const VIA_ELICITATION: &str = "elicitation";

/// What the client's user did with the form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FormAnswer {
    Approved,
    Denied,
    Declined,
    Cancelled,
}

impl FormAnswer {
    fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Denied => "denied",
            Self::Declined => "declined",
            Self::Cancelled => "cancelled",
        }
    }
}

/// A decision the client's user made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClientDecision {
    pub answer: FormAnswer,
    pub client_name: String,
}

impl ClientDecision {
    /// `Approved` or `Denied` (declining or dismissing the form refuses the call too).
    pub fn status(&self) -> ApprovalStatus {
        match self.answer {
            FormAnswer::Approved => ApprovalStatus::Approved,
            _ => ApprovalStatus::Denied,
        }
    }

    /// Recorded as the approval request's `reason`.
    pub fn recorded_reason(&self) -> String {
        format!(
            "answered in {} through MCP elicitation: {}",
            self.client_name,
            self.answer.as_str()
        )
    }

    /// Given to the client as the refused call's error; `None` when approved.
    pub fn refusal(&self) -> Option<String> {
        let client = &self.client_name;
        match self.answer {
            FormAnswer::Approved => None,
            FormAnswer::Denied => Some(format!("the user denied this call in {client}")),
            FormAnswer::Declined => Some(format!(
                "the user declined the approval request in {client}, so the call was not run"
            )),
            FormAnswer::Cancelled => Some(format!(
                "the user dismissed the approval request in {client}, so the call was not run"
            )),
        }
    }
}

/// The client's decision, once it made one; never resolves when there is no client to ask or
/// it gave no usable answer (a person decides then).
pub(crate) async fn client_decision(
    request: &GateRequest,
    description: &str,
    timeout: Duration,
) -> ClientDecision {
    let Some(approver) = &request.client_approver else {
        return std::future::pending().await;
    };
    let question = ApprovalQuestion {
        server: request.target.server_name().to_owned(),
        tool: request.tool.name.clone(),
        description: description.to_owned(),
        arguments: request.arguments.clone(),
        timeout,
    };
    let answer = match approver.ask(question).await {
        ClientAnswer::Approved => FormAnswer::Approved,
        ClientAnswer::Denied => FormAnswer::Denied,
        ClientAnswer::Declined => FormAnswer::Declined,
        ClientAnswer::Cancelled => FormAnswer::Cancelled,
        ClientAnswer::Unanswered(reason) => {
            tracing::warn!(%reason, tool_call_id = %request.tool_call_id, "the client gave no answer to the approval request; a person decides");
            return std::future::pending().await;
        }
    };
    ClientDecision {
        answer,
        client_name: request.origin.client_name().unwrap_or_default().to_owned(),
    }
}

/// `details` of the audit entry of a client's answer.
#[derive(Serialize)]
struct ClientDecisionDetails<'a> {
    approval_id: &'a str,
    tool_call_id: &'a str,
    decision: &'a str,
    decided_by: &'a str,
    answer: &'a str,
    via: &'static str,
    origin: &'static str,
    client_name: &'a str,
    remember: &'static str,
}

/// `approval.approved` / `approval.denied`, by the token's user, through elicitation.
pub(crate) async fn audit_client_decision(
    inner: &ApprovalsInner,
    request: &GateRequest,
    record: &ApprovalRequestRecord,
    decision: &ClientDecision,
) {
    let status = decision.status().as_str();
    let user = request.principal.user_id.as_str();
    let details = ClientDecisionDetails {
        approval_id: record.id.as_str(),
        tool_call_id: record.tool_call_id.as_str(),
        decision: status,
        decided_by: user,
        answer: decision.answer.as_str(),
        via: VIA_ELICITATION,
        origin: request.origin.as_str(),
        client_name: &decision.client_name,
        remember: "once",
    };
    let event = NewAuditEvent {
        actor: user.to_owned(),
        action: format!("approval.{status}"),
        target: Some(record.id.as_str().to_owned()),
        user_id: Some(request.conversation_owner.clone()),
        conversation_id: Some(request.conversation_id.clone()),
        server_name: Some(record.server_name.clone()),
        tool_name: Some(record.tool_name.clone()),
        status: Some(status.to_owned()),
        duration_ms: None,
        details: serde_json::to_value(details).unwrap_or_default(),
    };
    inner
        .audit
        .record(&request.principal.workspace_id, event)
        .await;
}
