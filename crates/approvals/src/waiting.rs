//! What this process is waiting for, in memory: the approval requests and elicitation forms a
//! paused call waits on (a decision arriving over HTTP is handed to the waiting call through a
//! one-shot channel), and the calls currently running upstream (so an upstream's
//! `elicitation/create` reaches the conversation whose call caused it, and never another).
//!
//! The store is the record (who decided, when); this is only the wake-up path. A decision
//! for a request with no waiter here (another replica, a restart) is still recorded, and the
//! waiting side looks in the store when told to ([`WaitingRoom::look_now`]: another replica's
//! notice, see [`crate::replicas`]) and at every poll, so nothing depends on this map alone.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use switchboard_chat::EventSink;
use switchboard_core::{
    ApprovalId, ConversationId, ElicitationId, ServerId, ToolCallId, ToolDefinition, UserId,
    WorkspaceId,
};
use switchboard_mcp_client::ElicitationResponse;
use switchboard_store::DecisionNotice;
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

/// A person's decision on an approval request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PersonDecision {
    pub approve: bool,
    pub decided_by: UserId,
}

/// What an "always" decision pins: the definition and instructions the person was shown.
#[derive(Clone, Debug)]
pub(crate) struct PinContext {
    pub server_id: ServerId,
    pub definition: ToolDefinition,
    pub instructions: Option<String>,
    pub pin_hash: String,
}

struct WaitingApproval {
    sender: oneshot::Sender<PersonDecision>,
    pin: Option<PinContext>,
    look_now: Arc<Notify>,
}

struct WaitingElicitation {
    sender: oneshot::Sender<ElicitationResponse>,
    look_now: Arc<Notify>,
}

/// A form taken out of the room by the answer being recorded for it.
pub(crate) struct ClaimedElicitation {
    id: ElicitationId,
    waiting: WaitingElicitation,
}

impl ClaimedElicitation {
    /// Hands the recorded answer to the waiting call.
    pub fn deliver(self, answer: ElicitationResponse) -> bool {
        self.waiting.sender.send(answer).is_ok()
    }
}

/// What a waiting call holds: the decision delivered in this process, and the signal to look
/// in the store now (a notice from another replica; it keeps a permit, so a signal given
/// between two looks is not lost).
pub(crate) struct Waiter<T> {
    pub delivered: oneshot::Receiver<T>,
    pub look_now: Arc<Notify>,
}

/// A call that is running upstream right now.
#[derive(Clone, Debug)]
pub(crate) struct ActiveCall {
    pub workspace_id: WorkspaceId,
    pub conversation_id: ConversationId,
    pub owner: UserId,
    pub tool_call_id: ToolCallId,
    pub server_name: String,
    pub events: EventSink,
    pub cancellation: CancellationToken,
}

#[derive(Default)]
pub(crate) struct WaitingRoom {
    approvals: Mutex<HashMap<ApprovalId, WaitingApproval>>,
    elicitations: Mutex<HashMap<ElicitationId, WaitingElicitation>>,
    active_calls: Mutex<HashMap<ToolCallId, ActiveCall>>,
    /// Pin drifts already reported: (server, tool, rule, current hash).
    reported_drifts: Mutex<HashSet<(ServerId, String, String, String)>>,
}

impl std::fmt::Debug for WaitingRoom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitingRoom")
            .field("approvals", &len(&self.approvals))
            .field("elicitations", &len(&self.elicitations))
            .field("active_calls", &len(&self.active_calls))
            .finish()
    }
}

fn len<K, V>(map: &Mutex<HashMap<K, V>>) -> usize {
    map.lock().map(|map| map.len()).unwrap_or(0)
}

/// Why an elicitation could not be routed to a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RouteRefusal {
    /// No call to that server is running.
    NoCall,
    /// Calls of several conversations are running on that server: answering for one of them
    /// could show another person's form.
    Ambiguous,
}

impl WaitingRoom {
    pub fn wait_for_approval(
        &self,
        approval_id: ApprovalId,
        pin: Option<PinContext>,
    ) -> Waiter<PersonDecision> {
        let (sender, delivered) = oneshot::channel();
        let look_now = Arc::new(Notify::new());
        if let Ok(mut approvals) = self.approvals.lock() {
            approvals.insert(
                approval_id,
                WaitingApproval {
                    sender,
                    pin,
                    look_now: look_now.clone(),
                },
            );
        }
        Waiter {
            delivered,
            look_now,
        }
    }

