//! Request bodies of the registry API and their validation: the name pattern, the fields each
//! transport needs (and refuses), environment variables and headers a user may not set, and
//! the URL policy on the URL as written (the resolved address is checked again at connect).

use super::auth::AuthBody;
use crate::error::ApiError;
use crate::mirrors;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;
use switchboard_core::{ServerId, SessionScope, TransportKind, WorkspaceId};
use switchboard_mcp_client::{
    RemoteEndpoint, StdioCommand, UpstreamEndpoint, UpstreamServer, Url, UrlPolicy,
    validate_server_name,
};
use switchboard_store::{
    NewServer, ServerAuthConfig, ServerConnectionConfig, ServerPatch, ServerRecord, ServerSecrets,
    StoreError,
};
use utoipa::ToSchema;

/// A server to register: `url` (and `headers`, `api_key`) for remote transports, `command`
/// (and `args`, `env`, `working_dir`) for stdio. Secret values are write-only.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateServerBody {
    name: String,
    #[schema(value_type = mirrors::TransportKind)]
    transport: TransportKind,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    working_dir: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    api_key: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<mirrors::SessionScope>)]
    session_scope: SessionScope,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    init_timeout_ms: Option<u64>,
    /// Default `true`.
    #[serde(default = "active_by_default")]
    #[schema(value_type = Option<bool>)]
    is_active: bool,
    /// How callers authenticate (see [`AuthBody`]).
    #[serde(default)]
    auth: Option<AuthBody>,
    /// Set only by Switchboard on its own knowledge-graph server; refused when sent.
    #[serde(default, rename = "switchboard_own_kg_endpoint")]
    #[schema(value_type = Option<Object>)]
    own_endpoint_marker: Option<Value>,
}

fn active_by_default() -> bool {
    true
}

/// A change to a server: `version` as read, and the fields to change (absent: unchanged;
/// `null` removes `api_key`, `working_dir` and the timeouts).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateServerBody {
    /// The version the change was made against (required: missing is 422, stale is 409).
    // Optional here only so that its absence gets our own message, not serde's.
    #[serde(default)]
    #[schema(required = true, value_type = i64)]
    version: Option<i64>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<mirrors::TransportKind>)]
    transport: Option<TransportKind>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    working_dir: Option<Option<String>>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    /// `null` removes the stored key; absent keeps it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    api_key: Option<Option<String>>,
    #[serde(default)]
    #[schema(value_type = Option<mirrors::SessionScope>)]
    session_scope: Option<SessionScope>,
    #[serde(default, deserialize_with = "nullable_number")]
    #[schema(value_type = Option<u64>)]
    timeout_ms: Option<Option<u64>>,
    #[serde(default, deserialize_with = "nullable_number")]
    #[schema(value_type = Option<u64>)]
    init_timeout_ms: Option<Option<u64>>,
    #[serde(default)]
    is_active: Option<bool>,
    /// Replaces the whole `auth` object (an OAuth client secret not sent is kept).
    #[serde(default)]
    auth: Option<AuthBody>,
    /// Set only by Switchboard on its own knowledge-graph server; refused when sent.
    #[serde(default, rename = "switchboard_own_kg_endpoint")]
    #[schema(value_type = Option<Object>)]
    own_endpoint_marker: Option<Value>,
}

fn nullable<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<String>>, D::Error> {
    Ok(Some(Option::<String>::deserialize(deserializer)?))
}

fn nullable_number<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<u64>>, D::Error> {
    Ok(Some(Option::<u64>::deserialize(deserializer)?))
}

/// Why a [`Candidate`] is refused: the field and the rule (422 through the API; the import
/// reports it per entry, telling a URL the policy refuses apart from other mistakes).
#[derive(Debug, thiserror::Error)]
#[error("{field}: {message}")]
pub(super) struct InvalidCandidate {
    pub field: String,
    pub message: String,
    /// The URL policy (`mcp.url_policy`) refused the URL.
    pub url_policy: bool,
}

