//! Assembles streamed `tool_use` blocks into complete calls.
//!
//! Each block starts with its id and name (`content_block_start`, `input: {}`), then its
//! arguments arrive as `input_json_delta.partial_json` fragments — pieces of one JSON text,
//! not valid JSON on their own — until `content_block_stop`. Parallel calls are separate
//! blocks, one after the other, each with its own content-block index.
//!
//! The calls are numbered 0, 1, … in block order (our parallel-call index). A block that
//! streamed no fragments keeps the `input` of its start event (`{}` when empty), which is
//! also what a proxy that sends the whole input up front looks like.

use serde_json::Value;
use switchboard_core::ToolCallRequest;

use crate::provider::{IndexedToolCall, ToolCallArgumentsDelta};

#[derive(Debug, Default)]
pub(crate) struct ToolUseAssembler {
    /// Calls in block order, each with the content-block index it streams under.
    calls: Vec<PartialToolUse>,
}

#[derive(Debug)]
struct PartialToolUse {
    block_index: u32,
    id: String,
    name: String,
    initial_input: Value,
    partial_json: String,
}

impl ToolUseAssembler {
    /// A `tool_use` block started at content-block `block_index`.
    pub fn start(&mut self, block_index: u32, id: String, name: String, input: Value) {
        self.calls.push(PartialToolUse {
            block_index,
            id,
            name,
            initial_input: input,
            partial_json: String::new(),
        });
    }

    /// An `input_json_delta` for content-block `block_index`: the fragment with its call's
    /// index (its position among the tool_use blocks), id and name; `None` when no tool_use
    /// block has that index (the stream is inconsistent).
    pub fn append(&mut self, block_index: u32, fragment: &str) -> Option<ToolCallArgumentsDelta> {
        let (position, call) = self
            .calls
            .iter_mut()
            .enumerate()
            .find(|(_, call)| call.block_index == block_index)?;
        call.partial_json.push_str(fragment);
        Some(ToolCallArgumentsDelta {
            index: position as u32,
            id: call.id.clone(),
            name: call.name.clone(),
            fragment: fragment.to_owned(),
        })
    }

    /// The complete calls, in block order, with the raw JSON arguments text.
    pub fn finish(&mut self) -> Vec<IndexedToolCall> {
        std::mem::take(&mut self.calls)
            .into_iter()
            .enumerate()
            .map(|(index, call)| IndexedToolCall {
                index: index as u32,
                call: ToolCallRequest {
                    id: call.id,
                    name: call.name,
                    arguments: arguments_text(call.partial_json, call.initial_input),
                },
            })
            .collect()
    }
}

fn arguments_text(partial_json: String, initial_input: Value) -> String {
    if !partial_json.trim().is_empty() {
        return partial_json;
    }
    match initial_input {
        Value::Object(object) if !object.is_empty() => Value::Object(object).to_string(),
        _ => "{}".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parallel_blocks_assemble_in_order_from_fragments() {
        let mut assembler = ToolUseAssembler::default();
        assembler.start(1, "toolu_a".into(), "kg__type_info".into(), json!({}));
        assert!(assembler.append(1, "").is_some());
        let delta = assembler.append(1, "{\"type_na").unwrap();
        assert_eq!(
            (delta.index, delta.id.as_str(), delta.name.as_str()),
            (0, "toolu_a", "kg__type_info")
        );
        assert_eq!(delta.fragment, "{\"type_na");
        assert!(assembler.append(1, "me\": \"Team\"}").is_some());
        assembler.start(2, "toolu_b".into(), "kg__schema_version".into(), json!({}));
        assembler.start(
            3,
            "toolu_c".into(),
            "echo".into(),
            json!({"message": "up front"}),
        );
        assert!(assembler.append(7, "{}").is_none());
        let calls = assembler.finish();
        let summary: Vec<_> = calls
            .iter()
            .map(|call| {
                (
                    call.index,
                    call.call.id.as_str(),
                    call.call.arguments.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (0, "toolu_a", "{\"type_name\": \"Team\"}"),
                (1, "toolu_b", "{}"),
                (2, "toolu_c", "{\"message\":\"up front\"}"),
            ]
        );
        assert!(assembler.finish().is_empty());
    }
}
