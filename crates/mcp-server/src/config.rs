//! `[kg]`: the knowledge-graph MCP endpoint's settings — who may connect (hosts, origins,
//! anonymous scopes), how hard (rate limit), how long answers are reused (caches) and whether
//! the default workspace starts with the sample dataset.

use serde::Deserialize;
use std::time::Duration;
use switchboard_core::{InvalidSetting, ScopeSet};

/// Default of `kg.max_sessions_per_caller`.
pub const DEFAULT_MAX_SESSIONS_PER_CALLER: usize = 256;
/// Default of `kg.unused_session_timeout_secs`.
pub const DEFAULT_UNUSED_SESSION_TIMEOUT_SECS: u64 = 60;

/// Environment variable granting scopes to requests without a token (empty by default).
pub const ANONYMOUS_SCOPES_ENV: &str = "SWITCHBOARD_MCP_ANONYMOUS_SCOPES";

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KgConfig {
    /// Load the sample graph into the default workspace when it has no graph yet. Default true.
    pub load_sample_dataset: bool,
    /// `Host` values accepted at `/mcp` (`name` or `name:port`); anything else is 403, which
    /// blocks DNS rebinding. Default: localhost, 127.0.0.1, ::1. An empty list accepts every
    /// host (only behind a proxy that checks it).
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted when a request carries one (`scheme://host[:port|:*]`, or
    /// `null`); a present, unlisted origin is 403. Default: http loopback origins, any port.
    pub allowed_origins: Vec<String>,
    /// Scopes given to requests without `Authorization` (space- or comma-separated), in the
    /// default workspace. Default empty: such requests get 401. Env
    /// `SWITCHBOARD_MCP_ANONYMOUS_SCOPES`.
    pub anonymous_scopes: String,
    /// Sustained requests per minute per token (tool calls, reads, prompts, `initialize`).
    /// Default 600.
    pub rate_limit_per_minute: u32,
    /// Requests a token may make at once above the sustained rate. Default 100.
    pub rate_limit_burst: u32,
    /// An MCP session nobody used for this long is closed. Default 1800.
    pub session_idle_timeout_secs: u64,
    /// Sessions one caller may hold at once (a token; without a token, one peer address); a
    /// new session beyond closes the caller's least recently used one. Default 256.
    pub max_sessions_per_caller: usize,
    /// A session with no request after `initialize` (but `notifications/initialized`) is
    /// closed after this many seconds. Default 60.
    pub unused_session_timeout_secs: u64,
    /// How long a verified token is trusted before the store is asked again. Default 10.
    pub token_cache_secs: u64,
    /// Reuse of `schema_version` answers. Default 300 (5 min).
    pub schema_version_cache_secs: u64,
    /// Reuse of type answers (`type_info`, `relationship_info`, `search_types`). Default 900.
    pub type_cache_secs: u64,
    /// Reuse of `schema_changelog` answers. Default 60.
    pub changelog_cache_secs: u64,
    /// Interval of keep-alive comments on open SSE streams. Default 15.
    pub sse_keep_alive_secs: u64,
    /// Sustained requests per minute per token at the gateway (`tools/call`, `resources/read`,
    /// `prompts/get`, `completion/complete`, `initialize`), its own budget apart from `/mcp`'s.
    /// Default 600.
    pub gateway_rate_limit_per_minute: u32,
    /// Requests a token may make at once at the gateway above the sustained rate. Default 100.
    pub gateway_rate_limit_burst: u32,
    /// Items per page of the gateway's lists (`tools/list`, `resources/list`,
    /// `resources/templates/list`, `prompts/list`). Default 100.
    pub gateway_page_size: usize,
}

impl Default for KgConfig {
    fn default() -> Self {
        Self {
            load_sample_dataset: true,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: vec![
                "http://localhost:*".into(),
                "http://127.0.0.1:*".into(),
                "http://[::1]:*".into(),
            ],
            anonymous_scopes: String::new(),
            rate_limit_per_minute: 600,
            rate_limit_burst: 100,
            session_idle_timeout_secs: 30 * 60,
            max_sessions_per_caller: DEFAULT_MAX_SESSIONS_PER_CALLER,
            unused_session_timeout_secs: DEFAULT_UNUSED_SESSION_TIMEOUT_SECS,
            token_cache_secs: 10,
            schema_version_cache_secs: 5 * 60,
            type_cache_secs: 15 * 60,
            changelog_cache_secs: 60,
            sse_keep_alive_secs: 15,
            gateway_rate_limit_per_minute: 600,
            gateway_rate_limit_burst: 100,
            gateway_page_size: crate::gateway::DEFAULT_PAGE_SIZE,
        }
    }
}

impl KgConfig {
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        self.anonymous_scope_set()?;
        for origin in &self.allowed_origins {
            crate::origin_policy::AllowedOrigin::parse(origin)
                .map_err(|error| InvalidSetting::new("allowed_origins", error.to_string()))?;
        }
        for host in &self.allowed_hosts {
            crate::origin_policy::AllowedHost::parse(host)
                .map_err(|error| InvalidSetting::new("allowed_hosts", error.to_string()))?;
        }
        InvalidSetting::require_positive(
            "rate_limit_per_minute",
            u64::from(self.rate_limit_per_minute),
        )?;
        InvalidSetting::require_positive("rate_limit_burst", u64::from(self.rate_limit_burst))?;
        for (key, value) in [
            ("session_idle_timeout_secs", self.session_idle_timeout_secs),
            (
                "max_sessions_per_caller",
                self.max_sessions_per_caller as u64,
            ),
            (
                "unused_session_timeout_secs",
                self.unused_session_timeout_secs,
            ),
            ("token_cache_secs", self.token_cache_secs),
            ("schema_version_cache_secs", self.schema_version_cache_secs),
            ("type_cache_secs", self.type_cache_secs),
            ("changelog_cache_secs", self.changelog_cache_secs),
            ("sse_keep_alive_secs", self.sse_keep_alive_secs),
            (
                "gateway_rate_limit_per_minute",
                u64::from(self.gateway_rate_limit_per_minute),
            ),
            (
                "gateway_rate_limit_burst",
                u64::from(self.gateway_rate_limit_burst),
            ),
            ("gateway_page_size", self.gateway_page_size as u64),
        ] {
            InvalidSetting::require_positive(key, value)?;
        }
        Ok(())
    }

    /// The parsed `anonymous_scopes`.
    pub fn anonymous_scope_set(&self) -> Result<ScopeSet, InvalidSetting> {
        ScopeSet::parse_list(&self.anonymous_scopes)
            .map_err(|unknown| InvalidSetting::new("anonymous_scopes", unknown.to_string()))
    }

    /// Applies `SWITCHBOARD_MCP_ANONYMOUS_SCOPES` when set (for binaries that do not go
    /// through the main configuration loader).
    pub fn with_env_overrides(mut self, lookup: impl Fn(&str) -> Option<String>) -> Self {
        if let Some(scopes) = lookup(ANONYMOUS_SCOPES_ENV) {
            self.anonymous_scopes = scopes;
        }
        self
    }

    pub fn cache_lifetimes(&self) -> CacheLifetimes {
        CacheLifetimes {
            schema_version: Duration::from_secs(self.schema_version_cache_secs),
            types: Duration::from_secs(self.type_cache_secs),
            changelog: Duration::from_secs(self.changelog_cache_secs),
        }
    }
}

