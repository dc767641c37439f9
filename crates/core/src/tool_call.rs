//! The recorded life of one tool call.
//!
//! `Proposed → Approved | Denied`, `Approved → Dispatched`, `Dispatched → Completed | Failed |
//! Unknown`. A call may also fail before it leaves (`Proposed | Approved → Failed`: invalid
//! arguments, server unavailable). `Unknown` means the request may have reached the upstream
//! but no answer was recorded (crash, upstream death): such a call is never re-run silently.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallState {
    Proposed,
    Approved,
    Denied,
    Dispatched,
    Completed,
    Failed,
    Unknown,
}

/// A transition the state machine does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool call cannot go from {from} to {to}")]
pub struct ToolCallTransitionError {
    pub from: ToolCallState,
    pub to: ToolCallState,
}

impl ToolCallState {
    pub const ALL: [ToolCallState; 7] = [
        ToolCallState::Proposed,
        ToolCallState::Approved,
        ToolCallState::Denied,
        ToolCallState::Dispatched,
        ToolCallState::Completed,
        ToolCallState::Failed,
        ToolCallState::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolCallState::Proposed => "proposed",
            ToolCallState::Approved => "approved",
            ToolCallState::Denied => "denied",
            ToolCallState::Dispatched => "dispatched",
            ToolCallState::Completed => "completed",
            ToolCallState::Failed => "failed",
            ToolCallState::Unknown => "unknown",
        }
    }

    /// No further transition is possible.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            ToolCallState::Denied
                | ToolCallState::Completed
                | ToolCallState::Failed
                | ToolCallState::Unknown
        )
    }

    /// Validates `self → next`.
    pub fn transition(self, next: ToolCallState) -> Result<ToolCallState, ToolCallTransitionError> {
        use ToolCallState::*;
        let allowed = matches!(
            (self, next),
            (Proposed, Approved | Denied | Failed)
                | (Approved, Dispatched | Failed)
                | (Dispatched, Completed | Failed | Unknown)
        );
        if allowed {
            Ok(next)
        } else {
            Err(ToolCallTransitionError {
                from: self,
                to: next,
            })
        }
    }
}

impl fmt::Display for ToolCallState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ToolCallState {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        ToolCallState::ALL
            .into_iter()
            .find(|state| state.as_str() == value)
            .ok_or_else(|| format!("unknown tool call state '{value}'"))
    }
}

#[cfg(test)]
mod tests {
    use super::ToolCallState::*;
    use super::*;

    #[test]
    fn happy_path_is_allowed() {
        let state = Proposed.transition(Approved).unwrap();
        let state = state.transition(Dispatched).unwrap();
        assert_eq!(state.transition(Completed).unwrap(), Completed);
    }

    #[test]
    fn dispatched_calls_cannot_be_redispatched_or_reproposed() {
        assert!(Dispatched.transition(Dispatched).is_err());
        assert!(Unknown.transition(Dispatched).is_err());
        assert!(Proposed.transition(Dispatched).is_err());
        assert!(Denied.transition(Approved).is_err());
    }

    #[test]
    fn terminal_states_have_no_successor() {
        for from in ToolCallState::ALL.into_iter().filter(|s| s.is_terminal()) {
            for to in ToolCallState::ALL {
                assert!(from.transition(to).is_err(), "{from} -> {to}");
            }
        }
    }
}
