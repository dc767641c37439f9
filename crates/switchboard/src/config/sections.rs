//! Sections the binary owns itself (every other section is defined by its crate). Keep keys
//! here in step with the README's configuration table.

use serde::Deserialize;
use switchboard_core::InvalidSetting;
use tracing_subscriber::EnvFilter;

/// The log filter when none is configured (see [`LogSection::filter`]).
pub const DEFAULT_LOG_FILTER: &str = "info,rmcp=warn,rmcp::service=error";

/// `[log]`: how the binary logs (owned by the binary).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSection {
    /// `tracing` filter directives, e.g. `info` or `info,switchboard_mcp_client=debug`.
    /// Default `info,rmcp=warn,rmcp::service=error`: rmcp logs every MCP session it opens or
    /// closes at `info` with the peer's whole capability set — several lines per call to our
    /// own `/mcp` — while our own code already logs the connection events that matter (and
    /// audits them); and `rmcp::service` warns of every error answer with the caller's request
    /// id and the error's `data` (which may echo the arguments), which we never log.
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
