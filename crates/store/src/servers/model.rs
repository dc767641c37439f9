//! The shapes of a registered MCP server: what a caller sends to create or change one, what the
//! store returns, and the secrets kept apart from both.

use super::auth::{ServerAuthConfig, validate_auth};
use crate::error::StoreError;
use crate::validate;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use switchboard_core::{ServerId, SessionScope, TransportKind, WorkspaceId};

/// Connection state of an upstream as last observed by the MCP client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ServerStatus {
    /// Registered, no session open (the initial state).
    #[default]
    Disconnected,
    Connecting,
    Connected,
    /// The last attempt failed; `last_error` says why.
    Error,
}

/// Outcome of the last capability sync (tools/resources/prompts listing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SyncStatus {
    #[default]
    NeverSynced,
    Syncing,
    Synced,
    Failed,
}

macro_rules! text_enum {
    ($type:ident, $what:literal, { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $type {
            pub fn as_str(self) -> &'static str {
                match self { $($type::$variant => $text),+ }
            }
        }

        impl fmt::Display for $type {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $type {
            type Err = String;

            fn from_str(value: &str) -> Result<Self, Self::Err> {
                match value {
                    $($text => Ok($type::$variant),)+
                    other => Err(format!(concat!("unknown ", $what, " '{}'"), other)),
                }
            }
        }
    };
}

text_enum!(ServerStatus, "server status", {
    Disconnected => "DISCONNECTED",
    Connecting => "CONNECTING",
    Connected => "CONNECTED",
    Error => "ERROR",
});

text_enum!(SyncStatus, "sync status", {
    NeverSynced => "NEVER_SYNCED",
    Syncing => "SYNCING",
    Synced => "SYNCED",
    Failed => "FAILED",
});

/// Per-server connection settings. Unset values fall back to the `[mcp]` configuration.
/// Keys this struct does not name are kept in `extra` and round-trip unchanged, so the MCP
/// client can add settings without a migration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerConnectionConfig {
    /// Tool call timeout for this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Session initialisation timeout for this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_timeout_ms: Option<u64>,
    /// Who shares one upstream session.
    #[serde(default)]
    pub session_scope: SessionScope,
    /// How callers authenticate (absent in rows from before it: the default).
    #[serde(default, skip_serializing_if = "ServerAuthConfig::is_default")]
    pub auth: ServerAuthConfig,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

/// Credentials used to reach an upstream. Stored only encrypted; `Debug` shows names, never
/// values. The API answers with [`ServerSecretsSummary`] instead.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerSecrets {
    /// Extra HTTP headers (e.g. `Authorization`) for remote transports.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Sent as `Authorization: Bearer …` unless a header already sets it.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Environment variables for a stdio child process.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The secret of the admin's pre-registered OAuth client (`auth.oauth.client_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_client_secret: Option<String>,
}

impl ServerSecrets {
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty()
            && self.api_key.is_none()
            && self.env.is_empty()
            && self.oauth_client_secret.is_none()
    }

    /// Names of what is set, without values.
    pub fn summary(&self) -> ServerSecretsSummary {
        ServerSecretsSummary {
            header_names: self.headers.keys().cloned().collect(),
            env_names: self.env.keys().cloned().collect(),
            has_api_key: self.api_key.is_some(),
            has_oauth_client_secret: self.oauth_client_secret.is_some(),
        }
    }
}

impl fmt::Debug for ServerSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerSecrets")
            .field(
                "headers",
                &self
                    .headers
                    .keys()
                    .map(|name| (name, "[REDACTED]"))
                    .collect::<BTreeMap<_, _>>(),
            )
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field(
                "env",
                &self
                    .env
                    .keys()
                    .map(|name| (name, "[REDACTED]"))
                    .collect::<BTreeMap<_, _>>(),
            )
            .field(
                "oauth_client_secret",
                &self.oauth_client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .finish()
    }
}

/// What is configured, safe to show: names of headers and env vars, whether a key is set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerSecretsSummary {
    #[serde(default)]
    pub header_names: Vec<String>,
    #[serde(default)]
    pub env_names: Vec<String>,
    #[serde(default)]
    pub has_api_key: bool,
    #[serde(default)]
    pub has_oauth_client_secret: bool,
}