impl From<InvalidCandidate> for ApiError {
    fn from(error: InvalidCandidate) -> Self {
        ApiError::Unprocessable(error.to_string())
    }
}

impl From<InvalidCandidate> for super::failure::Failure {
    fn from(error: InvalidCandidate) -> Self {
        ApiError::from(error).into()
    }
}

/// Everything that describes a server, validated as a whole.
#[derive(Clone, Debug)]
pub(super) struct Candidate {
    pub name: String,
    pub transport: TransportKind,
    pub url: Option<String>,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub working_dir: Option<String>,
    pub session_scope: SessionScope,
    pub timeout_ms: Option<u64>,
    pub init_timeout_ms: Option<u64>,
    pub secrets: ServerSecrets,
    pub is_active: bool,
    pub auth: ServerAuthConfig,
}

impl Candidate {
    /// Runs every rule; errors name the field (422).
    pub fn validate(&self, policy: &UrlPolicy) -> Result<(), InvalidCandidate> {
        let invalid = |field: &str, message: String| InvalidCandidate {
            field: field.to_owned(),
            message,
            url_policy: false,
        };
        validate_server_name(&self.name).map_err(|error| invalid(&error.field, error.message))?;
        switchboard_store::validate_auth(self.transport, &self.auth, Some(&self.secrets)).map_err(
            |error| match error {
                StoreError::InvalidInput { field, reason } => invalid(field, reason),
                other => invalid("auth", other.to_string()),
            },
        )?;
        let endpoint = if self.transport == TransportKind::Stdio {
            if self.url.is_some() {
                return Err(invalid("url", "a stdio server has no url".into()));
            }
            if !self.secrets.headers.is_empty() || self.secrets.api_key.is_some() {
                return Err(invalid(
                    "headers",
                    "a stdio server takes env, not headers or api_key".into(),
                ));
            }
            UpstreamEndpoint::Stdio(StdioCommand {
                command: self
                    .command
                    .clone()
                    .ok_or_else(|| invalid("command", "a stdio server needs a command".into()))?,
                args: self.args.clone(),
                env: self.secrets.env.clone(),
                working_dir: self.working_dir.clone().map(Into::into),
            })
        } else {
            if self.command.is_some()
                || !self.args.is_empty()
                || !self.secrets.env.is_empty()
                || self.working_dir.is_some()
            {
                return Err(invalid(
                    "command",
                    format!(
                        "a {} server has a url, not command, args, env or working_dir",
                        self.transport
                    ),
                ));
            }
            let text = self.url.clone().ok_or_else(|| {
                invalid("url", format!("a {} server needs a url", self.transport))
            })?;
            let url = Url::parse(&text)
                .map_err(|error| invalid("url", format!("'{text}' is not a URL: {error}")))?;
            UpstreamEndpoint::Remote(RemoteEndpoint {
                transport: self.transport,
                url,
                headers: self.secrets.headers.clone(),
                api_key: self.secrets.api_key.clone(),
            })
        };
        if let UpstreamEndpoint::Remote(remote) = &endpoint {
            let schemes: &[&str] = if self.transport == TransportKind::Websocket {
                &["ws", "wss"]
            } else {
                &["http", "https"]
            };
            policy
                .check_url(&remote.url, schemes)
                .map_err(|error| InvalidCandidate {
                    url_policy: true,
                    ..invalid("url", error.to_string())
                })?;
        }
        let upstream = UpstreamServer {
            id: ServerId::from("candidate"),
            workspace_id: WorkspaceId::from("candidate"),
            name: self.name.clone(),
            endpoint,
            session_scope: self.session_scope,
            timeout_ms: self.timeout_ms,
            init_timeout_ms: self.init_timeout_ms,
            origin: switchboard_mcp_client::ServerOrigin::Registered,
        };
        upstream
            .validate()
            .map_err(|error| invalid(&error.field, error.message))
    }

