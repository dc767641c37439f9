//! `UpstreamServer`: how to reach one registered MCP server (an argv for stdio, or a URL with
//! headers and an API key), and the validation rules every registration passes — names,
//! transport-specific fields, environment variables a user may not set, reserved headers.
//!
//! No IO happens here; the URL *policy* (which addresses may be reached) is checked at connect
//! time by [`crate::url_policy`]. Secrets never appear in `Debug` output.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use switchboard_core::{ServerId, SessionScope, TransportKind, WorkspaceId};
use url::Url;

/// One upstream server as the client side needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamServer {
    pub id: ServerId,
    pub workspace_id: WorkspaceId,
    /// Unique per workspace, `[A-Za-z0-9_-]{1,32}`; prefixes the tool names offered to LLMs.
    pub name: String,
    pub endpoint: UpstreamEndpoint,
    pub session_scope: SessionScope,
    /// Per-call timeout override in milliseconds (`None`: the configured default).
    pub timeout_ms: Option<u64>,
    /// Per-server session initialisation timeout in milliseconds (`None`: the configured
    /// `session_init_timeout_secs`).
    pub init_timeout_ms: Option<u64>,
    /// Who chose the server: decides which URL policy its connections obey.
    pub origin: crate::url_policy::ServerOrigin,
}

/// The transport-specific half of a server's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpstreamEndpoint {
    Stdio(StdioCommand),
    Remote(RemoteEndpoint),
}

/// A child process speaking MCP on stdin/stdout. Never run through a shell.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StdioCommand {
    /// The program (looked up on the allowed `PATH` when it has no `/`).
    pub command: String,
    pub args: Vec<String>,
    /// Variables added to the allowlisted environment.
    pub env: BTreeMap<String, String>,
    pub working_dir: Option<PathBuf>,
}

/// A server reached over the network.
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteEndpoint {
    /// `StreamableHttp`, `Sse` or `Websocket`.
    pub transport: TransportKind,
    pub url: Url,
    /// Extra request headers (e.g. `X-API-Key`). Values are secrets.
    pub headers: BTreeMap<String, String>,
    /// Sent as `Authorization: Bearer <api_key>`.
    pub api_key: Option<String>,
}

impl fmt::Debug for RemoteEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&String> = self.headers.keys().collect();
        f.debug_struct("RemoteEndpoint")
            .field("transport", &self.transport)
            .field("url", &self.url.as_str())
            .field("header_names", &header_names)
            .field(
                "api_key",
                &self
                    .api_key
                    .as_ref()
                    .map(|_| switchboard_core::redact::REDACTED),
            )
            .finish()
    }
}

impl UpstreamServer {
    pub fn transport(&self) -> TransportKind {
        match &self.endpoint {
            UpstreamEndpoint::Stdio(_) => TransportKind::Stdio,
            UpstreamEndpoint::Remote(remote) => remote.transport,
        }
    }

    /// Changes whenever anything that affects the connection changes, so a live session made
    /// with an older configuration is recognised and replaced.
    pub fn connection_fingerprint(&self) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        match &self.endpoint {
            UpstreamEndpoint::Stdio(command) => command.hash(&mut hasher),
            UpstreamEndpoint::Remote(remote) => {
                remote.transport.hash(&mut hasher);
                remote.url.as_str().hash(&mut hasher);
                remote.headers.hash(&mut hasher);
                remote.api_key.hash(&mut hasher);
            }
        }
        self.session_scope.hash(&mut hasher);
        self.origin.hash(&mut hasher);
        hasher.finish()
    }

    /// How long a session start may take: the server's own `init_timeout_ms`, else `default`.
    pub fn init_timeout(&self, default: std::time::Duration) -> std::time::Duration {
        self.init_timeout_ms
            .map(std::time::Duration::from_millis)
            .unwrap_or(default)
    }

    /// Where the server is, for messages: its URL without credentials, query or fragment
    /// (those may carry secrets), or its command in backquotes.
    pub fn display_target(&self) -> String {
        match &self.endpoint {
            UpstreamEndpoint::Stdio(command) => format!("`{}`", command.command),
            UpstreamEndpoint::Remote(remote) => display_url(&remote.url),
        }
    }

    /// Runs every registration rule; the error names the offending field.
    pub fn validate(&self) -> Result<(), ServerConfigError> {
        validate_server_name(&self.name)?;
        if let Some(timeout_ms) = self.timeout_ms
            && !(100..=3_600_000).contains(&timeout_ms)
        {
            return Err(ServerConfigError::new(
                "timeout_ms",
                "must be between 100 and 3600000 milliseconds",
            ));
        }
        if let Some(init_timeout_ms) = self.init_timeout_ms
            && !(100..=600_000).contains(&init_timeout_ms)
        {
            return Err(ServerConfigError::new(
                "init_timeout_ms",
                "must be between 100 and 600000 milliseconds",
            ));
        }
        match &self.endpoint {
            UpstreamEndpoint::Stdio(command) => command.validate(),
            UpstreamEndpoint::Remote(remote) => remote.validate(),
        }
    }
}

