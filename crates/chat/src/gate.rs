//! The approval gate: the one seam every tool call passes through before it reaches
//! `mcp-client` (an ARCHITECTURE invariant). The agent loop records the call as `proposed`,
//! asks the gate, records its decision (`approved` or `denied`), and only then dispatches.
//!
//! The approvals crate plugs in by implementing [`ApprovalGate`]: it looks up policies,
//! pauses the call while the user decides (emitting `approval_required` /
//! `approval_resolved` through the [`EventSink`]), and audits each call: it gives the row in
//! [`ApprovalGate::audit_event`], which the chat commits with the call's final state.
//!
//! The gate is mandatory: a chat engine built without one gets `NoGateConfigured`, which
//! refuses every call (fail closed), so forgetting to wire approvals can never let a call
//! through unreviewed.

use crate::events::ChatEvent;
use async_trait::async_trait;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{
    ApprovalQuestion, ClientAnswer, ConversationId, Principal, ServerId, ToolCallId, ToolCallState,
    ToolDefinition, UserId,
};
use switchboard_store::NewAuditEvent;
use tokio_util::sync::CancellationToken;

/// Decides whether a proposed tool call may run.
#[async_trait]
pub trait ApprovalGate: Send + Sync + fmt::Debug {
    /// Called once per call, in state `proposed`, before anything is sent upstream. May wait
    /// for a person; must return promptly (with a denial) once `request.cancellation` fires
    /// (the turn ended: client gone, shutdown). Parallel calls of one turn are reviewed
    /// concurrently.
    async fn review(&self, request: &GateRequest, events: &EventSink) -> GateDecision;

    /// What the rules alone decide, asking no one and waiting for nothing, called before the
    /// call's row exists (its id is already `request.tool_call_id`): `Some` is the decision, as
    /// [`ApprovalGate::review`] would have made it (an allowed call is then registered as
    /// running, exactly as after `review`), and `review` is not called; `None` (a person must
    /// decide, or the gate has no such fast path) means: record the call `proposed` and call
    /// `review`. A call the rules allow can so be recorded `dispatched` in its first commit.
    /// The default decides nothing.
    async fn review_by_rules(&self, _request: &GateRequest) -> Option<GateDecision> {
        None
    }

    /// The audit row of a reviewed call that reached its final state (completed, failed,
    /// denied, unknown): the chat writes it in the same commit as that state, so a final
    /// state is never stored without it. The default audits nothing.
    fn audit_event(&self, _report: &CallReport) -> Option<NewAuditEvent> {
        None
    }

    /// Called once per reviewed call after its final state (and its audit row) is stored.
    /// The default does nothing.
    async fn call_finished(&self, _report: &CallReport) {}
}

/// Everything known about a call when it is reviewed.
#[derive(Clone, Debug)]
pub struct GateRequest {
    /// Who asked (the token behind the chat request).
    pub principal: Principal,
    pub conversation_id: ConversationId,
    pub conversation_owner: UserId,
    /// Our record of the call: in state `proposed` during [`ApprovalGate::review`]; not yet
    /// written during [`ApprovalGate::review_by_rules`].
    pub tool_call_id: ToolCallId,
    /// The model's id for the call.
    pub llm_call_id: String,
    pub target: GateTarget,
    /// The tool as the server last described it (for pinning and the approval text).
    pub tool: ToolDefinition,
    /// Parsed arguments.
    pub arguments: Value,
    /// Fires when the turn ends; a waiting review must give up then.
    pub cancellation: CancellationToken,
    /// Where the call came from (a chat turn, or a client of the gateway); audited.
    pub origin: CallOrigin,
    /// The calling client, when it can have its own user approve the call (a gateway client
    /// that declared elicitation); `None`: a person decides through Switchboard's approvals.
    pub client_approver: Option<Arc<dyn ClientApprover>>,
}

/// A client that can ask its own user to approve a call it made (the gateway's client, over
/// MCP elicitation). Asked instead of showing the approval only in Switchboard's UI.
#[async_trait]
pub trait ClientApprover: Send + Sync + fmt::Debug {
    /// Asks, and waits for the answer (at most `question.timeout`).
    async fn ask(&self, question: ApprovalQuestion) -> ClientAnswer;
}

/// Where a tool call came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CallOrigin {
    /// A chat turn's model.
    #[default]
    Chat,
    /// An MCP client of the gateway (`/gateway/mcp`), by the name it gave in `clientInfo`.
    Gateway { client_name: String },
    /// An MCP App shown under a tool call, calling a tool of its own server; `app_of` is the
    /// call the app is shown with (its tool call id), audited as the client's name.
    App { app_of: String },
}

