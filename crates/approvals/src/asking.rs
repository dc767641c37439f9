//! Asking a person: record the approval request (so a reload shows it), emit
//! `approval_required` into the answer's stream, then wait for the first of: a decision
//! (delivered by [`crate::decisions`]), the calling client's user's answer (a gateway client
//! that declared elicitation, [`crate::asking_client`]), the deadline (→ expired, denied), the end of the answer
//! (→ cancelled, denied), or a decision recorded by another replica — looked for in the store
//! when that replica's notice arrives ([`crate::replicas`], PostgreSQL) and every
//! `approval.decision_poll_ms` (the fallback: notices can be lost). Whatever happens is
//! recorded once (compare-and-set in the store), announced with `approval_resolved`, counted,
//! and audited when nobody decided.

use crate::asking_client::{ClientDecision, audit_client_decision, client_decision};
use crate::metrics::{self, ApprovalOutcome};
use crate::sanitize::sanitize_untrusted_text;
use crate::service::ApprovalsInner;
use crate::waiting::{PersonDecision, PinContext, Waiter};
use chrono::Utc;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchboard_chat::{
    ApprovalRequiredEvent, ApprovalResolvedEvent, ChatEvent, EventSink, GateDecision, GateRequest,
    GateTarget,
};
use switchboard_core::ApprovalId;
use switchboard_store::{
    ApprovalRequestRecord, ApprovalResolution, ApprovalStatus, NewApprovalRequest, NewAuditEvent,
    StoreError,
};

/// How long a timed-out wait listens for a decision that won the race in the store.
pub(crate) const RACE_GRACE: Duration = Duration::from_secs(1);

/// How the wait ended, as recorded.
struct Outcome {
    status: ApprovalStatus,
    decided_by: String,
    /// Set when the calling client's user answered (through elicitation).
    client: Option<ClientDecision>,
}

/// A wait that ended without a person deciding in Switchboard: what to record.
struct Ending {
    status: ApprovalStatus,
    decided_by: String,
    client: Option<ClientDecision>,
}

impl Ending {
    fn system(status: ApprovalStatus, decided_by: &str) -> Self {
        Self {
            status,
            decided_by: decided_by.to_owned(),
            client: None,
        }
    }

    fn resolution(&self) -> ApprovalResolution {
        ApprovalResolution {
            status: self.status,
            remember: self.client.as_ref().map(|_| "once".to_owned()),
            decided_by: self.decided_by.clone(),
            reason: self.client.as_ref().map(ClientDecision::recorded_reason),
        }
    }

    fn into_outcome(self) -> Outcome {
        Outcome {
            status: self.status,
            decided_by: self.decided_by,
            client: self.client,
        }
    }
}

/// Steps: record the request (waiter first), announce it, wait, announce the outcome, then
/// count, audit and turn it into the gate's decision.
pub(crate) async fn ask_person(
    inner: &ApprovalsInner,
    request: &GateRequest,
    events: &EventSink,
    diff: Option<Value>,
    pin: Option<PinContext>,
) -> GateDecision {
    let timeout = inner.config.approval_timeout();
    let approval_id = ApprovalId::generate();
    let description = sanitize_untrusted_text(
        &description_of(&request.tool),
        inner.config.description_max_chars,
    );
    let new_request = new_approval_request(
        request,
        approval_id.clone(),
        description.clone(),
        diff.clone(),
        timeout,
    );
    // The waiter exists before anyone can see the request, so no decision can miss it.
    let waiter = inner.waiting.wait_for_approval(approval_id.clone(), pin);
    let record = match inner
        .store
        .create_approval_request(&request.principal.workspace_id, new_request)
        .await
    {
        Ok(record) => record,
        Err(error) => {
            inner.waiting.stop_waiting_for_approval(&approval_id);
            tracing::error!(%error, "could not record an approval request; denying the call");
            return GateDecision::Deny {
                reason: format!("the approval request could not be recorded: {error}"),
                decided_by: "approval:unrecorded".to_owned(),
            };
        }
    };
    metrics::approval_requested(request.target.metric_label());
    audit_request_event(inner, request, &record, "requested", None).await;
    events.emit(ChatEvent::ApprovalRequired(ApprovalRequiredEvent {
        approval_id: approval_id.clone(),
        tool_call_id: request.tool_call_id.clone(),
        call_id: request.llm_call_id.clone(),
        server: request.target.server_name().to_owned(),
        tool: request.tool.name.clone(),
        arguments: request.arguments.clone(),
        description: description.clone(),
        expires_at: record.expires_at,
        details: approval_details(&record, diff),
    }));
    let waited_since = Instant::now();
    let client = client_decision(request, &description, timeout);
    let outcome = wait_for_outcome(inner, &record, waiter, timeout, request, client).await;
    inner.waiting.stop_waiting_for_approval(&approval_id);
    events.emit(ChatEvent::ApprovalResolved(ApprovalResolvedEvent {
        approval_id,
        tool_call_id: request.tool_call_id.clone(),
        decision: outcome.status.as_str().to_owned(),
        decided_by: outcome.decided_by.clone(),
    }));
    let finished = FinishedWait {
        record: &record,
        timeout,
        waited: waited_since.elapsed(),
    };
    finished.into_decision(inner, request, outcome).await
}

