//! Sections the binary owns itself (every other section is defined by its crate). Keep keys
//! here in step with the README's configuration table.

use serde::Deserialize;
use switchboard_core::InvalidSetting;
use tracing_subscriber::EnvFilter;

/// The log filter when none is configured (see [`LogSection::filter`]).
pub const DEFAULT_LOG_FILTER: &str =
    "info,rmcp=off,rmcp::service::client=warn,rmcp::transport::streamable_http_server=warn";

/// `[log]`: how the binary logs (owned by the binary).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSection {
    /// `tracing` filter directives, e.g. `info` or `info,switchboard_mcp_client=debug`.
    /// Default [`DEFAULT_LOG_FILTER`]: rmcp logs ordinary events as errors (a refused
    /// connection, a retried unresolvable host, a close that fails at shutdown), one warning
    /// per JSON-RPC error answer, and every session at `info` with the peer's whole capability
    /// set; our own code logs each of those events once, at its level, in its own words. What
    /// is left of rmcp means something: an upstream breaking the protocol
    /// (`rmcp::service::client`) and requests our MCP server refuses for their `Host` or
    /// `Origin` (`rmcp::transport::streamable_http_server`).
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
            filter: DEFAULT_LOG_FILTER.into(),
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
