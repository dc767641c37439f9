//! `McpClientConfig`: the `[mcp]` section of the configuration file — session lifecycle,
//! call limits, stdio safety and the outbound URL policy — with the documented defaults.
//!
//! This module only describes and validates settings; it does not read files or the
//! environment (the binary composes sections and applies env overrides).

use serde::Deserialize;
use std::time::Duration;
use switchboard_core::InvalidSetting;

/// Settings for talking to upstream MCP servers.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpClientConfig {
    /// Upper bound on connecting and completing the handshake of one session attempt.
    pub session_init_timeout_secs: u64,
    /// Extra attempts after a failed start (so `3` means up to four attempts).
    pub session_init_retries: u32,
    /// First backoff between start attempts; doubles on every retry.
    pub session_init_backoff_ms: u64,
    /// After a session ended in ERROR, callers get the last error until this delay has passed;
    /// the next use after it tries again.
    pub session_error_retry_secs: u64,
    /// A session nobody used for this long is closed (the next use starts a new one).
    pub session_idle_timeout_secs: u64,
    /// How long shutdown waits for every session to close before killing what is left.
    pub shutdown_timeout_secs: u64,
    /// Default per-call timeout; a server's `timeout_ms` overrides it. Progress notifications
    /// restart it, up to [`Self::tool_call_max_timeout_secs`].
    pub tool_call_timeout_secs: u64,
    /// Hard maximum for one call, however much progress the upstream reports.
    pub tool_call_max_timeout_secs: u64,
    /// Longest a tool call that became a task (the MCP tasks extension) is followed, polls
    /// included; the call timeout applies to each poll, not to the task. A task's own `ttl`
    /// ends it earlier.
    pub task_max_secs: u64,
    /// How often a task is polled when its server suggests no `pollInterval`; a suggested
    /// one is honoured between 100 ms and 60 s.
    pub task_poll_interval_ms: u64,
    /// Declare `sampling` to upstreams so that their `sampling/createMessage` reaches a gateway
    /// client that answers sampling (the client whose call caused it). Off by default: the
    /// chat's own models do not answer upstreams, so a chat call's sampling request would be
    /// refused, and some servers offer sampling tools only to clients that declare it.
    pub forward_sampling: bool,
    /// Largest single message (and so largest tool result) accepted from an upstream, in bytes.
    /// A message is refused as soon as it passes the cap (never buffered whole), even one
    /// that never ends.
    pub max_tool_response_bytes: usize,
    /// Calls in flight at once against one server (across all its sessions). A call beyond
    /// the cap waits for a place at most its own timeout, then fails `busy`; a caller who
    /// cancels while waiting leaves at once and nothing is sent.
    pub max_concurrent_calls_per_server: usize,
    /// Calls in flight at once for one conversation (across all servers); waiting as above.
    pub max_concurrent_calls_per_conversation: usize,
    /// Capability cache lifetime; older entries are refreshed before use.
    pub capability_cache_ttl_secs: u64,
    /// Period of the background capability refresh; at most a third of the cache lifetime is
    /// used, so caches are refreshed before they expire (see `refresh` in `switchboard-registry`).
    pub capability_refresh_interval_secs: u64,
    /// A server is reported slow when the median of its last 20 requests (calls, reads, list
    /// pages; failed and timed-out ones included) takes at least this long, or when its last
    /// session start took more than half its init timeout.
    pub slow_call_ms: u64,
    /// stdio children: process safety settings.
    pub stdio: StdioConfig,
    /// Which network destinations the servers an admin registers may reach.
    pub url_policy: UrlPolicyConfig,
    /// Which network destinations servers sent with a request (a chat's `mcp_servers`) may
    /// reach: public addresses only unless opened here. Stricter than [`Self::url_policy`]
    /// because any chatting member can send one.
    pub request_url_policy: RequestUrlPolicyConfig,
}