/// The request to record, in state `pending`, expiring `timeout` from now.
fn new_approval_request(
    request: &GateRequest,
    approval_id: ApprovalId,
    description: String,
    diff: Option<Value>,
    timeout: Duration,
) -> NewApprovalRequest {
    NewApprovalRequest {
        id: approval_id,
        conversation_id: request.conversation_id.clone(),
        owner_user_id: request.conversation_owner.clone(),
        tool_call_id: request.tool_call_id.clone(),
        llm_call_id: request.llm_call_id.clone(),
        server_id: match &request.target {
            GateTarget::Registered { server_id, .. } => Some(server_id.clone()),
            GateTarget::Ephemeral { .. } => None,
        },
        server_name: request.target.server_name().to_owned(),
        tool_name: request.tool.name.clone(),
        arguments: request.arguments.clone(),
        description,
        diff,
        expires_at: Utc::now() + chrono::Duration::from_std(timeout).unwrap_or_default(),
    }
}

/// A wait that has ended, before it is counted and audited.
struct FinishedWait<'a> {
    record: &'a ApprovalRequestRecord,
    timeout: Duration,
    waited: Duration,
}

impl FinishedWait<'_> {
    /// Counts the outcome, audits the ones nobody decided (expired, cancelled), and answers
    /// the gate: approved allows, anything else denies with a reason for the model.
    async fn into_decision(
        self,
        inner: &ApprovalsInner,
        request: &GateRequest,
        outcome: Outcome,
    ) -> GateDecision {
        let (metric, reason) = match outcome.status {
            ApprovalStatus::Approved => (ApprovalOutcome::Approved, None),
            ApprovalStatus::Expired => (
                ApprovalOutcome::TimedOut,
                Some(format!(
                    "nobody approved the call within {}, so it was not run",
                    human_duration(self.timeout)
                )),
            ),
            ApprovalStatus::Cancelled => (
                ApprovalOutcome::Cancelled,
                Some("the answer was stopped before the call was approved".to_owned()),
            ),
            ApprovalStatus::Denied | ApprovalStatus::Pending => (
                ApprovalOutcome::Denied,
                Some(
                    outcome
                        .client
                        .as_ref()
                        .and_then(ClientDecision::refusal)
                        .unwrap_or_else(|| "the user denied this call".to_owned()),
                ),
            ),
        };
        metrics::approval_finished(request.target.metric_label(), metric, self.waited);
        if let Some(decision) = &outcome.client {
            audit_client_decision(inner, request, self.record, decision).await;
        }
        if matches!(
            outcome.status,
            ApprovalStatus::Expired | ApprovalStatus::Cancelled
        ) {
            audit_request_event(
                inner,
                request,
                self.record,
                outcome.status.as_str(),
                reason.as_deref(),
            )
            .await;
        }
        match reason {
            None => GateDecision::Allow {
                decided_by: outcome.decided_by,
            },
            Some(reason) => GateDecision::Deny {
                reason,
                decided_by: outcome.decided_by,
            },
        }
    }
}

