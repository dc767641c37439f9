//! Which MCP servers and tools a conversation may use: a bud's `mcp_config`, a conversation's
//! `mcp_config_overrides`, and their resolution against the workspace's registered servers.
//!
//! Rules (as in the design): servers = bud servers ∪ override `additional_servers`; disabled
//! tools = bud ∪ override; the override's `tool_choice` wins; only *active* servers of the
//! conversation's own workspace take part. A server reference that is not a server of the
//! workspace (unknown, deleted, or another workspace's) is refused with an error naming the
//! field — it is never silently dropped, and never reveals whether the id exists elsewhere.

mod model;
mod resolve;

pub use model::{BudMcpConfig, McpConfigError, McpConfigOverrides, ToolChoiceSetting};
pub use resolve::{ResolvedMcpConfig, ToolKey, resolve_mcp_config};
