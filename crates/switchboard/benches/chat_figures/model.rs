//! The stand-in model of the bench: an in-process provider that answers at once, so what is
//! measured is Switchboard's own overhead and not a model's latency.

use async_trait::async_trait;
use futures::StreamExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use switchboard_core::ToolCallRequest;
use switchboard_llm::{
    FinishReason, IndexedToolCall, LlmError, LlmEvent, LlmEventStream, LlmProvider, LlmRequest,
};

/// How the stand-in model behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// One line of text.
    Text,
    /// `kg__schema_version`, then one line of text once the result is in.
    OneTool,
    /// Like `OneTool`, but the tool the question names (`call server__tool`), else
    /// `kg__schema_version`.
    NamedTool,
    /// Never says anything (the stream stays open).
    Silent,
    /// `tokens` pieces of text, one every `every_ms` (a slow model).
    Paced { tokens: usize, every_ms: u64 },
}

#[derive(Debug)]
pub struct InstantModel {
    pub script: Script,
    pub calls: AtomicUsize,
}

#[async_trait]
impl LlmProvider for InstantModel {
    fn provider_name(&self) -> &str {
        "bench"
    }

    fn default_model(&self) -> &str {
        "instant"
    }

    async fn stream_chat(&self, request: LlmRequest) -> Result<LlmEventStream, LlmError> {
        let has_result = request
            .messages
            .last()
            .is_some_and(|message| message.role.as_str() == "tool");
        let events = match self.script {
            Script::Silent => return Ok(futures::stream::pending().boxed()),
            Script::Paced { tokens, every_ms } => return Ok(paced(tokens, every_ms)),
            Script::OneTool | Script::NamedTool if !has_result => {
                let id = format!("call_{}", self.calls.fetch_add(1, Ordering::Relaxed));
                let named = (self.script == Script::NamedTool)
                    .then(|| {
                        request
                            .messages
                            .iter()
                            .find(|message| message.role.as_str() == "user")
                    })
                    .flatten()
                    .and_then(|question| question.content.strip_prefix("call "));
                vec![
                    LlmEvent::ToolCall(IndexedToolCall {
                        index: 0,
                        call: ToolCallRequest {
                            id,
                            name: named.unwrap_or("kg__schema_version").into(),
                            arguments: "{}".into(),
                        },
                    }),
                    LlmEvent::Finished(FinishReason::ToolCalls),
                ]
            }
            _ => vec![
                LlmEvent::TextDelta("The answer.".into()),
                LlmEvent::Finished(FinishReason::Stop),
            ],
        };
        Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed())
    }
}

/// `tokens` text pieces (`t0 `, `t1 `…), one every `every_ms`, then the end.
fn paced(tokens: usize, every_ms: u64) -> LlmEventStream {
    let pieces = futures::stream::iter(0..tokens).then(move |index| async move {
        tokio::time::sleep(std::time::Duration::from_millis(every_ms)).await;
        Ok(LlmEvent::TextDelta(format!("t{index} ")))
    });
    pieces
        .chain(futures::stream::iter([Ok(LlmEvent::Finished(
            FinishReason::Stop,
        ))]))
        .boxed()
}