impl Default for McpClientConfig {
    fn default() -> Self {
        Self {
            session_init_timeout_secs: 10,
            session_init_retries: 3,
            session_init_backoff_ms: 100,
            session_error_retry_secs: 30,
            session_idle_timeout_secs: 30 * 60,
            shutdown_timeout_secs: 30,
            tool_call_timeout_secs: 30,
            tool_call_max_timeout_secs: 300,
            task_max_secs: 24 * 60 * 60,
            task_poll_interval_ms: 1000,
            forward_sampling: false,
            max_tool_response_bytes: 10 * 1024 * 1024,
            max_concurrent_calls_per_server: 10,
            max_concurrent_calls_per_conversation: 10,
            capability_cache_ttl_secs: 5 * 60,
            capability_refresh_interval_secs: 5 * 60,
            slow_call_ms: 2000,
            stdio: StdioConfig::default(),
            url_policy: UrlPolicyConfig::default(),
            request_url_policy: RequestUrlPolicyConfig::default(),
        }
    }
}

/// How stdio servers are started and stopped.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StdioConfig {
    /// Variables copied from Switchboard's own environment into every child (values of
    /// variables not listed here never reach a child). A server's configured `env` is added on
    /// top, except the variables refused by [`crate::server::is_forbidden_env_name`].
    pub env_allowlist: Vec<String>,
    /// After closing a child's stdin, how long to wait before SIGTERM, and again before SIGKILL.
    pub graceful_exit_secs: u64,
    /// Longest stderr line forwarded to the logs (longer lines are cut).
    pub stderr_line_bytes: usize,
    /// Total stderr bytes logged per child; the rest is counted and dropped.
    pub stderr_log_budget_bytes: usize,
    /// How much of the latest stderr output is kept to explain a failure (in `/test`, errors).
    pub stderr_tail_bytes: usize,
}

impl Default for StdioConfig {
    fn default() -> Self {
        Self {
            env_allowlist: [
                "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            graceful_exit_secs: 2,
            stderr_line_bytes: 4 * 1024,
            stderr_log_budget_bytes: 1024 * 1024,
            stderr_tail_bytes: 4 * 1024,
        }
    }
}

/// Outbound URL policy (SSRF guard) of registered servers. Every address a remote transport
/// connects to is checked after DNS resolution; these switches open the guarded ranges.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UrlPolicyConfig {
    /// 127.0.0.0/8, ::1, `localhost` and 0.0.0.0. On by default for local development;
    /// turn it off on a shared deployment.
    pub allow_loopback: bool,
    /// RFC 1918, carrier-grade NAT, IPv6 unique-local and site-local ranges.
    pub allow_private: bool,
    /// 169.254.0.0/16 and fe80::/10 (metadata addresses excluded, see below).
    pub allow_link_local: bool,
    /// Cloud metadata endpoints (169.254.169.254, fd00:ec2::254, 100.100.100.200…).
    pub allow_metadata: bool,
    /// Networks reachable whatever their class (CIDR such as `10.20.0.0/16`, or one address),
    /// for opening one internal service rather than a whole range. Metadata addresses stay
    /// refused unless `allow_metadata`; multicast and reserved ranges always are.
    pub allow_networks: Vec<String>,
}

impl Default for UrlPolicyConfig {
    fn default() -> Self {
        Self {
            allow_loopback: true,
            allow_private: false,
            allow_link_local: false,
            allow_metadata: false,
            allow_networks: Vec::new(),
        }
    }
}

/// The URL policy of servers sent with a request (`[mcp.request_url_policy]`): everything
/// guarded is refused by default, cloud metadata always.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RequestUrlPolicyConfig {
    /// Loopback (this machine): `/mcp` of Switchboard itself, local services.
    pub allow_loopback: bool,
    /// Private ranges, as [`UrlPolicyConfig::allow_private`].
    pub allow_private: bool,
    /// Link-local ranges (metadata addresses excluded).
    pub allow_link_local: bool,
    /// Networks reachable whatever their class (CIDR or one address), metadata excluded.
    pub allow_networks: Vec<String>,
}

impl From<&RequestUrlPolicyConfig> for UrlPolicyConfig {
    fn from(request: &RequestUrlPolicyConfig) -> Self {
        Self {
            allow_loopback: request.allow_loopback,
            allow_private: request.allow_private,
            allow_link_local: request.allow_link_local,
            allow_metadata: false,
            allow_networks: request.allow_networks.clone(),
        }
    }
}