    fn connection(&self, base: ServerConnectionConfig) -> ServerConnectionConfig {
        let mut connection = base;
        // Sessions carrying one person's credentials are never shared with another.
        connection.session_scope = match self.session_scope {
            SessionScope::Shared if self.auth.needs_per_user_sessions() => SessionScope::PerUser,
            scope => scope,
        };
        connection.auth = self.auth.clone();
        connection.timeout_ms = self.timeout_ms;
        connection.init_timeout_ms = self.init_timeout_ms;
        match &self.working_dir {
            Some(dir) => {
                connection
                    .extra
                    .insert("working_dir".into(), Value::from(dir.clone()));
            }
            None => {
                connection.extra.remove("working_dir");
            }
        }
        connection
    }
}

/// The connection-config key marking Switchboard's own knowledge-graph server, which alone
/// receives users' tokens: no request may set or remove it.
pub(super) const OWN_ENDPOINT_MARKER: &str = switchboard_registry::OWN_ENDPOINT_MARKER;

fn refuse_marker(sent: &Option<Value>) -> Result<(), ApiError> {
    match sent {
        None => Ok(()),
        Some(_) => Err(ApiError::Unprocessable(format!(
            "{OWN_ENDPOINT_MARKER}: this marker is set by Switchboard on its own knowledge-graph server only and cannot be set or removed through the API"
        ))),
    }
}

impl CreateServerBody {
    /// Refuses what no request may send (the own-endpoint marker).
    pub fn check_reserved(&self) -> Result<(), ApiError> {
        refuse_marker(&self.own_endpoint_marker)
    }

    pub fn candidate(self) -> Candidate {
        let (auth, oauth_client_secret) = self.auth.unwrap_or_default().into_config();
        Candidate {
            auth,
            name: self.name,
            transport: self.transport,
            url: self.url,
            command: self.command,
            args: self.args,
            working_dir: self.working_dir,
            session_scope: self.session_scope,
            timeout_ms: self.timeout_ms,
            init_timeout_ms: self.init_timeout_ms,
            secrets: ServerSecrets {
                headers: self.headers,
                api_key: self.api_key,
                env: self.env,
                oauth_client_secret,
            },
            is_active: self.is_active,
        }
    }
}

impl Candidate {
    pub fn into_new_server(self) -> NewServer {
        let connection = self.connection(ServerConnectionConfig::default());
        NewServer {
            name: self.name,
            transport: self.transport,
            url: self.url,
            command: self.command,
            args: self.args,
            connection,
            secrets: self.secrets,
            is_active: self.is_active,
        }
    }
}

impl UpdateServerBody {
    /// The version the caller read: every change is made against one, so that two editors
    /// cannot silently overwrite each other (a change without it would always win).
    pub fn required_version(&self) -> Result<i64, ApiError> {
        self.version.ok_or_else(|| {
            ApiError::Unprocessable(
                "version is required: send the version you read with GET".into(),
            )
        })
    }

    /// Refuses what no request may send (the own-endpoint marker).
    pub fn check_reserved(&self) -> Result<(), ApiError> {
        refuse_marker(&self.own_endpoint_marker)
    }

    /// For Switchboard's own knowledge-graph server: its name, address and credentials are
    /// Switchboard's (every process reaches it at its own `/mcp`, the token is the
    /// registry's own); switching it on or off and its timeouts stay editable.
    pub fn check_own_endpoint_change(&self) -> Result<(), ApiError> {
        let managed = [
            ("name", self.name.is_some()),
            ("transport", self.transport.is_some()),
            ("url", self.url.is_some()),
            ("command", self.command.is_some()),
            ("args", self.args.is_some()),
            ("env", self.env.is_some()),
            ("working_dir", self.working_dir.is_some()),
            ("headers", self.headers.is_some()),
            ("api_key", self.api_key.is_some()),
            ("session_scope", self.session_scope.is_some()),
            ("auth", self.auth.is_some()),
        ];
        match managed.iter().find(|(_, sent)| *sent) {
            Some((field, _)) => Err(ApiError::Unprocessable(format!(
                "{field}: this is Switchboard's own knowledge-graph server; its name, address, credentials and session scope are managed by Switchboard (you may change is_active, timeout_ms and init_timeout_ms, or delete it)"
            ))),
            None => Ok(()),
        }
    }

