//! Turns the events of a Messages API stream into [`LlmEvent`]s, without IO so every event
//! sequence can be tested on plain strings.
//!
//! What comes out: text deltas as they arrive (`text` blocks); the assembled `tool_use`
//! calls, usage and `Finished` once the message ends (`message_stop`, or the end of the
//! stream after a `message_delta` carrying a `stop_reason`). `thinking` and
//! `redacted_thinking` blocks are read and left out of the answer text (we do not request
//! extended thinking, so they only come from a proxy that enables it); `ping` and unknown
//! events are skipped; an `error` event ends the stream with the API's message.

use std::collections::VecDeque;

use super::tool_use_assembly::ToolUseAssembler;
use super::wire::{BlockDelta, StartedBlock, StreamEvent, WireUsage};
use crate::error::LlmError;
use crate::provider::{FinishReason, LlmEvent, TokenUsage};

#[derive(Debug, Default)]
pub(crate) struct EventDecoder {
    assembler: ToolUseAssembler,
    usage: Option<WireUsage>,
    stop_reason: Option<String>,
    finished: bool,
    ready: VecDeque<LlmEvent>,
}

impl EventDecoder {
    /// The next event ready to hand out.
    pub fn pop(&mut self) -> Option<LlmEvent> {
        self.ready.pop_front()
    }

    /// True once `Finished` was queued: nothing more will come.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Feeds one SSE `data:` payload.
    pub fn on_data(&mut self, data: &str) -> Result<(), LlmError> {
        let data = data.trim();
        if self.finished || data.is_empty() {
            return Ok(());
        }
        let event: StreamEvent =
            serde_json::from_str(data).map_err(|error| LlmError::MalformedStream {
                detail: format!(
                    "an event is not a Messages API event ({error}): {}",
                    data.chars().take(200).collect::<String>()
                ),
            })?;
        match event {
            StreamEvent::MessageStart { message } => self.merge_usage(message.usage),
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => match content_block {
                StartedBlock::Text { text } => self.push_text(text),
                StartedBlock::ToolUse { id, name, input } => {
                    self.assembler.start(index, id, name, input)
                }
                StartedBlock::Thinking | StartedBlock::RedactedThinking | StartedBlock::Other => {}
            },
            StreamEvent::ContentBlockDelta { index, delta } => self.on_delta(index, delta)?,
            StreamEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(reason);
                }
                self.merge_usage(usage);
            }
            StreamEvent::MessageStop => self.finish(),
            StreamEvent::Error { error } => {
                return Err(LlmError::UpstreamReportedError {
                    message: format!("{} ({})", error.message, error.kind),
                });
            }
            StreamEvent::ContentBlockStop | StreamEvent::Ping | StreamEvent::Other => {}
        }
        Ok(())
    }

    fn on_delta(&mut self, index: u32, delta: BlockDelta) -> Result<(), LlmError> {
        match delta {
            BlockDelta::TextDelta { text } => self.push_text(text),
            BlockDelta::InputJsonDelta { partial_json } => {
                let Some(arguments) = self.assembler.append(index, &partial_json) else {
                    return Err(LlmError::MalformedStream {
                        detail: format!(
                            "an input_json_delta for content block {index}, which is not a \
                             tool_use block"
                        ),
                    });
                };
                if !arguments.fragment.is_empty() {
                    self.ready.push_back(LlmEvent::ToolCallArguments(arguments));
                }
            }
            BlockDelta::ThinkingDelta | BlockDelta::SignatureDelta | BlockDelta::Other => {}
        }
        Ok(())
    }

    fn push_text(&mut self, text: String) {
        if !text.is_empty() {
            self.ready.push_back(LlmEvent::TextDelta(text));
        }
    }

    /// Later reports win field by field (`message_delta`'s output count is cumulative).
    fn merge_usage(&mut self, update: Option<WireUsage>) {
        let Some(update) = update else { return };
        let current = self.usage.get_or_insert_with(WireUsage::default);
        current.input_tokens = update.input_tokens.or(current.input_tokens);
        current.output_tokens = update.output_tokens.or(current.output_tokens);
        current.cache_creation_input_tokens = update
            .cache_creation_input_tokens
            .or(current.cache_creation_input_tokens);
        current.cache_read_input_tokens = update
            .cache_read_input_tokens
            .or(current.cache_read_input_tokens);
    }

    /// The byte stream ended: fine after `message_stop` or a `stop_reason`; otherwise the
    /// answer was cut off.
    pub fn on_end_of_stream(&mut self) -> Result<(), LlmError> {
        if self.finished {
            return Ok(());
        }
        if self.stop_reason.is_some() {
            self.finish();
            return Ok(());
        }
        Err(LlmError::StreamEndedEarly)
    }

    fn finish(&mut self) {
        if self.finished {
            return;
        }
        let calls = self.assembler.finish();
        let produced_tool_calls = !calls.is_empty();
        self.ready.extend(calls.into_iter().map(LlmEvent::ToolCall));
        if let Some(usage) = self.usage {
            self.ready.push_back(LlmEvent::Usage(token_usage(usage)));
        }
        let reason = if produced_tool_calls {
            FinishReason::ToolCalls
        } else {
            finish_reason(self.stop_reason.as_deref())
        };
        self.ready.push_back(LlmEvent::Finished(reason));
        self.finished = true;
    }
}

