//! Ephemeral servers: MCP servers a request brings along (`mcp_servers: [{name, url,
//! headers?}]`, as browsers that keep their own server list do). They live for that request
//! only, obey the stricter URL policy of servers sent with a request (`mcp.request_url_policy`:
//! public addresses only unless an admin opens more; checked here on the URL, and again by
//! `mcp-client` on every resolved address — [`ServerOrigin::Request`]), and never receive the
//! user's token. What their
//! URL offered is cached for a few minutes (per URL and headers), so a chat that sends the
//! same list with every message does not re-list tools each time.

use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use switchboard_core::{ServerId, SessionScope, ToolDefinition, TransportKind, WorkspaceId};
use switchboard_mcp_client::{
    RemoteEndpoint, ServerOrigin, UpstreamEndpoint, UpstreamServer, UrlPolicy, validate_server_name,
};
use url::Url;

use crate::error::ChatError;

/// One server of a request's `mcp_servers`.
#[derive(Clone, PartialEq, Eq)]
pub struct EphemeralServer {
    pub name: String,
    pub url: String,
    /// Sent with every request to this server; values are secrets.
    pub headers: BTreeMap<String, String>,
    /// `streamable_http` (default), `sse` or `websocket`.
    pub transport: TransportKind,
}

impl std::fmt::Debug for EphemeralServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EphemeralServer")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("header_names", &self.headers.keys().collect::<Vec<_>>())
            .field("transport", &self.transport)
            .finish()
    }
}

impl EphemeralServer {
    /// Checks the entry (`field` is its JSON path, e.g. `mcp_servers[0]`) and builds the
    /// upstream description. The id is derived from URL, transport and headers, so the same
    /// entry reuses its session and its cached tools.
    pub fn to_upstream(
        &self,
        field: &str,
        workspace_id: &WorkspaceId,
        policy: &UrlPolicy,
    ) -> Result<UpstreamServer, ChatError> {
        validate_server_name(&self.name)
            .map_err(|error| ChatError::invalid(format!("{field}.name"), error.message))?;
        if self.transport == TransportKind::Stdio {
            return Err(ChatError::invalid(
                format!("{field}.transport"),
                "an ephemeral server must be reached over the network (streamable_http, sse or websocket)",
            ));
        }
        let url = Url::parse(&self.url).map_err(|error| {
            ChatError::invalid(
                format!("{field}.url"),
                format!("'{}' is not a URL: {error}", self.url),
            )
        })?;
        let schemes: &[&str] = if self.transport == TransportKind::Websocket {
            &["ws", "wss"]
        } else {
            &["http", "https"]
        };
        policy
            .check_url(&url, schemes)
            .map_err(|error| ChatError::invalid(format!("{field}.url"), error.to_string()))?;
        let server = UpstreamServer {
            id: self.id(),
            workspace_id: workspace_id.clone(),
            name: self.name.clone(),
            endpoint: UpstreamEndpoint::Remote(RemoteEndpoint {
                transport: self.transport,
                url,
                headers: self.headers.clone(),
                api_key: None,
            }),
            // Never shared between users (the request's headers may be one user's credentials)
            // nor between conversations: the turn that used it closes it when it ends
            // (`McpTools::close_ephemeral_sessions`), and only one answer of a conversation
            // runs at a time.
            session_scope: SessionScope::PerConversation,
            timeout_ms: None,
            init_timeout_ms: None,
            origin: ServerOrigin::Request,
        };
        server.validate().map_err(|error| {
            ChatError::invalid(format!("{field}.{}", error.field), error.message)
        })?;
        Ok(server)
    }

    /// `ephemeral-<hash of transport, url and headers>`: stable for the same entry.
    pub fn id(&self) -> ServerId {
        let mut hasher = Sha256::new();
        hasher.update(self.transport.as_str());
        hasher.update([0]);
        hasher.update(&self.url);
        for (name, value) in &self.headers {
            hasher.update([0]);
            hasher.update(name.to_ascii_lowercase());
            hasher.update([1]);
            hasher.update(value);
        }
        ServerId::from(format!(
            "{}{}",
            ServerId::EPHEMERAL_PREFIX,
            &hex::encode(hasher.finalize())[..24]
        ))
    }
}

/// Tools discovered on ephemeral servers, by [`EphemeralServer::id`], for a limited time.
#[derive(Debug)]
pub struct EphemeralToolCache {
    ttl: Duration,
    entries: Mutex<HashMap<ServerId, (Instant, Vec<ToolDefinition>)>>,
}

impl EphemeralToolCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub fn get(&self, server_id: &ServerId) -> Option<Vec<ToolDefinition>> {
        let mut entries = self.entries.lock().ok()?;
        match entries.get(server_id) {
            Some((stored_at, tools)) if stored_at.elapsed() < self.ttl => Some(tools.clone()),
            Some(_) => {
                entries.remove(server_id);
                None
            }
            None => None,
        }
    }

    pub fn put(&self, server_id: ServerId, tools: Vec<ToolDefinition>) {
        if let Ok(mut entries) = self.entries.lock() {
            let ttl = self.ttl;
            entries.retain(|_, (stored_at, _)| stored_at.elapsed() < ttl);
            entries.insert(server_id, (Instant::now(), tools));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_mcp_client::UrlPolicyConfig;

    fn entry(url: &str) -> EphemeralServer {
        EphemeralServer {
            name: "browser".into(),
            url: url.into(),
            headers: BTreeMap::new(),
            transport: TransportKind::StreamableHttp,
        }
    }

    #[test]
    fn ids_follow_url_and_headers() {
        let plain = entry("https://example.com/mcp");
        let mut with_header = plain.clone();
        with_header.headers.insert("X-Api-Key".into(), "k".into());
        assert_eq!(plain.id(), entry("https://example.com/mcp").id());
        assert_ne!(plain.id(), with_header.id());
        assert!(plain.id().as_str().starts_with("ephemeral-"));
    }

    #[test]
    fn bad_entries_are_refused_naming_the_field() {
        let policy = UrlPolicy::new(UrlPolicyConfig::default());
        let workspace = WorkspaceId::from("w1");
        let mut bad_name = entry("https://example.com/mcp");
        bad_name.name = "has space".into();
        let error = bad_name
            .to_upstream("mcp_servers[0]", &workspace, &policy)
            .unwrap_err();
        assert!(
            error.to_string().starts_with("mcp_servers[0].name:"),
            "{error}"
        );
        let error = entry("ftp://example.com/")
            .to_upstream("mcp_servers[1]", &workspace, &policy)
            .unwrap_err();
        assert!(
            error.to_string().starts_with("mcp_servers[1].url:"),
            "{error}"
        );
        let error = entry("http://169.254.169.254/latest")
            .to_upstream("mcp_servers[2]", &workspace, &policy)
            .unwrap_err();
        assert!(
            error.to_string().starts_with("mcp_servers[2].url:"),
            "{error}"
        );
        entry("https://example.com/mcp")
            .to_upstream("mcp_servers[3]", &workspace, &policy)
            .unwrap();
    }

    #[test]
    fn cached_tools_expire() {
        let cache = EphemeralToolCache::new(Duration::from_millis(30));
        let id = ServerId::from("ephemeral-x");
        cache.put(id.clone(), vec![]);
        assert!(cache.get(&id).is_some());
        std::thread::sleep(Duration::from_millis(40));
        assert!(cache.get(&id).is_none());
    }
}
