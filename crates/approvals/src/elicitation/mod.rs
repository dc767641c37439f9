//! Elicitation: an upstream asks the user for input during a call (`elicitation/create`).
//!
//! [`ElicitationRouter`] is the MCP client's responder. It finds the running call the request
//! belongs to (the conversation the MCP client names — the call whose response stream carried
//! the request — else see [`crate::waiting::WaitingRoom::route_elicitation`]: never a guess
//! between two conversations, an ambiguous request is declined), records it, emits
//! `elicitation_required` into that call's answer stream, and waits for the owner's answer
//! ([`Approvals::answer_elicitation`]), the deadline (→ `cancel`) or the end of the call
//! (→ `cancel`). Answers are checked against the requested schema with its defaults applied
//! ([`form`]).
//!
//! An answer recorded by another replica is found as approvals' decisions are (its notice, or
//! the poll), but only its action: the content of an accepted form is never stored, so it
//! cannot cross replicas. A replica where the form does not wait refuses to accept it (409;
//! declining and cancelling work anywhere); should an acceptance be recorded elsewhere all the
//! same, the upstream is told `cancel` at once rather than after the deadline.

pub mod form;

use crate::asking::RACE_GRACE;
use crate::error::{ApprovalError, ApprovalResult};
use crate::metrics;
use crate::sanitize::sanitize_untrusted_text;
use crate::service::{Approvals, authorize_owner_or_admin};
use crate::waiting::{ActiveCall, RouteRefusal, Waiter};
use chrono::Utc;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_chat::{ChatEvent, ElicitationRequiredEvent, ElicitationResolvedEvent};
use switchboard_core::{ElicitationId, Principal};
use switchboard_mcp_client::{ElicitationRequest, ElicitationResponder, ElicitationResponse};
use switchboard_store::{
    BackendKind, ElicitationRequestRecord, ElicitationStatus, NewAuditEvent, NewElicitationRequest,
    StoreError,
};

/// Longest elicitation message shown, in characters.
const MAX_MESSAGE_CHARS: usize = 2000;

/// A person's answer to a form.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitationAnswer {
    /// The filled-in form (checked against the schema; defaults applied).
    Accept(Option<Value>),
    Decline,
    Cancel,
}

/// The MCP client's elicitation responder (see the module docs).
#[derive(Debug)]
pub struct ElicitationRouter {
    approvals: Approvals,
}

impl ElicitationRouter {
    pub fn new(approvals: Approvals) -> Self {
        Self { approvals }
    }
}

impl ElicitationResponder for ElicitationRouter {
    fn respond(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationResponse> {
        let approvals = self.approvals.clone();
        Box::pin(async move { approvals.ask_for_input(request).await })
    }
}

impl Approvals {
    /// Steps: find the call the form belongs to, record it (waiter first), show it, wait,
    /// record an expiry, announce the outcome.
    async fn ask_for_input(&self, request: ElicitationRequest) -> ElicitationResponse {
        let inner = &self.inner;
        let Some(call) = self.call_asking(&request) else {
            return ElicitationResponse::Decline;
        };
        let timeout = inner.config.elicitation_timeout();
        let elicitation_id = ElicitationId::generate();
        let message = sanitize_untrusted_text(&request.message, MAX_MESSAGE_CHARS);
        let waiter = inner.waiting.wait_for_elicitation(elicitation_id.clone());
        let new_request = NewElicitationRequest {
            id: elicitation_id.clone(),
            conversation_id: call.conversation_id.clone(),
            owner_user_id: call.owner.clone(),
            tool_call_id: Some(call.tool_call_id.clone()),
            server_name: request.server_name.clone(),
            message: message.clone(),
            requested_schema: request.requested_schema.clone(),
            expires_at: Utc::now() + chrono::Duration::from_std(timeout).unwrap_or_default(),
        };
        let record = match inner
            .store
            .create_elicitation_request(&call.workspace_id, new_request)
            .await
        {
            Ok(record) => record,
            Err(error) => {
                inner.waiting.stop_waiting_for_elicitation(&elicitation_id);
                tracing::error!(%error, "could not record an elicitation request; cancelling it");
                return ElicitationResponse::Cancel;
            }
        };
        metrics::elicitation_requested(&request.server_name);
        call.events
            .emit(ChatEvent::ElicitationRequired(ElicitationRequiredEvent {
                elicitation_id: elicitation_id.clone(),
                server: request.server_name.clone(),
                message,
                requested_schema: request.requested_schema.clone(),
                expires_at: record.expires_at,
            }));
        let answer = self.wait_for_answer(&record, waiter, timeout, &call).await;
        inner.waiting.stop_waiting_for_elicitation(&elicitation_id);
        let answer_missing = answer.is_none();
        let response = match answer {
            Some(answer) => answer,
            None => {
                self.record_expiry(&call, &record).await;
                ElicitationResponse::Cancel
            }
        };
        let action = response_action(&response);
        call.events
            .emit(ChatEvent::ElicitationResolved(ElicitationResolvedEvent {
                elicitation_id,
                action: action.to_owned(),
                expired: answer_missing,
            }));
        metrics::elicitation_finished(&request.server_name, action);
        response
    }