/// How long cached answers live (a schema change drops them at once regardless).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheLifetimes {
    pub schema_version: Duration,
    pub types: Duration,
    pub changelog: Duration,
}

impl Default for CacheLifetimes {
    fn default() -> Self {
        KgConfig::default().cache_lifetimes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_reject_bad_values_by_key() {
        assert!(KgConfig::default().validate().is_ok());
        let bad_scope = KgConfig {
            anonymous_scopes: "schema:read root".into(),
            ..KgConfig::default()
        };
        assert_eq!(bad_scope.validate().unwrap_err().key, "anonymous_scopes");
        let bad_origin = KgConfig {
            allowed_origins: vec!["localhost".into()],
            ..KgConfig::default()
        };
        assert_eq!(bad_origin.validate().unwrap_err().key, "allowed_origins");
        let zero = KgConfig {
            rate_limit_per_minute: 0,
            ..KgConfig::default()
        };
        assert_eq!(zero.validate().unwrap_err().key, "rate_limit_per_minute");
    }

    #[test]
    fn env_override_sets_anonymous_scopes() {
        let config = KgConfig::default().with_env_overrides(|name| {
            (name == ANONYMOUS_SCOPES_ENV).then(|| "schema:read,data:read".to_owned())
        });
        let scopes = config.anonymous_scope_set().unwrap();
        assert_eq!(scopes.names(), vec!["schema:read", "data:read"]);
    }
}