/// A server to register.
#[derive(Clone, Debug, PartialEq)]
pub struct NewServer {
    /// Unique in the workspace; 1–64 of `A–Z a–z 0–9 _ -` (it prefixes tool names).
    pub name: String,
    pub transport: TransportKind,
    /// Required for remote transports (http(s) or ws(s) as the transport needs).
    pub url: Option<String>,
    /// Required for stdio.
    pub command: Option<String>,
    pub args: Vec<String>,
    pub connection: ServerConnectionConfig,
    pub secrets: ServerSecrets,
    pub is_active: bool,
}

impl NewServer {
    /// An active remote server (`url` over `transport`) with the default connection settings
    /// and no secrets; set the rest with struct update syntax.
    pub fn remote(
        name: impl Into<String>,
        transport: TransportKind,
        url: impl Into<String>,
    ) -> Self {
        NewServer {
            name: name.into(),
            transport,
            url: Some(url.into()),
            command: None,
            args: Vec::new(),
            connection: ServerConnectionConfig::default(),
            secrets: ServerSecrets::default(),
            is_active: true,
        }
    }
}

/// A change to a server's configuration; `None` leaves a field as it is. For nullable fields
/// `Some(None)` clears them. `secrets: Some(…)` replaces all secrets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerPatch {
    pub name: Option<String>,
    pub transport: Option<TransportKind>,
    pub url: Option<Option<String>>,
    pub command: Option<Option<String>>,
    pub args: Option<Vec<String>>,
    pub connection: Option<ServerConnectionConfig>,
    pub secrets: Option<ServerSecrets>,
    pub is_active: Option<bool>,
}

/// A registered server as the store returns it: no secret values, only their summary.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerRecord {
    pub id: ServerId,
    pub workspace_id: WorkspaceId,
    pub name: String,
    pub transport: TransportKind,
    pub url: Option<String>,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub connection: ServerConnectionConfig,
    pub secrets: ServerSecretsSummary,
    pub status: ServerStatus,
    pub last_error: Option<String>,
    /// Capability lists as the upstream last returned them (JSON arrays), `None` before a sync.
    pub tools_cache: Option<Value>,
    pub resources_cache: Option<Value>,
    pub prompts_cache: Option<Value>,
    pub last_synced_at: Option<DateTime<Utc>>,
    pub sync_status: SyncStatus,
    /// Starts at 1 and grows by one with every configuration change (optimistic locking).
    /// Status and cache updates do not change it.
    pub version: i64,
    pub is_active: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The result of a capability sync, written in one statement.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerSync {
    pub sync_status: SyncStatus,
    /// `None` keeps the previous cache (e.g. a failed sync).
    pub tools: Option<Value>,
    pub resources: Option<Value>,
    pub prompts: Option<Value>,
    pub synced_at: DateTime<Utc>,
    /// The failure, for `SyncStatus::Failed`; cleared otherwise.
    pub error: Option<String>,
}

/// A server's configuration as a create or an update would store it: the endpoint fields
/// agree with the transport ([`validate_endpoint`]) and no text holds U+0000 (see
/// [`validate::no_nul`]); secrets are checked only for their names (values are stored
/// encrypted), and only when they are being set.
pub(crate) fn validate_configuration(
    transport: TransportKind,
    url: Option<&str>,
    command: Option<&str>,
    args: &[String],
    connection: &ServerConnectionConfig,
    secrets: Option<&ServerSecrets>,
) -> Result<(), StoreError> {
    validate_endpoint(transport, url, command)?;
    validate_auth(transport, &connection.auth, secrets)?;
    validate::no_nul("url", url.unwrap_or_default())?;
    validate::no_nul("command", command.unwrap_or_default())?;
    args.iter()
        .try_for_each(|arg| validate::no_nul("args", arg))?;
    for (key, value) in &connection.extra {
        validate::no_nul("connection", key)?;
        validate::no_nul_in_json("connection", value)?;
    }
    if let Some(secrets) = secrets {
        secrets
            .headers
            .keys()
            .try_for_each(|name| validate::no_nul("secrets.headers", name))?;
        secrets
            .env
            .keys()
            .try_for_each(|name| validate::no_nul("secrets.env", name))?;
    }
    Ok(())
}