    /// The server as it would be after the change (a transport switch drops the other
    /// transport's fields).
    pub fn candidate(&self, record: &ServerRecord, secrets: &ServerSecrets) -> Candidate {
        let transport = self.transport.unwrap_or(record.transport);
        let switched = transport != record.transport
            && (transport == TransportKind::Stdio || record.transport == TransportKind::Stdio);
        let keep = |value: Option<String>| if switched { None } else { value };
        let mut secrets = if switched {
            ServerSecrets::default()
        } else {
            secrets.clone()
        };
        if let Some(headers) = &self.headers {
            secrets.headers = headers.clone();
        }
        if let Some(env) = &self.env {
            secrets.env = env.clone();
        }
        if let Some(api_key) = &self.api_key {
            secrets.api_key = api_key.clone();
        }
        let auth = match &self.auth {
            Some(body) => {
                let (auth, client_secret) = body.clone().into_config();
                if client_secret.is_some() {
                    secrets.oauth_client_secret = client_secret;
                }
                auth
            }
            None => record.connection.auth.clone(),
        };
        if auth
            .oauth
            .as_ref()
            .and_then(|oauth| oauth.client_id.as_ref())
            .is_none()
        {
            // No pre-registered client any more: its secret goes with it.
            secrets.oauth_client_secret = None;
        }
        let stored_dir = record
            .connection
            .extra
            .get("working_dir")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Candidate {
            name: self.name.clone().unwrap_or_else(|| record.name.clone()),
            transport,
            url: self.url.clone().or_else(|| keep(record.url.clone())),
            command: self
                .command
                .clone()
                .or_else(|| keep(record.command.clone())),
            args: self.args.clone().unwrap_or_else(|| {
                if switched {
                    Vec::new()
                } else {
                    record.args.clone()
                }
            }),
            working_dir: match &self.working_dir {
                Some(dir) => dir.clone(),
                None => keep(stored_dir),
            },
            session_scope: self
                .session_scope
                .unwrap_or(record.connection.session_scope),
            timeout_ms: match self.timeout_ms {
                Some(timeout) => timeout,
                None => record.connection.timeout_ms,
            },
            init_timeout_ms: match self.init_timeout_ms {
                Some(timeout) => timeout,
                None => record.connection.init_timeout_ms,
            },
            secrets,
            is_active: self.is_active.unwrap_or(record.is_active),
            auth,
        }
    }

    /// Whether the change touches what a stdio server runs.
    pub fn touches_stdio_command(&self, record: &ServerRecord, candidate: &Candidate) -> bool {
        candidate.transport == TransportKind::Stdio
            && (record.transport != TransportKind::Stdio
                || self.command.is_some()
                || self.args.is_some()
                || self.env.is_some()
                || self.working_dir.is_some())
    }
}

/// The store patch that turns `record` into `candidate`. The URL is in it only when it
/// changes: our own endpoint's is rewritten by a replica's start without moving the version
/// (`Store::record_server_url`), and an edit of something else must not put back the one
/// read here.
pub(super) fn patch_for(record: &ServerRecord, candidate: Candidate) -> ServerPatch {
    let connection = candidate.connection(record.connection.clone());
    let url = (candidate.url != record.url).then_some(candidate.url);
    ServerPatch {
        name: Some(candidate.name),
        transport: Some(candidate.transport),
        url,
        command: Some(candidate.command),
        args: Some(candidate.args),
        connection: Some(connection),
        secrets: Some(candidate.secrets),
        is_active: Some(candidate.is_active),
    }
}
