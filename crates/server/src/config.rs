//! The `[server]` configuration section: where the HTTP listener binds and the limits and
//! timeouts every connection gets. Loaded by the binary; read by [`crate::run`] and [`crate::app`].

use serde::Deserialize;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;
use switchboard_core::InvalidSetting;

/// `[server]` in the configuration file. Every field has a documented default.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Address to listen on. Loopback by default: exposing Switchboard beyond the machine is a
    /// deliberate choice (`0.0.0.0:8080`). Env: `SWITCHBOARD_BIND`.
    pub bind: SocketAddr,
    /// Largest request body accepted, in bytes; larger bodies get 413. Default 2 MiB.
    pub max_request_body_bytes: usize,
    /// A client must send a complete request head within this many seconds, and an idle
    /// keep-alive connection is closed after it (hyper restarts the same timer while it waits for
    /// the next request). Default 10.
    pub header_read_timeout_secs: u64,
    /// On SIGINT/SIGTERM, in-flight requests get this long to finish before the process exits
    /// anyway. Default 30.
    pub shutdown_grace_secs: u64,
    /// Whether `/readyz` also needs the MCP servers: with `true` it answers 503 when every
    /// active MCP server is in ERROR (the old behaviour). Default `false`: readiness is
    /// Switchboard's own (store answers, not draining), and the MCP servers' state is reported
    /// in the body and decides `GET /api/health`.
    pub readiness_requires_mcp: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 8080)),
            max_request_body_bytes: 2 * 1024 * 1024,
            header_read_timeout_secs: 10,
            shutdown_grace_secs: 30,
            readiness_requires_mcp: false,
        }
    }
}

impl ServerConfig {
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        InvalidSetting::require_positive(
            "max_request_body_bytes",
            self.max_request_body_bytes as u64,
        )?;
        InvalidSetting::require_positive(
            "header_read_timeout_secs",
            self.header_read_timeout_secs,
        )?;
        InvalidSetting::require_positive("shutdown_grace_secs", self.shutdown_grace_secs)?;
        Ok(())
    }

    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_secs(self.header_read_timeout_secs)
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_loopback() {
        let config = ServerConfig::default();
        config.validate().unwrap();
        assert!(config.bind.ip().is_loopback());
        assert_eq!(config.bind.port(), 8080);
    }

    #[test]
    fn zero_timeout_is_rejected_by_name() {
        let config = ServerConfig {
            header_read_timeout_secs: 0,
            ..ServerConfig::default()
        };
        let error = config.validate().unwrap_err();
        assert_eq!(error.key, "header_read_timeout_secs");
    }
}
