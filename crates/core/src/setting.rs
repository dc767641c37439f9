//! The one error shape for a bad configuration value, shared so that every crate's config
//! section can report which key is wrong and why, and the binary can add where the value came
//! from (file or environment variable) before it refuses to start.

use std::fmt;

/// A configuration value that parsed but makes no sense (a zero timeout, an empty URL…).
///
/// `key` is relative to the section that validated it (`tool_call_timeout_secs`); the binary
/// prefixes the section name (`mcp.tool_call_timeout_secs`) when it reports the error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidSetting {
    pub key: String,
    pub reason: String,
}

impl InvalidSetting {
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            reason: reason.into(),
        }
    }

    /// Fails with "must be greater than 0" when `value` is zero: the common check for timeouts,
    /// limits and counts where zero would silently disable a safety net.
    pub fn require_positive(key: &str, value: u64) -> Result<(), Self> {
        if value == 0 {
            Err(Self::new(key, "must be greater than 0"))
        } else {
            Ok(())
        }
    }
}

impl fmt::Display for InvalidSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.key, self.reason)
    }
}

impl std::error::Error for InvalidSetting {}
