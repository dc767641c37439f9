//! Approval policy for a (server, tool) pair.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What happens when the assistant wants to call a tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ApprovalPolicy {
    AlwaysAllow,
    AlwaysDeny,
    /// Pause the call and ask the conversation's owner.
    #[default]
    AskUser,
}

impl ApprovalPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::AlwaysAllow => "ALWAYS_ALLOW",
            ApprovalPolicy::AlwaysDeny => "ALWAYS_DENY",
            ApprovalPolicy::AskUser => "ASK_USER",
        }
    }
}

impl fmt::Display for ApprovalPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalPolicy {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "ALWAYS_ALLOW" => Ok(ApprovalPolicy::AlwaysAllow),
            "ALWAYS_DENY" => Ok(ApprovalPolicy::AlwaysDeny),
            "ASK_USER" => Ok(ApprovalPolicy::AskUser),
            other => Err(format!(
                "unknown approval policy '{other}' (expected ALWAYS_ALLOW, ALWAYS_DENY or ASK_USER)"
            )),
        }
    }
}
