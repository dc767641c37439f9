//! Prometheus counters of the approval flow (through the `metrics` facade; `/metrics` renders
//! them): requests, decisions by outcome, time a call waited for a person, elicitations.

use std::time::Duration;

/// How a request for approval ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ApprovalOutcome {
    Approved,
    Denied,
    TimedOut,
    Cancelled,
}

pub(crate) fn approval_requested(server: &str) {
    metrics::counter!("approvals_requested_total", "server" => server.to_owned()).increment(1);
}

pub(crate) fn approval_finished(server: &str, outcome: ApprovalOutcome, waited: Duration) {
    let name = match outcome {
        ApprovalOutcome::Approved => "approvals_approved_total",
        ApprovalOutcome::Denied => "approvals_denied_total",
        ApprovalOutcome::TimedOut => "approvals_timed_out_total",
        ApprovalOutcome::Cancelled => "approvals_cancelled_total",
    };
    metrics::counter!(name, "server" => server.to_owned()).increment(1);
    metrics::histogram!("approval_wait_seconds", "server" => server.to_owned())
        .record(waited.as_secs_f64());
}

/// A call decided by a rule, without asking (`decided_by` names the rule kind).
pub(crate) fn decided_by_rule(server: &str, allowed: bool) {
    let outcome = if allowed { "allowed" } else { "denied" };
    metrics::counter!("approval_rule_decisions_total", "server" => server.to_owned(), "outcome" => outcome)
        .increment(1);
}

pub(crate) fn elicitation_requested(server: &str) {
    metrics::counter!("elicitations_requested_total", "server" => server.to_owned()).increment(1);
}

pub(crate) fn elicitation_finished(server: &str, action: &'static str) {
    metrics::counter!("elicitations_finished_total", "server" => server.to_owned(), "action" => action)
        .increment(1);
}