/// `60 s`, `500 ms`.
fn human_duration(duration: Duration) -> String {
    if duration.as_millis().is_multiple_of(1000) {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

/// The text shown for approval: the description, else the title, else a plain statement.
fn description_of(tool: &switchboard_core::ToolDefinition) -> String {
    if !tool.description.trim().is_empty() {
        tool.description.clone()
    } else if let Some(title) = tool
        .title
        .as_deref()
        .filter(|title| !title.trim().is_empty())
    {
        title.to_owned()
    } else {
        "(the server gives no description for this tool)".to_owned()
    }
}

/// The event's extra fields: the diff (when a pinned definition changed) and the context a
/// client needs to act on it.
fn approval_details(record: &ApprovalRequestRecord, diff: Option<Value>) -> Value {
    let mut details = json!({
        "conversation_id": record.conversation_id,
        "created_at": record.created_at,
    });
    if let Some(diff) = diff {
        details["diff"] = diff;
    }
    details
}

/// Waits for the first of: a person's decision, the calling client's (`client`, see
/// [`crate::asking_client`]), the end of the call, the deadline, a decision recorded elsewhere.
async fn wait_for_outcome(
    inner: &ApprovalsInner,
    record: &ApprovalRequestRecord,
    waiter: Waiter<PersonDecision>,
    timeout: Duration,
    request: &GateRequest,
    client: impl Future<Output = ClientDecision>,
) -> Outcome {
    let cancellation = &request.cancellation;
    let client = std::pin::pin!(client);
    let mut client = client;
    let Waiter {
        delivered: mut receiver,
        look_now,
    } = waiter;
    let deadline = tokio::time::Instant::now() + timeout;
    let poll_interval = inner.config.decision_poll_interval();
    let mut poll =
        tokio::time::interval_at(tokio::time::Instant::now() + poll_interval, poll_interval);
    let ending = loop {
        tokio::select! {
            biased;
            delivered = &mut receiver => match delivered {
                Ok(decision) => return person_outcome(decision),
                Err(_) => break None,
            },
            _ = cancellation.cancelled() => break Some(Ending::system(ApprovalStatus::Cancelled, "cancelled")),
            _ = tokio::time::sleep_until(deadline) => break Some(Ending::system(ApprovalStatus::Expired, "timeout")),
            decision = &mut client => break Some(Ending {
                status: decision.status(),
                decided_by: request.principal.user_id.as_str().to_owned(),
                client: Some(decision),
            }),
            _ = look_now.notified() => {
                if let Some(outcome) = decided_elsewhere(inner, record).await {
                    return outcome;
                }
            }
            _ = poll.tick() => {
                if let Some(outcome) = decided_elsewhere(inner, record).await {
                    return outcome;
                }
            }
        }
    };
    if let Some(ending) = ending
        && let Some(outcome) = record_ending(inner, record, ending, &mut receiver).await
    {
        return outcome;
    }
    match inner
        .store
        .get_approval_request(&record.workspace_id, &record.id)
        .await
    {
        Ok(current) if current.status != ApprovalStatus::Pending => recorded_outcome(&current),
        _ => Outcome {
            status: ApprovalStatus::Denied,
            decided_by: "approval:lost".to_owned(),
            client: None,
        },
    }
}

/// Records a wait that ended without a person in Switchboard (deadline, end of the answer,
/// the calling client's answer). `None` when a decision won the race in the store but did not
/// arrive within [`RACE_GRACE`]: the caller reads what was recorded.
async fn record_ending(
    inner: &ApprovalsInner,
    record: &ApprovalRequestRecord,
    ending: Ending,
    receiver: &mut tokio::sync::oneshot::Receiver<PersonDecision>,
) -> Option<Outcome> {
    match inner
        .store
        .resolve_approval_request(&record.workspace_id, &record.id, ending.resolution())
        .await
    {
        Ok(_) => Some(ending.into_outcome()),
        // A decision won the race: it is on its way (or recorded by another process).
        Err(StoreError::Conflict(_)) => match tokio::time::timeout(RACE_GRACE, receiver).await {
            Ok(Ok(decision)) => Some(person_outcome(decision)),
            _ => None,
        },
        Err(error) => {
            tracing::error!(%error, approval_id = %record.id, "could not record the end of an approval request");
            Some(ending.into_outcome())
        }
    }
}

/// The recorded outcome, once the request is no longer pending in the store.
async fn decided_elsewhere(
    inner: &ApprovalsInner,
    record: &ApprovalRequestRecord,
) -> Option<Outcome> {
    match inner
        .store
        .get_approval_request(&record.workspace_id, &record.id)
        .await
    {
        Ok(current) if current.status != ApprovalStatus::Pending => {
            Some(recorded_outcome(&current))
        }
        Ok(_) => None,
        Err(error) => {
            tracing::warn!(%error, approval_id = %record.id, "could not look for a decision in the store; will look again");
            None
        }
    }
}

fn person_outcome(decision: PersonDecision) -> Outcome {
    Outcome {
        status: if decision.approve {
            ApprovalStatus::Approved
        } else {
            ApprovalStatus::Denied
        },
        decided_by: decision.decided_by.into_string(),
        client: None,
    }
}

fn recorded_outcome(record: &ApprovalRequestRecord) -> Outcome {
    Outcome {
        status: record.status,
        decided_by: record
            .decided_by
            .clone()
            .unwrap_or_else(|| "unknown".to_owned()),
        client: None,
    }
}

/// `approval.requested`, `approval.expired`, `approval.cancelled` (people's decisions are
/// audited where they are made, with who made them).
async fn audit_request_event(
    inner: &ApprovalsInner,
    request: &GateRequest,
    record: &ApprovalRequestRecord,
    what: &str,
    reason: Option<&str>,
) {
    inner
        .audit
        .record(
            &request.principal.workspace_id,
            NewAuditEvent {
                actor: if what == "requested" {
                    request.principal.user_id.as_str().to_owned()
                } else {
                    "system".to_owned()
                },
                action: format!("approval.{what}"),
                target: Some(record.id.as_str().to_owned()),
                user_id: Some(request.conversation_owner.clone()),
                conversation_id: Some(request.conversation_id.clone()),
                server_name: Some(record.server_name.clone()),
                tool_name: Some(record.tool_name.clone()),
                status: Some(what.to_owned()),
                duration_ms: None,
                details: json!({
                    "approval_id": record.id,
                    "tool_call_id": record.tool_call_id,
                    "arguments": record.arguments,
                    "definition_changed": record.diff.is_some(),
                    "expires_at": record.expires_at,
                    "reason": reason,
                }),
            },
        )
        .await;
}
