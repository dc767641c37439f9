//! What this process is waiting for, in memory: the approval requests and elicitation forms a
//! paused call waits on (a decision arriving over HTTP is handed to the waiting call through a
//! one-shot channel), and the calls currently running upstream (so an upstream's
//! `elicitation/create` reaches the conversation whose call caused it, and never another).
//!
//! The store is the record (who decided, when); this is only the wake-up path. A decision
//! for a request with no waiter here (another replica, a restart) is still recorded, and the
//! waiting side also polls the store, so nothing depends on this map alone.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use switchboard_chat::EventSink;
use switchboard_core::{
    ApprovalId, ConversationId, ElicitationId, ServerId, ToolCallId, ToolDefinition, UserId,
    WorkspaceId,
};
use switchboard_mcp_client::ElicitationResponse;
use tokio::sync::oneshot;
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
    elicitations: Mutex<HashMap<ElicitationId, oneshot::Sender<ElicitationResponse>>>,
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
    ) -> oneshot::Receiver<PersonDecision> {
        let (sender, receiver) = oneshot::channel();
        if let Ok(mut approvals) = self.approvals.lock() {
            approvals.insert(approval_id, WaitingApproval { sender, pin });
        }
        receiver
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
    ) -> oneshot::Receiver<ElicitationResponse> {
        let (sender, receiver) = oneshot::channel();
        if let Ok(mut elicitations) = self.elicitations.lock() {
            elicitations.insert(elicitation_id, sender);
        }
        receiver
    }

    pub fn deliver_elicitation_answer(
        &self,
        elicitation_id: &ElicitationId,
        answer: ElicitationResponse,
    ) -> bool {
        let sender = self
            .elicitations
            .lock()
            .ok()
            .and_then(|mut elicitations| elicitations.remove(elicitation_id));
        match sender {
            Some(sender) => sender.send(answer).is_ok(),
            None => false,
        }
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
        let mut receiver = room.wait_for_approval(id.clone(), None);
        let decision = PersonDecision {
            approve: true,
            decided_by: UserId::from_string("u"),
        };
        assert!(room.deliver_decision(&id, decision.clone()));
        assert_eq!(receiver.try_recv().unwrap(), decision);
        assert!(!room.deliver_decision(&id, decision));
    }
}
