//! Assembles streamed tool-call deltas into complete calls.
//!
//! OpenAI streams each call as a first delta carrying `index`, `id` and the function name,
//! then argument fragments carrying only `index`. The compatible servers differ:
//! - Gemini's endpoint omits `index` (each call usually arrives whole, parallel calls as
//!   separate entries);
//! - some servers send an empty `id` (`""`) on later deltas, or repeat the name;
//! - some never send an id at all.
//!
//! Rules: with an `index`, deltas go to that slot. Without one, a delta naming a function
//! starts a new call (unless its non-empty id matches an existing call); a delta without a
//! name continues the latest call. Empty ids never overwrite real ones; missing ids are
//! generated. Empty arguments become `{}`.

use switchboard_core::ToolCallRequest;

use super::wire::ToolCallDelta;
use crate::provider::{IndexedToolCall, ToolCallArgumentsDelta};

#[derive(Debug, Default)]
pub(crate) struct ToolCallAssembler {
    /// Calls in the order they were first seen, each with its wire index.
    calls: Vec<PartialToolCall>,
}

#[derive(Debug)]
struct PartialToolCall {
    index: u32,
    id: String,
    name: String,
    arguments: String,
}

impl ToolCallAssembler {
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Adds `delta` to its call; answers the arguments fragment it carried, with the call's
    /// index, id and name so far, when it carried one and the call has a name.
    pub fn apply(&mut self, delta: &ToolCallDelta) -> Option<ToolCallArgumentsDelta> {
        let id = delta.id.as_deref().filter(|id| !id.is_empty());
        let function = delta.function.as_ref();
        let name = function
            .and_then(|function| function.name.as_deref())
            .filter(|name| !name.is_empty());
        let arguments = function.and_then(|function| function.arguments_text());

        let slot = match delta.index {
            Some(index) => self.slot_for_index(index),
            None => self.slot_without_index(id, name),
        };
        let call = &mut self.calls[slot];
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id.to_owned();
        }
        if let Some(name) = name {
            if call.name.is_empty() {
                call.name = name.to_owned();
            } else if call.name != name {
                // A server streaming the name in fragments.
                call.name.push_str(name);
            }
        }
        let arguments = arguments.filter(|arguments| !arguments.is_empty())?;
        call.arguments.push_str(&arguments);
        (!call.name.is_empty()).then(|| ToolCallArgumentsDelta {
            index: call.index,
            id: call.id.clone(),
            name: call.name.clone(),
            fragment: arguments,
        })
    }

    fn slot_for_index(&mut self, index: u32) -> usize {
        if let Some(position) = self.calls.iter().position(|call| call.index == index) {
            return position;
        }
        self.push_new(index)
    }

    fn slot_without_index(&mut self, id: Option<&str>, name: Option<&str>) -> usize {
        if let Some(id) = id
            && let Some(position) = self.calls.iter().position(|call| call.id == id)
        {
            return position;
        }
        let starts_new_call = name.is_some() || id.is_some() || self.calls.is_empty();
        if starts_new_call {
            let next_index = self
                .calls
                .iter()
                .map(|call| call.index + 1)
                .max()
                .unwrap_or(0);
            self.push_new(next_index)
        } else {
            self.calls.len() - 1
        }
    }

    fn push_new(&mut self, index: u32) -> usize {
        self.calls.push(PartialToolCall {
            index,
            id: String::new(),
            name: String::new(),
            arguments: String::new(),
        });
        self.calls.len() - 1
    }

    /// The finished calls ordered by index. Calls without a name are dropped (a server
    /// sending only fragments of nothing); calls without an id get a generated one.
    pub fn finish(&mut self) -> Vec<IndexedToolCall> {
        let mut calls = std::mem::take(&mut self.calls);
        calls.sort_by_key(|call| call.index);
        calls
            .into_iter()
            .filter(|call| !call.name.is_empty())
            .map(|call| IndexedToolCall {
                index: call.index,
                call: ToolCallRequest {
                    id: if call.id.is_empty() {
                        format!("call_{}", uuid::Uuid::new_v4().simple())
                    } else {
                        call.id
                    },
                    name: call.name,
                    arguments: if call.arguments.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        call.arguments
                    },
                },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(json: &str) -> ToolCallDelta {
        serde_json::from_str(json).unwrap()
    }

    fn assemble(deltas: &[&str]) -> Vec<(u32, String, String, String)> {
        let mut assembler = ToolCallAssembler::default();
        for text in deltas {
            assembler.apply(&delta(text));
        }
        assembler
            .finish()
            .into_iter()
            .map(|indexed| {
                (
                    indexed.index,
                    indexed.call.id,
                    indexed.call.name,
                    indexed.call.arguments,
                )
            })
            .collect()
    }

    #[test]
    fn openai_parallel_calls_interleaved_by_index() {
        let calls = assemble(&[
            r#"{"index":0,"id":"call_a","type":"function","function":{"name":"kg__type_info","arguments":""}}"#,
            r#"{"index":1,"id":"call_b","type":"function","function":{"name":"kg__schema_version","arguments":""}}"#,
            r#"{"index":0,"function":{"arguments":"{\"type_na"}}"#,
            r#"{"index":1,"function":{"arguments":"{}"}}"#,
            r#"{"index":0,"function":{"arguments":"me\":\"Document\"}"}}"#,
        ]);
        assert_eq!(
            calls,
            vec![
                (
                    0,
                    "call_a".into(),
                    "kg__type_info".into(),
                    r#"{"type_name":"Document"}"#.into()
                ),
                (1, "call_b".into(), "kg__schema_version".into(), "{}".into()),
            ]
        );
    }

    #[test]
    fn gemini_calls_without_index_each_start_a_new_call() {
        let calls = assemble(&[
            r#"{"id":"","function":{"name":"a","arguments":"{\"x\":1}"}}"#,
            r#"{"id":"","function":{"name":"b","arguments":"{}"}}"#,
        ]);
        assert_eq!(calls.len(), 2);
        assert_eq!((calls[0].0, calls[0].2.as_str()), (0, "a"));
        assert_eq!((calls[1].0, calls[1].2.as_str()), (1, "b"));
        assert!(calls[0].1.starts_with("call_"), "generated id");
        assert_ne!(calls[0].1, calls[1].1);
    }

    #[test]
    fn fragments_without_index_continue_the_latest_call_and_empty_ids_do_not_overwrite() {
        let calls = assemble(&[
            r#"{"id":"call_1","function":{"name":"echo","arguments":"{\"mess"}}"#,
            r#"{"id":"","function":{"arguments":"age\":\"hi\"}"}}"#,
            r#"{"index":null,"id":"call_1","function":{"name":"echo"}}"#,
        ]);
        assert_eq!(
            calls,
            vec![(
                0,
                "call_1".into(),
                "echo".into(),
                r#"{"message":"hi"}"#.into()
            )]
        );
    }

    #[test]
    fn empty_ids_on_later_indexed_deltas_and_missing_arguments() {
        let calls = assemble(&[
            r#"{"index":0,"id":"call_x","function":{"name":"kg__schema_version"}}"#,
            r#"{"index":0,"id":"","function":{"name":"kg__schema_version","arguments":""}}"#,
        ]);
        assert_eq!(
            calls,
            vec![(0, "call_x".into(), "kg__schema_version".into(), "{}".into())]
        );
    }
}