    /// The running call the form belongs to; `None` (the form is declined) when no call or
    /// calls of several conversations could have asked.
    fn call_asking(&self, request: &ElicitationRequest) -> Option<ActiveCall> {
        match self
            .inner
            .waiting
            .route_elicitation(&request.server_name, request.conversation_id.as_ref())
        {
            Ok(call) => Some(call),
            Err(refusal) => {
                let why = match refusal {
                    RouteRefusal::NoCall => "no call to this server is waiting for it",
                    RouteRefusal::Ambiguous => {
                        "calls of several conversations are running on this server, so it cannot say whose it is"
                    }
                };
                tracing::warn!(server = %request.server_name, why, "declined an elicitation request");
                None
            }
        }
    }

    /// Nobody answered: records it (unless an answer just won the race) and audits it.
    async fn record_expiry(&self, call: &ActiveCall, record: &ElicitationRequestRecord) {
        let responded_by = if call.cancellation.is_cancelled() {
            "cancelled"
        } else {
            "timeout"
        };
        match self
            .inner
            .store
            .resolve_elicitation_request(
                &call.workspace_id,
                &record.id,
                ElicitationStatus::Expired,
                responded_by,
            )
            .await
        {
            Err(StoreError::Conflict(_)) => {
                tracing::info!(elicitation_id = %record.id, "an elicitation answer arrived as it expired; cancelling");
            }
            Err(error) => {
                tracing::error!(%error, "could not record an expired elicitation")
            }
            Ok(_) => {
                self.audit_elicitation(call, record, "expired", "system")
                    .await;
            }
        }
    }

    /// The answer given in this process, or what another replica recorded (see the module
    /// docs); `None` when nobody answered before the deadline or the end of the call.
    async fn wait_for_answer(
        &self,
        record: &ElicitationRequestRecord,
        waiter: Waiter<ElicitationResponse>,
        timeout: Duration,
        call: &ActiveCall,
    ) -> Option<ElicitationResponse> {
        let Waiter {
            delivered: mut receiver,
            look_now,
        } = waiter;
        let deadline = tokio::time::Instant::now() + timeout;
        let poll_interval = self.inner.config.decision_poll_interval();
        let mut poll =
            tokio::time::interval_at(tokio::time::Instant::now() + poll_interval, poll_interval);
        loop {
            let settled = tokio::select! {
                biased;
                answer = &mut receiver => return answer.ok(),
                _ = tokio::time::sleep_until(deadline) => return None,
                _ = call.cancellation.cancelled() => return None,
                _ = look_now.notified() => self.settled_elsewhere(record).await,
                _ = poll.tick() => self.settled_elsewhere(record).await,
            };
            let Some(settled) = settled else { continue };
            if !self.inner.waiting.is_waiting_for_elicitation(&record.id) {
                // Answered in this process: the answer is on its way.
                if let Ok(Ok(answer)) = tokio::time::timeout(RACE_GRACE, &mut receiver).await {
                    return Some(answer);
                }
            }
            return Some(match settled.status {
                ElicitationStatus::Declined => ElicitationResponse::Decline,
                ElicitationStatus::Accepted => {
                    tracing::warn!(
                        elicitation_id = %record.id,
                        "a form was accepted on another replica; its content does not cross replicas, so the server is told cancel"
                    );
                    ElicitationResponse::Cancel
                }
                _ => ElicitationResponse::Cancel,
            });
        }
    }

    /// The request as recorded, once it is no longer pending.
    async fn settled_elsewhere(
        &self,
        record: &ElicitationRequestRecord,
    ) -> Option<ElicitationRequestRecord> {
        match self
            .inner
            .store
            .get_elicitation_request(&record.workspace_id, &record.id)
            .await
        {
            Ok(current) if current.status != ElicitationStatus::Pending => Some(current),
            Ok(_) => None,
            Err(error) => {
                tracing::warn!(%error, elicitation_id = %record.id, "could not look for an answer in the store; will look again");
                None
            }
        }
    }