/// A URL as it may be shown: scheme, host, port and path only.
pub fn display_url(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

impl StdioCommand {
    pub fn validate(&self) -> Result<(), ServerConfigError> {
        if self.command.trim().is_empty() {
            return Err(ServerConfigError::new("command", "must not be empty"));
        }
        if self.command.contains('\0') || self.args.iter().any(|arg| arg.contains('\0')) {
            return Err(ServerConfigError::new("args", "must not contain NUL bytes"));
        }
        for (name, value) in &self.env {
            if name.is_empty() || name.contains('=') || name.contains('\0') || value.contains('\0')
            {
                return Err(ServerConfigError::new(
                    "env",
                    format!("'{name}' is not a valid environment variable"),
                ));
            }
            if is_forbidden_env_name(name) {
                return Err(ServerConfigError::new(
                    "env",
                    format!("'{name}' can inject code into the child process and is not allowed"),
                ));
            }
        }
        if let Some(dir) = &self.working_dir
            && !dir.is_absolute()
        {
            return Err(ServerConfigError::new(
                "working_dir",
                "must be an absolute path",
            ));
        }
        Ok(())
    }
}

impl RemoteEndpoint {
    pub fn validate(&self) -> Result<(), ServerConfigError> {
        let allowed_schemes: &[&str] = match self.transport {
            TransportKind::StreamableHttp | TransportKind::Sse => &["http", "https"],
            TransportKind::Websocket => &["ws", "wss"],
            TransportKind::Stdio => {
                return Err(ServerConfigError::new("transport", "stdio has no URL"));
            }
        };
        if !allowed_schemes.contains(&self.url.scheme()) {
            return Err(ServerConfigError::new(
                "url",
                format!(
                    "scheme '{}' is not allowed for transport {} (expected {})",
                    self.url.scheme(),
                    self.transport,
                    allowed_schemes.join(" or ")
                ),
            ));
        }
        if self.url.host().is_none() {
            return Err(ServerConfigError::new("url", "must name a host"));
        }
        if !self.url.username().is_empty() || self.url.password().is_some() {
            return Err(ServerConfigError::new(
                "url",
                "must not carry credentials; use api_key or headers",
            ));
        }
        for (name, value) in &self.headers {
            let header_name = http::HeaderName::try_from(name.as_str()).map_err(|_| {
                ServerConfigError::new("headers", format!("'{name}' is not a valid header name"))
            })?;
            if http::HeaderValue::try_from(value.as_str()).is_err() {
                return Err(ServerConfigError::new(
                    "headers",
                    format!("the value of '{name}' is not a valid header value"),
                ));
            }
            if RESERVED_HEADERS.contains(&header_name.as_str()) {
                return Err(ServerConfigError::new(
                    "headers",
                    format!("'{name}' is set by the transport and cannot be configured"),
                ));
            }
        }
        if let Some(api_key) = &self.api_key
            && (api_key.is_empty()
                || http::HeaderValue::try_from(format!("Bearer {api_key}")).is_err())
        {
            return Err(ServerConfigError::new(
                "api_key",
                "is not a valid bearer token",
            ));
        }
        Ok(())
    }
}

/// Headers owned by the transports (lowercase, as `http::HeaderName` prints them).
const RESERVED_HEADERS: [&str; 11] = [
    "accept",
    "content-type",
    "content-length",
    "host",
    "connection",
    "transfer-encoding",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "upgrade",
    "sec-websocket-key",
];

/// `[A-Za-z0-9_-]{1,32}`.
pub fn validate_server_name(name: &str) -> Result<(), ServerConfigError> {
    let valid_characters = name
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
    if name.is_empty() || name.len() > 32 || !valid_characters {
        return Err(ServerConfigError::new(
            "name",
            "must be 1 to 32 characters from A-Z, a-z, 0-9, '_' and '-'",
        ));
    }
    Ok(())
}

/// Environment variables that make a dynamic loader or an interpreter run code chosen by
/// whoever sets them. A server's configured `env` may not contain them, and the allowlist may
/// not pass them through.
pub fn is_forbidden_env_name(name: &str) -> bool {
    const EXACT: [&str; 16] = [
        "NODE_OPTIONS",
        "NODE_PATH",
        "NODE_REPL_EXTERNAL_MODULE",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RUBYLIB",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "BASH_ENV",
        "ENV",
        "GCONV_PATH",
    ];
    let upper = name.to_ascii_uppercase();
    EXACT.contains(&upper.as_str())
        || upper.starts_with("LD_")
        || upper.starts_with("DYLD_")
        || upper.starts_with("MALLOC_")
        || upper == "JDK_JAVA_OPTIONS"
}

/// A registration rule that failed: `field` names the JSON field, `message` says why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ServerConfigError {
    pub field: String,
    pub message: String,
}

