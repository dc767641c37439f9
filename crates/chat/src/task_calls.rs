//! The tool calls of this process that are tasks being followed right now, so that one can be
//! cancelled by itself (`ChatService::cancel_task_call`) without stopping its answer.
//!
//! Why a table of its own: a task may run for hours, long after its answer's other calls
//! ended, and after a restart it is followed with no answer at all (`service::task_resume`);
//! the person's way to stop it is this call's cancellation token. Cancelling it makes the
//! client send `tasks/cancel` (`mcp-client`'s task follower), and the call ends like any
//! cancelled one. An entry lives exactly as long as its [`FollowedTask`] guard: from the call
//! becoming a task until its follower returns. Only this process's calls are here; a call
//! another replica follows is not: its cancel is stored for that replica, which looks for
//! the requests on the calls it follows (`service::task_cancels`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use switchboard_core::{ConversationId, ToolCallId};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default)]
pub(crate) struct TaskCalls {
    calls: Mutex<HashMap<ToolCallId, (ConversationId, CancellationToken)>>,
}

impl TaskCalls {
    /// Notes that `tool_call_id` (of `conversation_id`) is a task followed with
    /// `cancellation`, until the guard is dropped.
    pub fn follow(
        self: &Arc<Self>,
        tool_call_id: &ToolCallId,
        conversation_id: &ConversationId,
        cancellation: CancellationToken,
    ) -> FollowedTask {
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(
                tool_call_id.clone(),
                (conversation_id.clone(), cancellation),
            );
        }
        FollowedTask {
            calls: Arc::clone(self),
            tool_call_id: tool_call_id.clone(),
        }
    }

    /// Whether no task is followed here right now.
    pub fn is_empty(&self) -> bool {
        self.calls
            .lock()
            .map(|calls| calls.is_empty())
            .unwrap_or(true)
    }

    /// Cancels the call's task when it is followed here, in that conversation; `false`
    /// otherwise (not a task, ended, or followed by another process).
    pub fn cancel(&self, tool_call_id: &ToolCallId, conversation_id: &ConversationId) -> bool {
        let Ok(calls) = self.calls.lock() else {
            return false;
        };
        match calls.get(tool_call_id) {
            Some((conversation, cancellation)) if conversation == conversation_id => {
                cancellation.cancel();
                true
            }
            _ => false,
        }
    }
}

/// A followed task's entry; dropped when its follower returns.
#[derive(Debug)]
pub(crate) struct FollowedTask {
    calls: Arc<TaskCalls>,
    tool_call_id: ToolCallId,
}

impl Drop for FollowedTask {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.calls.calls.lock() {
            calls.remove(&self.tool_call_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_followed_call_of_that_conversation_is_cancelled() {
        let calls = Arc::new(TaskCalls::default());
        let token = CancellationToken::new();
        let call = ToolCallId::from("tc_1");
        let conversation = ConversationId::from("conv_1");
        let guard = calls.follow(&call, &conversation, token.clone());
        assert!(!calls.cancel(&call, &ConversationId::from("conv_2")));
        assert!(!calls.cancel(&ToolCallId::from("tc_2"), &conversation));
        assert!(!token.is_cancelled());
        assert!(calls.cancel(&call, &conversation));
        assert!(token.is_cancelled());
        drop(guard);
        assert!(!calls.cancel(&call, &conversation), "gone with its guard");
    }
}