/// Anthropic's usage in our terms: prompt tokens count cached ones too, as OpenAI's do.
fn token_usage(usage: WireUsage) -> TokenUsage {
    let cache_creation = usage.cache_creation_input_tokens.unwrap_or(0);
    let cache_read = usage.cache_read_input_tokens.unwrap_or(0);
    let prompt = usage.input_tokens.unwrap_or(0) + cache_creation + cache_read;
    let completion = usage.output_tokens.unwrap_or(0);
    TokenUsage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        cache_creation_tokens: cache_creation,
        cache_read_tokens: cache_read,
    }
}

/// Maps a Messages API `stop_reason`.
fn finish_reason(stop_reason: Option<&str>) -> FinishReason {
    match stop_reason {
        None | Some("end_turn" | "stop_sequence") => FinishReason::Stop,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("refusal") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(payloads: &[&str], end_of_stream: bool) -> Result<Vec<LlmEvent>, LlmError> {
        let mut decoder = EventDecoder::default();
        for payload in payloads {
            decoder.on_data(payload)?;
        }
        if end_of_stream {
            decoder.on_end_of_stream()?;
        }
        Ok(std::iter::from_fn(|| decoder.pop()).collect())
    }

    const START: &str = r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":300,"output_tokens":1}}}"#;

    #[test]
    fn text_thinking_and_usage_with_cache_fields() {
        let events = decode(
            &[
                START,
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}"#,
                r#"{"type":"content_block_stop","index":0}"#,
                r#"{"type":"ping"}"#,
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hel"}}"#,
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"lo"}}"#,
                r#"{"type":"content_block_stop","index":1}"#,
                r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":7}}"#,
                r#"{"type":"message_stop"}"#,
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
                    prompt_tokens: 510,
                    completion_tokens: 7,
                    total_tokens: 517,
                    cache_creation_tokens: 200,
                    cache_read_tokens: 300,
                }),
                LlmEvent::Finished(FinishReason::Length),
            ]
        );
    }

    #[test]
    fn stop_reasons_map_and_tool_calls_win() {
        assert_eq!(finish_reason(Some("end_turn")), FinishReason::Stop);
        assert_eq!(finish_reason(Some("stop_sequence")), FinishReason::Stop);
        assert_eq!(finish_reason(Some("refusal")), FinishReason::ContentFilter);
        assert_eq!(
            finish_reason(Some("pause_turn")),
            FinishReason::Other("pause_turn".into())
        );
        let events = decode(
            &[
                START,
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"kg__schema_version","input":{}}}"#,
                r#"{"type":"content_block_stop","index":0}"#,
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}"#,
            ],
            true,
        )
        .unwrap();
        assert!(matches!(&events[0], LlmEvent::ToolCall(call) if call.call.arguments == "{}"));
        assert_eq!(events[2], LlmEvent::Finished(FinishReason::ToolCalls));
    }

    #[test]
    fn errors_are_typed() {
        let error = decode(
            &[
                START,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ],
            false,
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the LLM provider reported an error mid-stream: Overloaded (overloaded_error)"
        );
        assert!(matches!(
            decode(&[START], true).unwrap_err(),
            LlmError::StreamEndedEarly
        ));
        assert!(matches!(
            decode(&["{\"type\":"], false).unwrap_err(),
            LlmError::MalformedStream { .. }
        ));
        let error = decode(
            &[r#"{"type":"content_block_delta","index":4,"delta":{"type":"input_json_delta","partial_json":"{"}}"#],
            false,
        )
        .unwrap_err();
        assert!(error.to_string().contains("content block 4"), "{error}");
    }
}