/// Parses `allow_networks` entries: CIDR (`10.0.0.0/8`, `fd00::/8`) or one address.
pub(crate) fn parse_networks(entries: &[String]) -> Result<Vec<ipnet::IpNet>, String> {
    entries
        .iter()
        .map(|entry| {
            let text = entry.trim();
            text.parse::<ipnet::IpNet>()
                .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| format!("'{entry}' is neither a CIDR network nor an IP address"))
        })
        .collect()
}

impl McpClientConfig {
    /// Checks every value; the error names the key relative to the `[mcp]` section.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        self.validate_timeouts()?;
        self.validate_limits()?;
        parse_networks(&self.url_policy.allow_networks)
            .map_err(|reason| InvalidSetting::new("url_policy.allow_networks", reason))?;
        parse_networks(&self.request_url_policy.allow_networks)
            .map_err(|reason| InvalidSetting::new("request_url_policy.allow_networks", reason))?;
        self.validate_env_allowlist()
    }

    /// The session and tool-call timeouts: positive, the maximum call timeout not under the
    /// default.
    fn validate_timeouts(&self) -> Result<(), InvalidSetting> {
        InvalidSetting::require_positive(
            "session_init_timeout_secs",
            self.session_init_timeout_secs,
        )?;
        InvalidSetting::require_positive("session_init_backoff_ms", self.session_init_backoff_ms)?;
        InvalidSetting::require_positive(
            "session_error_retry_secs",
            self.session_error_retry_secs,
        )?;
        InvalidSetting::require_positive(
            "session_idle_timeout_secs",
            self.session_idle_timeout_secs,
        )?;
        InvalidSetting::require_positive("shutdown_timeout_secs", self.shutdown_timeout_secs)?;
        InvalidSetting::require_positive("tool_call_timeout_secs", self.tool_call_timeout_secs)?;
        InvalidSetting::require_positive(
            "tool_call_max_timeout_secs",
            self.tool_call_max_timeout_secs,
        )?;
        InvalidSetting::require_positive("task_max_secs", self.task_max_secs)?;
        InvalidSetting::require_positive("task_poll_interval_ms", self.task_poll_interval_ms)?;
        if self.tool_call_max_timeout_secs < self.tool_call_timeout_secs {
            return Err(InvalidSetting::new(
                "tool_call_max_timeout_secs",
                format!(
                    "must be at least tool_call_timeout_secs ({})",
                    self.tool_call_timeout_secs
                ),
            ));
        }
        Ok(())
    }

    /// Sizes, concurrency caps, cache intervals and the stdio child settings: positive (a
    /// tool answer may be no smaller than 1 KiB).
    fn validate_limits(&self) -> Result<(), InvalidSetting> {
        if self.max_tool_response_bytes < 1024 {
            return Err(InvalidSetting::new(
                "max_tool_response_bytes",
                "must be at least 1024",
            ));
        }
        InvalidSetting::require_positive(
            "max_concurrent_calls_per_server",
            self.max_concurrent_calls_per_server as u64,
        )?;
        InvalidSetting::require_positive(
            "max_concurrent_calls_per_conversation",
            self.max_concurrent_calls_per_conversation as u64,
        )?;
        InvalidSetting::require_positive(
            "capability_cache_ttl_secs",
            self.capability_cache_ttl_secs,
        )?;
        InvalidSetting::require_positive(
            "capability_refresh_interval_secs",
            self.capability_refresh_interval_secs,
        )?;
        InvalidSetting::require_positive("slow_call_ms", self.slow_call_ms)?;
        InvalidSetting::require_positive(
            "stdio.graceful_exit_secs",
            self.stdio.graceful_exit_secs,
        )?;
        InvalidSetting::require_positive(
            "stdio.stderr_line_bytes",
            self.stdio.stderr_line_bytes as u64,
        )?;
        Ok(())
    }

    /// The environment variables passed to stdio children: names, and none that can inject
    /// code into the child.
    fn validate_env_allowlist(&self) -> Result<(), InvalidSetting> {
        for name in &self.stdio.env_allowlist {
            if name.is_empty() || name.contains('=') {
                return Err(InvalidSetting::new(
                    "stdio.env_allowlist",
                    format!("'{name}' is not a variable name"),
                ));
            }
            if crate::server::is_forbidden_env_name(name) {
                return Err(InvalidSetting::new(
                    "stdio.env_allowlist",
                    format!(
                        "'{name}' can inject code into a child process and cannot be passed through"
                    ),
                ));
            }
        }
        Ok(())
    }

    pub fn session_init_timeout(&self) -> Duration {
        Duration::from_secs(self.session_init_timeout_secs)
    }

    pub fn session_init_backoff(&self) -> Duration {
        Duration::from_millis(self.session_init_backoff_ms)
    }

    pub fn session_error_retry(&self) -> Duration {
        Duration::from_secs(self.session_error_retry_secs)
    }

    pub fn session_idle_timeout(&self) -> Duration {
        Duration::from_secs(self.session_idle_timeout_secs)
    }

    pub fn shutdown_timeout(&self) -> Duration {
        Duration::from_secs(self.shutdown_timeout_secs)
    }

    pub fn tool_call_timeout(&self) -> Duration {
        Duration::from_secs(self.tool_call_timeout_secs)
    }

    pub fn tool_call_max_timeout(&self) -> Duration {
        Duration::from_secs(self.tool_call_max_timeout_secs)
    }

    pub fn task_max(&self) -> Duration {
        Duration::from_secs(self.task_max_secs)
    }

    pub fn task_poll_interval(&self) -> Duration {
        Duration::from_millis(self.task_poll_interval_ms)
    }

    pub fn capability_cache_ttl(&self) -> Duration {
        Duration::from_secs(self.capability_cache_ttl_secs)
    }

    pub fn capability_refresh_interval(&self) -> Duration {
        Duration::from_secs(self.capability_refresh_interval_secs)
    }

    pub fn slow_call(&self) -> Duration {
        Duration::from_millis(self.slow_call_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_documented_values_and_validate() {
        let config = McpClientConfig::default();
        assert_eq!(config.session_idle_timeout(), Duration::from_secs(1800));
        assert_eq!(config.session_init_timeout(), Duration::from_secs(10));
        assert_eq!(config.capability_cache_ttl(), Duration::from_secs(300));
        assert_eq!(config.tool_call_timeout(), Duration::from_secs(30));
        assert_eq!(config.max_tool_response_bytes, 10 * 1024 * 1024);
        assert_eq!(config.max_concurrent_calls_per_conversation, 10);
        assert_eq!(config.slow_call(), Duration::from_secs(2));
        assert!(config.url_policy.allow_loopback);
        assert_eq!(config.request_url_policy, RequestUrlPolicyConfig::default());
        assert!(!config.request_url_policy.allow_loopback);
        config.validate().unwrap();
    }

    #[test]
    fn parses_partial_toml_and_names_the_bad_key() {
        let config: McpClientConfig = serde_json::from_value(serde_json::json!({
            "tool_call_timeout_secs": 0,
            "url_policy": {"allow_loopback": false}
        }))
        .unwrap();
        assert!(!config.url_policy.allow_loopback);
        assert_eq!(config.session_init_retries, 3);
        let error = config.validate().unwrap_err();
        assert_eq!(error.key, "tool_call_timeout_secs");

        // A partial request policy keeps the strict defaults for what it does not name.
        let config: McpClientConfig = serde_json::from_value(serde_json::json!({
            "request_url_policy": {"allow_private": true, "allow_networks": ["10.1.0.0/16", "::1"]}
        }))
        .unwrap();
        assert!(config.request_url_policy.allow_private);
        assert!(!config.request_url_policy.allow_loopback);
        config.validate().unwrap();
        let bad: McpClientConfig = serde_json::from_value(serde_json::json!({
            "request_url_policy": {"allow_networks": ["10.1.0.0/99"]}
        }))
        .unwrap();
        assert_eq!(
            bad.validate().unwrap_err().key,
            "request_url_policy.allow_networks"
        );
    }

    #[test]
    fn refuses_unknown_keys_and_injection_variables_in_the_allowlist() {
        let unknown =
            serde_json::from_value::<McpClientConfig>(serde_json::json!({"tool_timeout": 3}));
        assert!(unknown.is_err());
        let mut config = McpClientConfig::default();
        config.stdio.env_allowlist.push("LD_PRELOAD".into());
        assert_eq!(config.validate().unwrap_err().key, "stdio.env_allowlist");
    }
}