    /// Tells the call waiting for `notice`'s request, if it waits here, to look in the store
    /// now; false when none waits here.
    pub fn look_now(&self, notice: &DecisionNotice) -> bool {
        let look_now =
            match notice {
                DecisionNotice::Approval(id) => self.approvals.lock().ok().and_then(|approvals| {
                    approvals.get(id).map(|waiting| waiting.look_now.clone())
                }),
                DecisionNotice::Elicitation(id) => {
                    self.elicitations.lock().ok().and_then(|elicitations| {
                        elicitations.get(id).map(|waiting| waiting.look_now.clone())
                    })
                }
            };
        look_now.map(|signal| signal.notify_one()).is_some()
    }

    /// Tells every waiting call to look in the store now (notices may have been missed).
    pub fn look_now_all(&self) {
        if let Ok(approvals) = self.approvals.lock() {
            approvals
                .values()
                .for_each(|waiting| waiting.look_now.notify_one());
        }
        if let Ok(elicitations) = self.elicitations.lock() {
            elicitations
                .values()
                .for_each(|waiting| waiting.look_now.notify_one());
        }
    }

    /// The pin of a waiting request (for an "always" decision).
    pub fn approval_pin(&self, approval_id: &ApprovalId) -> Option<PinContext> {
        self.approvals
            .lock()
            .ok()?
            .get(approval_id)
            .and_then(|waiting| waiting.pin.clone())
    }

    /// Wakes the call waiting on `approval_id`; false when none waits here.
    pub fn deliver_decision(&self, approval_id: &ApprovalId, decision: PersonDecision) -> bool {
        let waiting = self
            .approvals
            .lock()
            .ok()
            .and_then(|mut approvals| approvals.remove(approval_id));
        match waiting {
            Some(waiting) => waiting.sender.send(decision).is_ok(),
            None => false,
        }
    }

    pub fn stop_waiting_for_approval(&self, approval_id: &ApprovalId) {
        if let Ok(mut approvals) = self.approvals.lock() {
            approvals.remove(approval_id);
        }
    }

    pub fn wait_for_elicitation(
        &self,
        elicitation_id: ElicitationId,
    ) -> Waiter<ElicitationResponse> {
        let (sender, delivered) = oneshot::channel();
        let look_now = Arc::new(Notify::new());
        if let Ok(mut elicitations) = self.elicitations.lock() {
            elicitations.insert(
                elicitation_id,
                WaitingElicitation {
                    sender,
                    look_now: look_now.clone(),
                },
            );
        }
        Waiter {
            delivered,
            look_now,
        }
    }

    /// Takes the waiting form out before its answer is recorded here, so the waiting call,
    /// seeing the answer in the store first, knows the content is on its way
    /// ([`WaitingRoom::is_waiting_for_elicitation`] is false); `None` when none waits here.
    pub fn claim_elicitation(&self, elicitation_id: &ElicitationId) -> Option<ClaimedElicitation> {
        self.elicitations
            .lock()
            .ok()
            .and_then(|mut elicitations| elicitations.remove(elicitation_id))
            .map(|waiting| ClaimedElicitation {
                id: elicitation_id.clone(),
                waiting,
            })
    }

    /// Puts a claimed form back (its answer could not be recorded).
    pub fn unclaim_elicitation(&self, claimed: ClaimedElicitation) {
        if let Ok(mut elicitations) = self.elicitations.lock() {
            elicitations.insert(claimed.id, claimed.waiting);
        }
    }

    /// True while the form waits here and nobody in this process is answering it.
    pub fn is_waiting_for_elicitation(&self, elicitation_id: &ElicitationId) -> bool {
        self.elicitations
            .lock()
            .map(|elicitations| elicitations.contains_key(elicitation_id))
            .unwrap_or(false)
    }

    pub fn stop_waiting_for_elicitation(&self, elicitation_id: &ElicitationId) {
        if let Ok(mut elicitations) = self.elicitations.lock() {
            elicitations.remove(elicitation_id);
        }
    }

    pub fn call_started(&self, call: ActiveCall) {
        if let Ok(mut calls) = self.active_calls.lock() {
            calls.insert(call.tool_call_id.clone(), call);
        }
    }

    pub fn call_ended(&self, tool_call_id: &ToolCallId) {
        if let Ok(mut calls) = self.active_calls.lock() {
            calls.remove(tool_call_id);
        }
    }

    /// True the first time this process sees `tool` of `server` drift from `rule`'s pin to
    /// `current_hash` (so a drift is audited once, not on every sync).
    pub fn first_report_of_drift(
        &self,
        server_id: &ServerId,
        tool_name: &str,
        rule: &str,
        current_hash: &str,
    ) -> bool {
        self.reported_drifts
            .lock()
            .map(|mut reported| {
                reported.insert((
                    server_id.clone(),
                    tool_name.to_owned(),
                    rule.to_owned(),
                    current_hash.to_owned(),
                ))
            })
            .unwrap_or(true)
    }

