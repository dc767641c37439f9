//! The chat engine's Prometheus metrics (through the `metrics` facade; `/metrics` renders):
//! `chat_answers_in_flight`, `chat_answers_total{outcome}`, `chat_answer_duration_seconds`,
//! `chat_tool_calls_total{state}`, `chat_llm_tokens_total{provider,model,direction}` (the
//! providers' own usage counts, `provider` being the named provider) and
//! `chat_llm_fallbacks_total{provider}` (the provider that failed).

use crate::events::TurnOutcome;
use std::time::Duration;
use switchboard_core::ToolCallState;
use switchboard_llm::TokenUsage;

pub(crate) fn answer_started() {
    metrics::gauge!("chat_answers_in_flight").increment(1.0);
}

pub(crate) fn answer_finished(outcome: TurnOutcome, duration: Duration) {
    metrics::gauge!("chat_answers_in_flight").decrement(1.0);
    metrics::counter!("chat_answers_total", "outcome" => outcome.as_str()).increment(1);
    metrics::histogram!("chat_answer_duration_seconds").record(duration.as_secs_f64());
}

pub(crate) fn tool_call_finished(state: ToolCallState) {
    metrics::counter!("chat_tool_calls_total", "state" => state.as_str()).increment(1);
}

/// The tokens one LLM step used, by named provider, model and direction (`input` counts every
/// prompt token; `cache_read` and `cache_write` are the parts of it the provider's prompt cache
/// served or stored).
pub(crate) fn llm_tokens(provider: &str, model: &str, usage: &TokenUsage) {
    let counts = [
        ("input", usage.prompt_tokens),
        ("output", usage.completion_tokens),
        ("cache_read", usage.cache_read_tokens),
        ("cache_write", usage.cache_creation_tokens),
    ];
    for (direction, tokens) in counts {
        metrics::counter!(
            "chat_llm_tokens_total",
            "provider" => provider.to_owned(),
            "model" => model.to_owned(),
            "direction" => direction,
        )
        .increment(u64::from(tokens));
    }
}

/// A model of a fallback chain failed before answering and the next one was asked.
pub(crate) fn llm_fallback(provider: &str) {
    metrics::counter!("chat_llm_fallbacks_total", "provider" => provider.to_owned()).increment(1);
}

/// A new answer was refused because a monthly token budget (`workspace` or `user`) is used up.
pub(crate) fn budget_refusal(scope: &'static str) {
    metrics::counter!("chat_budget_refusals_total", "scope" => scope).increment(1);
}
