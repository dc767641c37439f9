//! Turns the `data:` payloads of a Chat Completions stream into [`LlmEvent`]s, without IO so
//! every quirk can be tested on plain strings.
//!
//! Order of what comes out: text deltas as they arrive; the assembled tool calls when the
//! choice's `finish_reason` arrives (or at the end); usage whenever the (often usage-only,
//! `choices: []`) chunk arrives; `Finished` at `[DONE]`, or at end of stream when a
//! finish reason was already seen (some servers omit `[DONE]`).

use std::collections::VecDeque;

use super::tool_call_assembly::ToolCallAssembler;
use super::wire::StreamChunk;
use crate::error::LlmError;
use crate::provider::{FinishReason, LlmEvent, TokenUsage};

#[derive(Debug, Default)]
pub(crate) struct ChunkDecoder {
    assembler: ToolCallAssembler,
    finish_reason: Option<FinishReason>,
    produced_tool_calls: bool,
    finished: bool,
    ready: VecDeque<LlmEvent>,
}

impl ChunkDecoder {
    /// The next event ready to hand out.
    pub fn pop(&mut self) -> Option<LlmEvent> {
        self.ready.pop_front()
    }

    /// True once `Finished` was queued: nothing more will come.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Feeds one SSE `data:` payload (or a whole non-streamed JSON answer).
    pub fn on_data(&mut self, data: &str) -> Result<(), LlmError> {
        if self.finished {
            return Ok(());
        }
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.finish();
            return Ok(());
        }
        let chunk: StreamChunk =
            serde_json::from_str(data).map_err(|error| LlmError::MalformedStream {
                detail: format!(
                    "a chunk is not valid JSON ({error}): {}",
                    data.chars().take(200).collect::<String>()
                ),
            })?;
        if let Some(error) = chunk.error {
            let message = error
                .get("message")
                .and_then(|message| message.as_str())
                .map(str::to_owned)
                .unwrap_or_else(|| error.to_string());
            return Err(LlmError::UpstreamReportedError { message });
        }
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            if let Some(delta) = choice.delta.or(choice.message) {
                if let Some(content) = delta.content.filter(|content| !content.is_empty()) {
                    self.ready.push_back(LlmEvent::TextDelta(content));
                }
                for tool_call in delta.tool_calls.iter().flatten() {
                    if let Some(arguments) = self.assembler.apply(tool_call) {
                        self.ready.push_back(LlmEvent::ToolCallArguments(arguments));
                    }
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|reason| !reason.is_empty()) {
                self.finish_reason = Some(FinishReason::from_wire(&reason));
                self.flush_tool_calls();
            }
        }
        if let Some(usage) = chunk.usage {
            self.ready.push_back(LlmEvent::Usage(TokenUsage {
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                total_tokens: if usage.total_tokens == 0 {
                    usage.prompt_tokens + usage.completion_tokens
                } else {
                    usage.total_tokens
                },
                cache_read_tokens: usage
                    .prompt_tokens_details
                    .map_or(0, |details| details.cached_tokens),
                ..TokenUsage::default()
            }));
        }
        Ok(())
    }

    /// The byte stream ended. Fine after `[DONE]` or a finish reason; otherwise the answer
    /// was cut off.
    pub fn on_end_of_stream(&mut self) -> Result<(), LlmError> {
        if self.finished {
            return Ok(());
        }
        if self.finish_reason.is_some() {
            self.finish();
            return Ok(());
        }
        Err(LlmError::StreamEndedEarly)
    }

    /// Ends a non-streamed answer, which has no `[DONE]`.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.flush_tool_calls();
        let reason = if self.produced_tool_calls {
            FinishReason::ToolCalls
        } else {
            self.finish_reason.take().unwrap_or(FinishReason::Stop)
        };
        self.ready.push_back(LlmEvent::Finished(reason));
        self.finished = true;
    }

    fn flush_tool_calls(&mut self) {
        if self.assembler.is_empty() {
            return;
        }
        for call in self.assembler.finish() {
            self.produced_tool_calls = true;
            self.ready.push_back(LlmEvent::ToolCall(call));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(payloads: &[&str], end_of_stream: bool) -> Result<Vec<LlmEvent>, LlmError> {
        let mut decoder = ChunkDecoder::default();
        let mut events = Vec::new();
        for payload in payloads {
            decoder.on_data(payload)?;
            while let Some(event) = decoder.pop() {
                events.push(event);
            }
        }
        if end_of_stream {
            decoder.on_end_of_stream()?;
        }
        while let Some(event) = decoder.pop() {
            events.push(event);
        }
        Ok(events)
    }

    #[test]
    fn text_then_usage_only_chunk_then_done() {
        let events = decode(
            &[
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
                r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
                r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}"#,
                r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
                r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#,
                "[DONE]",
            ],
            true,
        )
        .unwrap();
        assert_eq!(
            events,
            vec![
                LlmEvent::TextDelta("Hel".into()),
                LlmEvent::TextDelta("lo".into()),
                LlmEvent::Usage(TokenUsage {
                    prompt_tokens: 5,
                    completion_tokens: 2,
                    total_tokens: 7,
                    ..TokenUsage::default()
                }),
                LlmEvent::Finished(FinishReason::Stop),
            ]
        );
    }

    #[test]
    fn tool_calls_come_out_at_finish_reason_and_finish_says_tool_calls_even_if_upstream_said_stop()
    {
        let events = decode(
            &[
                r#"{"choices":[{"delta":{"content":null,"tool_calls":[{"function":{"name":"kg__schema_version","arguments":"{}"}}]}}]}"#,
                r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
                "[DONE]",
            ],
            true,
        )
        .unwrap();
        // The arguments as they streamed, then the complete call at the finish reason.
        assert!(
            matches!(&events[0], LlmEvent::ToolCallArguments(delta) if delta.name == "kg__schema_version" && delta.index == 0 && delta.fragment == "{}")
        );
        assert!(
            matches!(&events[1], LlmEvent::ToolCall(call) if call.call.name == "kg__schema_version" && call.index == 0)
        );
        assert_eq!(events[2], LlmEvent::Finished(FinishReason::ToolCalls));
    }

    #[test]
    fn argument_fragments_stream_with_their_call_once_it_has_a_name() {
        let events = decode(
            &[
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"shop__cart","arguments":""}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ite"}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ms\": [1]}"}}]}}]}"#,
                r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            ],
            true,
        )
        .unwrap();
        let fragments: Vec<(u32, &str, &str, &str)> = events
            .iter()
            .filter_map(|event| match event {
                LlmEvent::ToolCallArguments(delta) => Some((
                    delta.index,
                    delta.id.as_str(),
                    delta.name.as_str(),
                    delta.fragment.as_str(),
                )),
                _ => None,
            })
            .collect();
        // The nameless call 1 streams nothing (it is dropped at the finish, too).
        assert_eq!(
            fragments,
            vec![
                (0, "call_1", "shop__cart", "{\"ite"),
                (0, "call_1", "shop__cart", "ms\": [1]}"),
            ]
        );
    }

    #[test]
    fn end_without_done_is_fine_after_a_finish_reason_and_an_error_before() {
        let events = decode(
            &[r#"{"choices":[{"delta":{"content":"x"},"finish_reason":"length"}]}"#],
            true,
        )
        .unwrap();
        assert_eq!(events[1], LlmEvent::Finished(FinishReason::Length));
        let error = decode(&[r#"{"choices":[{"delta":{"content":"x"}}]}"#], true).unwrap_err();
        assert!(matches!(error, LlmError::StreamEndedEarly));
    }

    #[test]
    fn malformed_chunks_and_in_stream_errors_are_typed() {
        let error = decode(&["{not json"], false).unwrap_err();
        assert!(matches!(error, LlmError::MalformedStream { .. }), "{error}");
        assert!(error.to_string().contains("{not json"));
        let error = decode(
            &[r#"{"error":{"message":"model overloaded","type":"server_error"}}"#],
            false,
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the LLM provider reported an error mid-stream: model overloaded"
        );
    }

    #[test]
    fn a_non_streamed_answer_decodes_through_message() {
        let mut decoder = ChunkDecoder::default();
        decoder
            .on_data(r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#)
            .unwrap();
        decoder.finish();
        let events: Vec<_> = std::iter::from_fn(|| decoder.pop()).collect();
        assert_eq!(events[0], LlmEvent::TextDelta("Hi there".into()));
        assert!(
            matches!(
                events[1],
                LlmEvent::Usage(TokenUsage {
                    total_tokens: 3,
                    ..
                })
            ),
            "{events:?}"
        );
        assert_eq!(events[2], LlmEvent::Finished(FinishReason::Stop));
    }
}
