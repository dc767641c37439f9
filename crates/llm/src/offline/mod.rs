//! The `offline` provider: the embedded default, so a fresh machine answers without any key.
//!
//! A deterministic rules planner, not a language model: it ranks the offered tools against
//! the question (BM25 over names, descriptions and parameters, plus synonyms), fills simple
//! arguments from the question (type and object names, versions, dates, numbers), looks an
//! object up by name first when a tool needs its id (across all types when the question does
//! not say which: `object_plan`), filters a listing by a property value the question names
//! once the schema says which property has that value (`filter_plan`), reads dates in common
//! forms (`dates`) and file paths (`paths`), and once results come back answers with a
//! templated Markdown rendering of them. An action no tool performs (`refusal`), or a question
//! below its confidence threshold, gets a plain "I can't do that offline" with what it can do. It speaks through the same event stream as a real model, so
//! the chat engine cannot tell the difference.

mod arguments;
mod conversation;
mod dates;
mod filter_plan;
#[cfg(test)]
mod fixtures;
mod help;
mod known_values;
mod mentions;
mod object_plan;
mod parameters;
mod paths;
mod planner;
mod refusal;
mod render;
mod text;
mod tokens;
pub(crate) mod tool_index;

use async_trait::async_trait;
use chrono::NaiveDate;
use switchboard_core::ToolCallRequest;

use crate::config::OfflinePlannerConfig;
use crate::error::LlmError;
use crate::provider::{
    FinishReason, IndexedToolCall, LlmEvent, LlmEventStream, LlmProvider, LlmRequest,
};
use planner::{PlannedCall, PlannerDecision};

/// The model name the offline provider reports.
pub const OFFLINE_MODEL_NAME: &str = "switchboard-offline-planner";

/// The deterministic offline planner behind the provider trait.
#[derive(Clone, Debug, Default)]
pub struct OfflineProvider {
    config: OfflinePlannerConfig,
    /// Fixed "today" for relative dates in tests; the real date otherwise.
    today_override: Option<NaiveDate>,
}

impl OfflineProvider {
    pub fn new(config: OfflinePlannerConfig) -> Self {
        Self {
            config,
            today_override: None,
        }
    }

    /// Resolves "last 7 days" against `today` instead of the clock (tests, benchmarks).
    pub fn with_today(mut self, today: NaiveDate) -> Self {
        self.today_override = Some(today);
        self
    }

    /// The events for one request, computed synchronously (the planner does no IO).
    pub fn plan_events(&self, request: &LlmRequest) -> Result<Vec<LlmEvent>, LlmError> {
        request.validate()?;
        let today = self
            .today_override
            .unwrap_or_else(|| chrono::Utc::now().date_naive());
        Ok(match planner::decide(request, &self.config, today) {
            PlannerDecision::CallTools(calls) => tool_call_events(calls),
            PlannerDecision::Answer(text) => text_events(&text),
        })
    }
}

#[async_trait]
impl LlmProvider for OfflineProvider {
    fn provider_name(&self) -> &str {
        "offline"
    }

    fn default_model(&self) -> &str {
        OFFLINE_MODEL_NAME
    }

    async fn stream_chat(&self, request: LlmRequest) -> Result<LlmEventStream, LlmError> {
        let events = self.plan_events(&request)?;
        Ok(Box::pin(futures::stream::iter(events.into_iter().map(Ok))))
    }
}

fn tool_call_events(calls: Vec<PlannedCall>) -> Vec<LlmEvent> {
    let mut events: Vec<LlmEvent> = calls
        .into_iter()
        .enumerate()
        .map(|(index, call)| {
            LlmEvent::ToolCall(IndexedToolCall {
                index: index as u32,
                call: ToolCallRequest {
                    id: format!("call_{}", uuid::Uuid::new_v4().simple()),
                    name: call.tool_name,
                    arguments: serde_json::Value::Object(call.arguments).to_string(),
                },
            })
        })
        .collect();
    events.push(LlmEvent::Finished(FinishReason::ToolCalls));
    events
}

/// The answer as line-sized deltas, so a UI shows it arriving like a model's.
fn text_events(text: &str) -> Vec<LlmEvent> {
    let mut events: Vec<LlmEvent> = text
        .split_inclusive('\n')
        .map(|line| LlmEvent::TextDelta(line.to_owned()))
        .collect();
    events.push(LlmEvent::Finished(FinishReason::Stop));
    events
}
