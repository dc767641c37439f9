//! Sections whose owning crate does not define its config struct yet. Each moves into its
//! crate (same keys, same defaults) when that crate is ready; [`super::Config`] then names the
//! crate's type instead. Keep keys here in step with the README's configuration table.

use serde::Deserialize;
use switchboard_core::{ApprovalPolicy, InvalidSetting};
use tracing_subscriber::EnvFilter;

/// `[approval]`: what happens before a tool runs (moves to the approvals crate/module).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalSection {
    /// Policy for a tool with no explicit policy: `ASK_USER` (default), `ALWAYS_ALLOW`,
    /// `ALWAYS_DENY`.
    pub default_policy: ApprovalPolicy,
    /// An unanswered approval request is denied after this many seconds. Default 60.
    pub timeout_secs: u64,
}

impl Default for ApprovalSection {
    fn default() -> Self {
        Self {
            default_policy: ApprovalPolicy::AskUser,
            timeout_secs: 60,
        }
    }
}

impl ApprovalSection {
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        InvalidSetting::require_positive("timeout_secs", self.timeout_secs)
    }
}

/// `[chat]`: the agent loop (moves to `switchboard-chat`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChatSection {
    /// Most LLM ↔ tool round trips in one turn before the turn is ended. Default 8.
    pub max_tool_steps: u32,
    /// Offer MCP tools to the model at all. Default true. Env also `CHAT_ENABLE_MCP_TOOLS`.
    pub enable_mcp_tools: bool,
    /// Ask for and render citations of tool results. Default false. Env also
    /// `CHAT_ENABLE_CITATIONS`.
    pub enable_citations: bool,
}

impl Default for ChatSection {
    fn default() -> Self {
        Self {
            max_tool_steps: 8,
            enable_mcp_tools: true,
            enable_citations: false,
        }
    }
}

impl ChatSection {
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        InvalidSetting::require_positive("max_tool_steps", u64::from(self.max_tool_steps))
    }
}

/// `[log]`: how the binary logs (owned by the binary).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSection {
    /// `tracing` filter directives, e.g. `info` or `info,switchboard_mcp_client=debug`.
    /// Default `info`.
    pub filter: String,
    /// `text` (default, for people) or `json` (one object per line, for collectors).
    pub format: LogFormat,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

impl Default for LogSection {
    fn default() -> Self {
        Self {
            filter: "info".into(),
            format: LogFormat::Text,
        }
    }
}

impl LogSection {
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        EnvFilter::try_new(&self.filter)
            .map(|_| ())
            .map_err(|error| InvalidSetting::new("filter", error.to_string()))
    }
}
