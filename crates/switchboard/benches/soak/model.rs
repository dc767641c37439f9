//! The soak's model: an in-process provider that answers at once, calling the `work` tool of
//! the upstream servers in turn (`up{i}__work`), then one line of text once the result (or
//! the error) is in.

use async_trait::async_trait;
use futures::StreamExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use switchboard_core::ToolCallRequest;
use switchboard_llm::{
    FinishReason, IndexedToolCall, LlmError, LlmEvent, LlmEventStream, LlmProvider, LlmRequest,
};

#[derive(Debug)]
pub struct RoundRobinModel {
    pub servers: usize,
    pub calls: AtomicUsize,
}

#[async_trait]
impl LlmProvider for RoundRobinModel {
    fn provider_name(&self) -> &str {
        "soak"
    }

    fn default_model(&self) -> &str {
        "round-robin"
    }

    async fn stream_chat(&self, request: LlmRequest) -> Result<LlmEventStream, LlmError> {
        let has_result = request
            .messages
            .last()
            .is_some_and(|message| message.role.as_str() == "tool");
        let events = if has_result {
            vec![
                LlmEvent::TextDelta("Done.".into()),
                LlmEvent::Finished(FinishReason::Stop),
            ]
        } else {
            let call = self.calls.fetch_add(1, Ordering::Relaxed);
            vec![
                LlmEvent::ToolCall(IndexedToolCall {
                    index: 0,
                    call: ToolCallRequest {
                        id: format!("call_{call}"),
                        name: format!("up{}__work", call % self.servers),
                        arguments: "{}".into(),
                    },
                }),
                LlmEvent::Finished(FinishReason::ToolCalls),
            ]
        };
        Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed())
    }
}