impl CallOrigin {
    /// `chat`, `gateway` or `app`, as audited.
    pub fn as_str(&self) -> &'static str {
        match self {
            CallOrigin::Chat => "chat",
            CallOrigin::Gateway { .. } => "gateway",
            CallOrigin::App { .. } => "app",
        }
    }

    /// The gateway client's name, or the tool call an app is shown with (`None` for the
    /// chat).
    pub fn client_name(&self) -> Option<&str> {
        match self {
            CallOrigin::Chat => None,
            CallOrigin::Gateway { client_name } => Some(client_name),
            CallOrigin::App { app_of } => Some(app_of),
        }
    }
}

/// Which server a call goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GateTarget {
    /// A server registered in the workspace.
    Registered {
        server_id: ServerId,
        server_name: String,
    },
    /// A server the request brought along (`mcp_servers`), known only by name and URL.
    Ephemeral { server_name: String, url: String },
}

impl GateTarget {
    pub fn server_name(&self) -> &str {
        match self {
            GateTarget::Registered { server_name, .. }
            | GateTarget::Ephemeral { server_name, .. } => server_name,
        }
    }

    /// The `server` label of metrics: the name of a registered server, `ephemeral` for every
    /// server a request brought along (their names would grow the series without bound).
    pub fn metric_label(&self) -> &str {
        match self {
            GateTarget::Registered { server_name, .. } => server_name,
            GateTarget::Ephemeral { .. } => "ephemeral",
        }
    }
}

/// The gate's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GateDecision {
    Allow {
        /// Recorded with the call: a user id, `policy:ALWAYS_ALLOW`, …
        decided_by: String,
    },
    Deny {
        /// Shown to the user and given to the model as the call's error result.
        reason: String,
        decided_by: String,
    },
}

/// What happened to a reviewed call, for [`ApprovalGate::call_finished`].
#[derive(Clone, Debug)]
pub struct CallReport {
    pub request: GateRequest,
    pub decision: GateDecision,
    pub final_state: ToolCallState,
    /// From dispatch to the answer; `None` when the call was never dispatched.
    pub duration: Option<Duration>,
    /// Size of the full result as stored (JSON bytes), when there was one.
    pub result_bytes: Option<usize>,
    pub error: Option<String>,
}

/// The size of `result` as JSON bytes (for [`CallReport::result_bytes`]), counted while it is
/// written out, without keeping the bytes.
pub(crate) fn json_byte_len(result: &impl serde::Serialize) -> Option<usize> {
    let mut counter = ByteCounter(0);
    serde_json::to_writer(&mut counter, result).ok()?;
    Some(counter.0)
}

/// A writer that only counts.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Sends events into the turn's stream (approval cards, elicitation forms). Cheap to clone.
#[derive(Clone)]
pub struct EventSink {
    emit: Arc<dyn Fn(ChatEvent) + Send + Sync>,
}

impl EventSink {
    pub fn new(emit: impl Fn(ChatEvent) + Send + Sync + 'static) -> Self {
        Self {
            emit: Arc::new(emit),
        }
    }

    /// A sink that drops everything (tests, benchmarks).
    pub fn discard() -> Self {
        Self::new(|_| {})
    }

    pub fn emit(&self, event: ChatEvent) {
        (self.emit)(event)
    }
}

impl fmt::Debug for EventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventSink")
    }
}

/// The gate of a chat engine built without one: every call is denied (fail closed).
#[derive(Debug, Default)]
pub(crate) struct NoGateConfigured;

/// `decided_by` of the calls [`NoGateConfigured`] refuses.
pub(crate) const NO_GATE_DECIDED_BY: &str = "gate:not_configured";

#[async_trait]
impl ApprovalGate for NoGateConfigured {
    async fn review(&self, request: &GateRequest, _events: &EventSink) -> GateDecision {
        tracing::warn!(
            tool = %request.tool.name,
            server = request.target.metric_label(),
            "a tool call was refused: this chat engine has no approval gate"
        );
        GateDecision::Deny {
            reason: "tool calls are refused: no approval gate is configured".to_owned(),
            decided_by: NO_GATE_DECIDED_BY.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::json_byte_len;
    use serde_json::json;

    #[test]
    fn a_results_size_is_the_length_of_its_json() {
        let result =
            json!({"content": [{"type": "text", "text": "héllo \"world\""}], "isError": false});
        assert_eq!(
            json_byte_len(&result),
            Some(serde_json::to_vec(&result).unwrap().len())
        );
        assert_eq!(json_byte_len(&json!(null)), Some(4));
    }
}
