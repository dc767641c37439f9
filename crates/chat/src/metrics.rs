//! The chat engine's Prometheus metrics (through the `metrics` facade; `/metrics` renders):
//! `chat_answers_in_flight`, `chat_answers_total{outcome}`, `chat_answer_duration_seconds`,
//! `chat_tool_calls_total{state}`.

use crate::events::TurnOutcome;
use std::time::Duration;
use switchboard_core::ToolCallState;

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