    /// Records the owner's answer and hands it to the waiting upstream call. An accepted
    /// answer must match the requested schema (`InvalidInput` lists what is wrong; the request
    /// stays open for a corrected answer).
    pub async fn answer_elicitation(
        &self,
        principal: &Principal,
        elicitation_id: &ElicitationId,
        answer: ElicitationAnswer,
    ) -> ApprovalResult<ElicitationRequestRecord> {
        let inner = &self.inner;
        let workspace_id = &principal.workspace_id;
        let record = inner
            .store
            .get_elicitation_request(workspace_id, elicitation_id)
            .await?;
        authorize_owner_or_admin(principal, &record.owner_user_id, "answer this request")?;
        if record.status != ElicitationStatus::Pending {
            return Err(ApprovalError::AlreadySettled(format!(
                "the request is already {}",
                record.status
            )));
        }
        let (status, response) = checked_answer(&record, answer)?;
        let claimed = inner.waiting.claim_elicitation(elicitation_id);
        if claimed.is_none()
            && status == ElicitationStatus::Accepted
            && inner.store.backend_kind() == BackendKind::Postgres
        {
            // The form waits in another replica, and the content is never stored: recording
            // "accepted" here would tell its server `cancel` while the person sees success.
            return Err(ApprovalError::AlreadySettled(
                "this form waits on another Switchboard replica, and a form's content is never passed between replicas: send the answer again (it may reach that replica) or decline it".to_owned(),
            ));
        }
        let resolved = match inner
            .store
            .resolve_elicitation_request(
                workspace_id,
                elicitation_id,
                status,
                principal.user_id.as_str(),
            )
            .await
        {
            Ok(resolved) => resolved,
            Err(error) => {
                if let Some(claimed) = claimed {
                    inner.waiting.unclaim_elicitation(claimed);
                }
                return Err(error.into());
            }
        };
        if let Some(claimed) = claimed {
            claimed.deliver(response);
        }
        self.audit_answer(principal, &record, status).await;
        Ok(resolved)
    }

    /// `elicitation.accepted` / `.declined` / `.cancelled` in the audit log (never the content).
    async fn audit_answer(
        &self,
        principal: &Principal,
        record: &ElicitationRequestRecord,
        status: ElicitationStatus,
    ) {
        self.inner
            .audit
            .record(
                &principal.workspace_id,
                NewAuditEvent {
                    actor: principal.user_id.as_str().to_owned(),
                    action: format!("elicitation.{status}"),
                    target: Some(record.id.as_str().to_owned()),
                    user_id: Some(record.owner_user_id.clone()),
                    conversation_id: Some(record.conversation_id.clone()),
                    server_name: Some(record.server_name.clone()),
                    tool_name: None,
                    status: Some(status.as_str().to_owned()),
                    duration_ms: None,
                    details: json!({"elicitation_id": record.id, "tool_call_id": record.tool_call_id}),
                },
            )
            .await;
    }

    /// The caller's unanswered forms (every user's for an admin asking for all).
    pub async fn pending_elicitations(
        &self,
        principal: &Principal,
        all_users: bool,
    ) -> ApprovalResult<Vec<ElicitationRequestRecord>> {
        if all_users && !principal.is_admin() {
            return Err(ApprovalError::Forbidden(
                "only an admin may list every user's requests".to_owned(),
            ));
        }
        let owner = (!all_users).then_some(&principal.user_id);
        Ok(self
            .inner
            .store
            .list_pending_elicitation_requests(&principal.workspace_id, owner)
            .await?)
    }

    async fn audit_elicitation(
        &self,
        call: &ActiveCall,
        record: &ElicitationRequestRecord,
        what: &str,
        actor: &str,
    ) {
        self.inner
            .audit
            .record(
                &call.workspace_id,
                NewAuditEvent {
                    actor: actor.to_owned(),
                    action: format!("elicitation.{what}"),
                    target: Some(record.id.as_str().to_owned()),
                    user_id: Some(call.owner.clone()),
                    conversation_id: Some(call.conversation_id.clone()),
                    server_name: Some(record.server_name.clone()),
                    status: Some(what.to_owned()),
                    details: json!({"elicitation_id": record.id, "tool_call_id": call.tool_call_id}),
                    ..NewAuditEvent::default()
                },
            )
            .await;
    }
}

fn response_action(response: &ElicitationResponse) -> &'static str {
    match response {
        ElicitationResponse::Accept(_) => "accept",
        ElicitationResponse::Decline => "decline",
        ElicitationResponse::Cancel => "cancel",
    }
}

/// The status to record and the response for the upstream; an accepted form's content must
/// match the schema the upstream asked for.
fn checked_answer(
    record: &ElicitationRequestRecord,
    answer: ElicitationAnswer,
) -> ApprovalResult<(ElicitationStatus, ElicitationResponse)> {
    Ok(match answer {
        ElicitationAnswer::Accept(content) => {
            let checked = form::check_answer(&record.requested_schema, content.as_ref())
                .map_err(|problems| ApprovalError::invalid("content", problems.join("; ")))?;
            (
                ElicitationStatus::Accepted,
                ElicitationResponse::Accept(checked),
            )
        }
        ElicitationAnswer::Decline => (ElicitationStatus::Declined, ElicitationResponse::Decline),
        ElicitationAnswer::Cancel => (ElicitationStatus::Cancelled, ElicitationResponse::Cancel),
    })
}
