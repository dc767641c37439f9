//! Tool-call ids unique within a conversation. The model names each call it makes, and every
//! later step pairs a call with its result by that id (the history sent back to the model, the
//! conversation's detail, the replay). Providers do not all make ids unique: local
//! OpenAI-compatible servers often number calls per answer (`call_0` again in the next turn)
//! or repeat one id within an answer. Before an assistant message is stored, a reused id is
//! renamed (`call_0` → `call_0_2`), so the stored conversation never holds one id twice.

use std::collections::HashSet;
use switchboard_core::ToolCallRequest;
use switchboard_store::MessageRecord;

/// The call ids a conversation has used so far.
#[derive(Debug, Default)]
pub(crate) struct ConversationCallIds {
    used: HashSet<String>,
}

impl ConversationCallIds {
    /// The ids of every call stored in the conversation's messages.
    pub(crate) fn from_messages(messages: &[MessageRecord]) -> Self {
        Self {
            used: messages
                .iter()
                .flat_map(|message| message.tool_calls.iter())
                .map(|call| call.id.clone())
                .collect(),
        }
    }

    /// Renames the calls whose id is already taken (by an earlier call of the conversation or
    /// of this answer) and records every id as used.
    pub(crate) fn make_unique(&mut self, calls: &mut [ToolCallRequest]) {
        for call in calls {
            if call.id.is_empty() {
                call.id = "call".to_owned();
            }
            if !self.used.contains(&call.id) {
                self.used.insert(call.id.clone());
                continue;
            }
            let renamed = (2..)
                .map(|suffix| format!("{}_{suffix}", call.id))
                .find(|candidate| !self.used.contains(candidate))
                .expect("an unused suffix exists");
            tracing::debug!(from = %call.id, to = %renamed, "the model reused a tool-call id; renamed");
            self.used.insert(renamed.clone());
            call.id = renamed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: &str) -> ToolCallRequest {
        ToolCallRequest {
            id: id.to_owned(),
            name: "kg__schema_version".to_owned(),
            arguments: "{}".to_owned(),
        }
    }

    #[test]
    fn reused_ids_are_renamed_and_fresh_ones_kept() {
        let mut ids = ConversationCallIds::default();
        let mut first = vec![request("call_0"), request("call_1")];
        ids.make_unique(&mut first);
        assert_eq!(first[0].id, "call_0");
        assert_eq!(first[1].id, "call_1");
        let mut second = vec![request("call_0"), request("call_0"), request("call_0_2")];
        ids.make_unique(&mut second);
        let renamed: Vec<&str> = second.iter().map(|call| call.id.as_str()).collect();
        assert_eq!(renamed, ["call_0_2", "call_0_3", "call_0_2_2"]);
        let mut empty = vec![request(""), request("")];
        ids.make_unique(&mut empty);
        assert_eq!(empty[0].id, "call");
        assert_eq!(empty[1].id, "call_2");
    }
}