/// The configuration fields that must agree with each other, checked on create and update.
pub(crate) fn validate_endpoint(
    transport: TransportKind,
    url: Option<&str>,
    command: Option<&str>,
) -> Result<(), StoreError> {
    if transport == TransportKind::Stdio {
        if command.is_none_or(|command| command.trim().is_empty()) {
            return Err(StoreError::invalid(
                "command",
                "a stdio server needs a command",
            ));
        }
        if url.is_some() {
            return Err(StoreError::invalid("url", "a stdio server has no url"));
        }
        return Ok(());
    }
    let Some(url) = url else {
        return Err(StoreError::invalid(
            "url",
            format!("a {transport} server needs a url"),
        ));
    };
    let schemes: &[&str] = if transport == TransportKind::Websocket {
        &["ws://", "wss://"]
    } else {
        &["http://", "https://"]
    };
    if !schemes.iter().any(|scheme| url.starts_with(scheme)) || url.len() <= 8 {
        return Err(StoreError::invalid(
            "url",
            format!(
                "'{url}' must start with {} for transport {transport}",
                schemes.join(" or ")
            ),
        ));
    }
    if command.is_some() {
        return Err(StoreError::invalid(
            "command",
            format!("a {transport} server has no command"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_debug_shows_names_only() {
        let secrets = ServerSecrets {
            headers: BTreeMap::from([("X-Api-Key".to_owned(), "hunter2".to_owned())]),
            api_key: Some("sk-live".to_owned()),
            env: BTreeMap::from([("GITHUB_TOKEN".to_owned(), "ghp_x".to_owned())]),
            oauth_client_secret: Some("cs_secret".to_owned()),
        };
        let debug = format!("{secrets:?}");
        assert!(
            debug.contains("X-Api-Key") && debug.contains("GITHUB_TOKEN"),
            "{debug}"
        );
        for value in ["hunter2", "sk-live", "ghp_x", "cs_secret"] {
            assert!(!debug.contains(value), "{debug}");
        }
        assert_eq!(
            secrets.summary(),
            ServerSecretsSummary {
                header_names: vec!["X-Api-Key".into()],
                env_names: vec!["GITHUB_TOKEN".into()],
                has_api_key: true,
                has_oauth_client_secret: true,
            }
        );
    }

    #[test]
    fn endpoint_rules_follow_the_transport() {
        validate_endpoint(TransportKind::Stdio, None, Some("npx")).unwrap();
        validate_endpoint(
            TransportKind::StreamableHttp,
            Some("https://x.example/mcp"),
            None,
        )
        .unwrap();
        validate_endpoint(TransportKind::Websocket, Some("ws://127.0.0.1:9/ws"), None).unwrap();
        let cases = [
            (TransportKind::Stdio, None, None, "command"),
            (TransportKind::Stdio, Some("http://a/b"), Some("npx"), "url"),
            (TransportKind::Sse, None, None, "url"),
            (TransportKind::Websocket, Some("http://a/b"), None, "url"),
            (
                TransportKind::StreamableHttp,
                Some("ftp://a/b"),
                None,
                "url",
            ),
            (
                TransportKind::StreamableHttp,
                Some("http://a/b"),
                Some("npx"),
                "command",
            ),
        ];
        for (transport, url, command, field) in cases {
            match validate_endpoint(transport, url, command) {
                Err(StoreError::InvalidInput { field: named, .. }) => assert_eq!(named, field),
                other => panic!("{transport} {url:?} {command:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn connection_config_keeps_unknown_keys() {
        let value =
            serde_json::json!({"timeout_ms": 5000, "session_scope": "per_user", "retry": 3});
        let config: ServerConnectionConfig = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(config.timeout_ms, Some(5000));
        assert_eq!(config.session_scope, SessionScope::PerUser);
        assert_eq!(serde_json::to_value(&config).unwrap(), value);
    }

    #[test]
    fn status_texts_round_trip() {
        for status in [
            ServerStatus::Disconnected,
            ServerStatus::Connecting,
            ServerStatus::Connected,
            ServerStatus::Error,
        ] {
            assert_eq!(status.as_str().parse::<ServerStatus>().unwrap(), status);
        }
        assert!("BROKEN".parse::<SyncStatus>().is_err());
    }
}