impl ServerConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(transport: TransportKind, url: &str) -> RemoteEndpoint {
        RemoteEndpoint {
            transport,
            url: Url::parse(url).unwrap(),
            headers: BTreeMap::new(),
            api_key: None,
        }
    }

    #[test]
    fn server_names_follow_the_documented_pattern() {
        for good in ["files", "n8n", "a", "my_server-2", &"x".repeat(32)] {
            validate_server_name(good).unwrap();
        }
        for bad in ["", "has space", "dot.name", "ünï", &"x".repeat(33), "a/b"] {
            assert_eq!(validate_server_name(bad).unwrap_err().field, "name");
        }
    }

    #[test]
    fn loader_and_interpreter_variables_are_refused() {
        for name in [
            "LD_PRELOAD",
            "ld_library_path",
            "NODE_OPTIONS",
            "DYLD_INSERT_LIBRARIES",
            "PYTHONSTARTUP",
        ] {
            assert!(is_forbidden_env_name(name), "{name}");
        }
        for name in ["API_TOKEN", "DEBUG", "PATH_SUFFIX"] {
            assert!(!is_forbidden_env_name(name), "{name}");
        }
        let command = StdioCommand {
            command: "node".into(),
            args: vec![],
            env: BTreeMap::from([("NODE_OPTIONS".into(), "--require /tmp/x.js".into())]),
            working_dir: None,
        };
        let error = command.validate().unwrap_err();
        assert_eq!(error.field, "env");
        assert!(error.message.contains("NODE_OPTIONS"));
    }

    #[test]
    fn remote_fields_are_checked_per_transport() {
        remote(TransportKind::StreamableHttp, "https://example.com/mcp")
            .validate()
            .unwrap();
        remote(TransportKind::Websocket, "wss://example.com/mcp")
            .validate()
            .unwrap();
        let error = remote(TransportKind::Websocket, "https://example.com/")
            .validate()
            .unwrap_err();
        assert!(error.message.contains("scheme 'https'"), "{error}");
        let error = remote(TransportKind::Sse, "file:///etc/passwd")
            .validate()
            .unwrap_err();
        assert_eq!(error.field, "url");
        let error = remote(TransportKind::Sse, "http://user:pw@example.com/")
            .validate()
            .unwrap_err();
        assert!(error.message.contains("credentials"));
        let mut with_reserved = remote(TransportKind::StreamableHttp, "http://example.com/");
        with_reserved
            .headers
            .insert("Mcp-Session-Id".into(), "x".into());
        assert_eq!(with_reserved.validate().unwrap_err().field, "headers");
    }

    #[test]
    fn debug_output_hides_secrets() {
        let mut endpoint = remote(TransportKind::StreamableHttp, "https://example.com/mcp");
        endpoint.api_key = Some("sk-very-secret".into());
        endpoint
            .headers
            .insert("X-API-Key".into(), "also-secret".into());
        let printed = format!("{endpoint:?}");
        assert!(
            !printed.contains("very-secret") && !printed.contains("also-secret"),
            "{printed}"
        );
        assert!(printed.contains("X-API-Key"));
    }

    #[test]
    fn shown_urls_drop_what_may_be_secret() {
        let url = Url::parse("https://example.com:8443/mcp?api_key=secret#frag").unwrap();
        assert_eq!(display_url(&url), "https://example.com:8443/mcp");
    }
}