    /// The running call an elicitation from `server_name` belongs to: among the calls to that
    /// server (of `conversation_id` when the MCP client knows it), those of exactly one
    /// conversation. The earliest such call is named (parallel calls of one conversation to
    /// one server cannot be told apart, but they show the same person the form).
    pub fn route_elicitation(
        &self,
        server_name: &str,
        conversation_id: Option<&ConversationId>,
    ) -> Result<ActiveCall, RouteRefusal> {
        let calls = self.active_calls.lock().map_err(|_| RouteRefusal::NoCall)?;
        let mut candidates: Vec<&ActiveCall> = calls
            .values()
            .filter(|call| call.server_name == server_name)
            .filter(|call| conversation_id.is_none_or(|id| &call.conversation_id == id))
            .collect();
        candidates.sort_by(|left, right| left.tool_call_id.cmp(&right.tool_call_id));
        let first = candidates.first().ok_or(RouteRefusal::NoCall)?;
        if candidates.iter().any(|call| {
            call.conversation_id != first.conversation_id || call.workspace_id != first.workspace_id
        }) {
            return Err(RouteRefusal::Ambiguous);
        }
        Ok((*first).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(conversation: &str, server: &str, id: &str) -> ActiveCall {
        ActiveCall {
            workspace_id: WorkspaceId::from_string("w"),
            conversation_id: ConversationId::from_string(conversation),
            owner: UserId::from_string("u"),
            tool_call_id: ToolCallId::from_string(id),
            server_name: server.into(),
            events: EventSink::discard(),
            cancellation: CancellationToken::new(),
        }
    }

    #[test]
    fn elicitations_route_only_to_one_conversation() {
        let room = WaitingRoom::default();
        assert_eq!(
            room.route_elicitation("srv", None).unwrap_err(),
            RouteRefusal::NoCall
        );
        room.call_started(call("c1", "srv", "t2"));
        room.call_started(call("c1", "srv", "t1"));
        room.call_started(call("c2", "other", "t3"));
        let routed = room.route_elicitation("srv", None).unwrap();
        assert_eq!(routed.tool_call_id.as_str(), "t1");
        room.call_started(call("c9", "srv", "t4"));
        assert_eq!(
            room.route_elicitation("srv", None).unwrap_err(),
            RouteRefusal::Ambiguous
        );
        // With the conversation known, the other conversation's call does not matter.
        let known = ConversationId::from_string("c9");
        assert_eq!(
            room.route_elicitation("srv", Some(&known))
                .unwrap()
                .tool_call_id
                .as_str(),
            "t4"
        );
        room.call_ended(&ToolCallId::from_string("t4"));
        assert!(room.route_elicitation("srv", None).is_ok());
    }

    #[test]
    fn decisions_reach_the_waiting_call_once() {
        let room = WaitingRoom::default();
        let id = ApprovalId::from_string("a");
        let mut waiter = room.wait_for_approval(id.clone(), None);
        let decision = PersonDecision {
            approve: true,
            decided_by: UserId::from_string("u"),
        };
        assert!(room.deliver_decision(&id, decision.clone()));
        assert_eq!(waiter.delivered.try_recv().unwrap(), decision);
        assert!(!room.deliver_decision(&id, decision));
    }

    #[tokio::test]
    async fn notices_wake_only_the_call_waiting_for_that_request() {
        let room = WaitingRoom::default();
        let first = room.wait_for_approval(ApprovalId::from_string("a1"), None);
        let second = room.wait_for_approval(ApprovalId::from_string("a2"), None);
        let form = room.wait_for_elicitation(ElicitationId::from_string("e1"));
        let soon = std::time::Duration::from_millis(50);
        assert!(room.look_now(&DecisionNotice::Approval(ApprovalId::from_string("a2"))));
        assert!(!room.look_now(&DecisionNotice::Approval(ApprovalId::from_string("zz"))));
        assert!(
            !room.look_now(&DecisionNotice::Elicitation(ElicitationId::from_string(
                "a1"
            )))
        );
        // The signal waits for the call even when given before it looks.
        tokio::time::timeout(soon, second.look_now.notified())
            .await
            .expect("the notified call looks");
        assert!(
            tokio::time::timeout(soon, first.look_now.notified())
                .await
                .is_err()
        );
        assert!(
            tokio::time::timeout(soon, form.look_now.notified())
                .await
                .is_err()
        );
        room.look_now_all();
        tokio::time::timeout(soon, first.look_now.notified())
            .await
            .expect("after a reconnection every call looks");
        tokio::time::timeout(soon, form.look_now.notified())
            .await
            .expect("forms too");
    }
}
