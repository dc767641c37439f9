//! `[approval]` configuration: what happens to a tool call no rule covers, and how long a
//! person has to answer. Nothing here does IO.

use serde::Deserialize;
use std::time::Duration;
use switchboard_core::{ApprovalPolicy, InvalidSetting};

/// The `[approval]` section.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalConfig {
    /// Policy for a tool with no explicit policy: `ASK_USER` (default), `ALWAYS_ALLOW`,
    /// `ALWAYS_DENY`.
    pub default_policy: ApprovalPolicy,
    /// An unanswered approval request is denied after this many seconds. Default 60.
    pub timeout_secs: u64,
    /// Milliseconds instead of `timeout_secs` when set (tests use short timeouts).
    pub timeout_ms: Option<u64>,
    /// An unanswered elicitation form is cancelled after this many seconds. Default 120.
    pub elicitation_timeout_secs: u64,
    /// Longest tool description (in characters) shown for approval; longer ones are cut
    /// with a marker. Default 2000.
    pub description_max_chars: usize,
    /// How often a waiting call looks in the store for a decision or answer recorded by
    /// another replica (the fallback when no notice arrives), in milliseconds. Default 2000.
    pub decision_poll_ms: u64,
    /// PostgreSQL only: listen for other replicas' decisions (`LISTEN switchboard_decisions`),
    /// so a call waiting here wakes at once when another replica records its decision. Turn
    /// off behind a proxy that cannot hold `LISTEN` (PgBouncer in transaction mode); the poll
    /// still finds every decision. Default true.
    pub listen_for_decisions: bool,
}

impl Default for ApprovalConfig {
    fn default() -> Self {
        Self {
            default_policy: ApprovalPolicy::AskUser,
            timeout_secs: 60,
            timeout_ms: None,
            elicitation_timeout_secs: 120,
            description_max_chars: 2000,
            decision_poll_ms: 2000,
            listen_for_decisions: true,
        }
    }
}

impl ApprovalConfig {
    /// The first invalid key, relative to `[approval]`.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        InvalidSetting::require_positive("timeout_secs", self.timeout_secs)?;
        if let Some(milliseconds) = self.timeout_ms {
            InvalidSetting::require_positive("timeout_ms", milliseconds)?;
        }
        InvalidSetting::require_positive(
            "elicitation_timeout_secs",
            self.elicitation_timeout_secs,
        )?;
        InvalidSetting::require_positive("decision_poll_ms", self.decision_poll_ms)?;
        if self.description_max_chars < 40 {
            return Err(InvalidSetting::new(
                "description_max_chars",
                "must be at least 40",
            ));
        }
        Ok(())
    }

    /// How long an approval request waits.
    pub fn approval_timeout(&self) -> Duration {
        match self.timeout_ms {
            Some(milliseconds) => Duration::from_millis(milliseconds),
            None => Duration::from_secs(self.timeout_secs),
        }
    }

    pub fn elicitation_timeout(&self) -> Duration {
        Duration::from_secs(self.elicitation_timeout_secs)
    }

    /// How often a waiting call looks for a decision recorded elsewhere.
    pub fn decision_poll_interval(&self) -> Duration {
        Duration::from_millis(self.decision_poll_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_documentation_and_bad_values_name_their_key() {
        let config = ApprovalConfig::default();
        assert_eq!(config.default_policy, ApprovalPolicy::AskUser);
        assert_eq!(config.approval_timeout(), Duration::from_secs(60));
        assert_eq!(config.decision_poll_interval(), Duration::from_secs(2));
        assert!(config.listen_for_decisions);
        config.validate().unwrap();
        let parsed: ApprovalConfig =
            toml_like(r#"{"default_policy": "ALWAYS_DENY", "timeout_ms": 250}"#);
        assert_eq!(parsed.default_policy, ApprovalPolicy::AlwaysDeny);
        assert_eq!(parsed.approval_timeout(), Duration::from_millis(250));
        for (config, key) in [
            (
                ApprovalConfig {
                    timeout_secs: 0,
                    ..ApprovalConfig::default()
                },
                "timeout_secs",
            ),
            (
                ApprovalConfig {
                    timeout_ms: Some(0),
                    ..ApprovalConfig::default()
                },
                "timeout_ms",
            ),
            (
                ApprovalConfig {
                    decision_poll_ms: 0,
                    ..ApprovalConfig::default()
                },
                "decision_poll_ms",
            ),
            (
                ApprovalConfig {
                    description_max_chars: 3,
                    ..ApprovalConfig::default()
                },
                "description_max_chars",
            ),
        ] {
            assert_eq!(config.validate().unwrap_err().key, key);
        }
        assert!(serde_json::from_str::<ApprovalConfig>(r#"{"timeout": 5}"#).is_err());
    }

    fn toml_like(json: &str) -> ApprovalConfig {
        serde_json::from_str(json).unwrap()
    }
}
