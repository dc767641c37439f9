//! What the model is sent fits its context window, counted in its own tokens.
//!
//! Every request of a turn (each step, each model of the fallback chain) is fitted for the
//! model that will read it ([`fit`]): the window is the model's `context_window` as its
//! provider lists it (`models`), else `chat.default_context_window`; the answer's room
//! (`llm.max_tokens`, at most a quarter of the window), the tool definitions on offer and a
//! margin of 5% of the window (message framing, and the error of the estimate for models
//! whose tokenizer is not known) are set aside first. Tokens are counted with the model's own
//! vocabulary for OpenAI-family models and estimated otherwise (`switchboard_llm::tokens`).
//!
//! What was left out is reported as a [`ContextReport`]: in the `meta` event (the first
//! request of the answer) and in each stored assistant message's metadata (`context`).

mod fit;

pub(crate) use fit::fit;

use crate::config::ChatConfig;
use crate::providers::ChosenModel;
use serde::{Deserialize, Serialize};
use switchboard_core::{ChatMessage, ToolSpec};
use switchboard_llm::TokenCounter;

/// Tokens a message costs beyond its text (role, separators), as OpenAI documents for its
/// chat models.
const MESSAGE_OVERHEAD: usize = 4;
/// Tokens that prime the answer.
const REPLY_PRIMING: usize = 3;
/// Tokens a tool definition costs beyond its JSON text.
const TOOL_OVERHEAD: usize = 8;
/// A tool result is never cut below this many tokens to make room.
const MIN_TOOL_RESULT_TOKENS: usize = 64;

/// The window one model reads, and how it counts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ContextLimits {
    pub window: u32,
    /// The window is the model's own (listed by its provider), not the default.
    pub window_known: bool,
    /// Room left for the answer.
    pub answer_reserve: u32,
    pub tool_result_max_tokens: u32,
    pub counter: TokenCounter,
}

impl ContextLimits {
    /// The limits of `model`, with `max_tokens` (`llm.max_tokens`) as the answer's room.
    pub fn for_model(model: &ChosenModel, config: &ChatConfig, max_tokens: u32) -> Self {
        let window = model
            .context_window
            .unwrap_or(config.default_context_window);
        Self {
            window,
            window_known: model.context_window.is_some(),
            answer_reserve: max_tokens.min(window / 4),
            tool_result_max_tokens: config.tool_result_max_tokens,
            counter: TokenCounter::for_model(&model.display_model()),
        }
    }

    /// Tokens the messages and tool definitions may take together.
    fn prompt_budget(&self) -> usize {
        let margin = self.window / 20;
        self.window.saturating_sub(self.answer_reserve + margin) as usize
    }

    fn message_tokens(&self, message: &ChatMessage) -> usize {
        MESSAGE_OVERHEAD
            + self.counter.count(&message.content)
            + message
                .tool_calls
                .iter()
                .map(|call| {
                    MESSAGE_OVERHEAD
                        + self.counter.count(&call.name)
                        + self.counter.count(&call.arguments)
                })
                .sum::<usize>()
    }

    fn tools_tokens(&self, tools: &[ToolSpec]) -> usize {
        tools
            .iter()
            .map(|tool| {
                TOOL_OVERHEAD
                    + self.counter.count(&tool.name)
                    + self.counter.count(&tool.description)
                    + self.counter.count(&tool.parameters.to_string())
            })
            .sum()
    }
}

/// How a request was fitted to its model's context window: what it holds and what was left
/// out. Stored in an assistant message's metadata as `context`; the `meta` event carries the
/// first request's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextReport {
    /// Tokens of the model's context window.
    pub context_window: u32,
    /// True when the window is the model's own (listed by its provider); false when
    /// `chat.default_context_window` was assumed.
    pub window_known: bool,
    /// How tokens were counted: `o200k_base`, `cl100k_base` or `estimate` (bytes / 4).
    pub tokenizer: String,
    /// Tokens set aside for the answer.
    pub answer_reserve_tokens: u32,
    /// Tokens of the tool definitions offered.
    pub tool_tokens: u32,
    /// Tokens of the request as sent: messages and tool definitions.
    pub prompt_tokens: u32,
    /// Earlier turns (a question and everything that answered it) left out, oldest first.
    pub dropped_turns: u32,
    /// Messages of those turns.
    pub dropped_messages: u32,
    /// Tokens of those messages.
    pub dropped_tokens: u32,
    /// Tool results shortened to head and tail (each says so in its text).
    pub cut_tool_results: u32,
    /// Tokens left out of those results.
    pub cut_tokens: u32,
}

impl ContextReport {
    /// Whether anything was left out.
    pub fn trimmed(&self) -> bool {
        self.dropped_messages > 0 || self.cut_tool_results > 0
    }
}

#[cfg(test)]
#[path = "fit_tests.rs"]
mod tests;
