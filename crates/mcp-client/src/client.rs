//! `McpClient`: the session-level entry point. It owns the shared HTTP client, the URL policy,
//! the session pool (with its idle reaper) and the protocol-version memory, and hands out
//! live sessions to the request functions in [`crate::calls`].
//!
//! It knows nothing about the store or HTTP API; `switchboard-registry` builds on it.

use crate::UpstreamError;
use crate::arguments::ArgumentValidator;
use crate::calls::Caller;
use crate::config::McpClientConfig;
use crate::handler::ElicitationResponder;
use crate::latency::ServerLatency;
use crate::notifications::{ListChangeKind, ListChangedCallback};
use crate::server::UpstreamServer;
use crate::session::live::LiveSession;
use crate::session::pool::SessionPool;
use crate::session::slot::SessionSlot;
use crate::session::{SessionKey, SessionScopeKey, SessionStatus, StartContext, VersionMemory};
use crate::session_events::SessionEventHandler;
use crate::transport::build_shared_http_client;
use crate::url_policy::{HostLookup, ServerOrigin, SystemHostLookup, UrlPolicy};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use switchboard_core::ServerId;
use tokio_util::sync::CancellationToken;

/// Called with the server and the list an upstream reported as changed.
pub type ServerListChangedHandler = Arc<dyn Fn(&ServerId, ListChangeKind) + Send + Sync>;

/// Cheap to clone; every clone shares the same sessions.
#[derive(Clone, Debug)]
pub struct McpClient {
    pub(crate) inner: Arc<ClientInner>,
}

pub(crate) struct ClientInner {
    pub config: McpClientConfig,
    /// Registered servers: `mcp.url_policy` and the HTTP client resolving under it.
    pub http_client: reqwest::Client,
    pub policy: UrlPolicy,
    /// Servers sent with a request: `mcp.request_url_policy`, and a client of its own (the
    /// policy lives in the client's resolver).
    pub request_http_client: reqwest::Client,
    pub request_policy: UrlPolicy,
    /// This process's own endpoint: exempt from the address checks.
    pub own_http_client: reqwest::Client,
    pub own_policy: UrlPolicy,
    pub versions: VersionMemory,
    pub sessions: SessionPool,
    pub validator: ArgumentValidator,
    server_names: Mutex<HashMap<ServerId, String>>,
    list_changed: Mutex<Option<ServerListChangedHandler>>,
    pub elicitation: Option<Arc<dyn ElicitationResponder>>,
    /// Sampling is declared to upstreams (answered only by a call's gateway client).
    sampling: bool,
    session_events: Option<SessionEventHandler>,
    pub shutdown: CancellationToken,
    /// Followers of tasks in this process, told of their servers' status notifications.
    pub task_watchers: Arc<crate::task_watch::TaskWatchers>,
}

impl std::fmt::Debug for ClientInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("sessions", &self.sessions)
            .finish_non_exhaustive()
    }
}

/// Options beyond the configuration (tests and the conformance client use them).
#[derive(Debug)]
pub struct McpClientBuilder {
    config: McpClientConfig,
    policy: Option<UrlPolicy>,
    host_lookup: Option<Arc<dyn HostLookup>>,
    elicitation: Option<Arc<dyn ElicitationResponder>>,
    sampling: bool,
    session_events: Option<SessionEventHandler>,
}

impl McpClientBuilder {
    /// Replaces the policy built from `config.url_policy` (e.g. one with a fixed host table).
    pub fn url_policy(mut self, policy: UrlPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Resolves host names with `lookup` (tests: a fixed table), for every policy.
    pub fn host_lookup(mut self, lookup: Arc<dyn HostLookup>) -> Self {
        self.host_lookup = Some(lookup);
        self
    }

    /// Declares the elicitation capability and answers `elicitation/create` with `responder`.
    pub fn elicitation(mut self, responder: Arc<dyn ElicitationResponder>) -> Self {
        self.elicitation = Some(responder);
        self
    }

    /// Declares sampling to upstreams: their `sampling/createMessage` goes to the client of
    /// the call that caused it when that client answers sampling (a gateway client,
    /// [`crate::CallContext::client_link`]), and is refused otherwise.
    pub fn forward_sampling(mut self) -> Self {
        self.sampling = true;
        self
    }

    /// Tells `handler` when a session connects, fails to start or closes (the audit log).
    pub fn on_session_event(mut self, handler: SessionEventHandler) -> Self {
        self.session_events = Some(handler);
        self
    }

    /// Must be called inside a Tokio runtime (it starts the idle reaper).
    pub fn build(self) -> Result<McpClient, UpstreamError> {
        self.config.validate().map_err(|error| {
            UpstreamError::Config(crate::server::ServerConfigError::new(
                error.key,
                error.reason,
            ))
        })?;
        let lookup = self
            .host_lookup
            .unwrap_or_else(|| Arc::new(SystemHostLookup));
        let policy = self.policy.unwrap_or_else(|| {
            UrlPolicy::with_lookup(self.config.url_policy.clone(), lookup.clone())
        });
        let request_policy = UrlPolicy::for_requests(&self.config.request_url_policy, lookup);
        let own_policy = UrlPolicy::for_own_endpoint();
        let inner = Arc::new(ClientInner {
            http_client: http_client_for(&policy)?,
            request_http_client: http_client_for(&request_policy)?,
            own_http_client: http_client_for(&own_policy)?,
            config: self.config,
            policy,
            request_policy,
            own_policy,
            versions: VersionMemory::default(),
            sessions: SessionPool::default(),
            validator: ArgumentValidator::default(),
            server_names: Mutex::new(HashMap::new()),
            list_changed: Mutex::new(None),
            elicitation: self.elicitation,
            sampling: self.sampling,
            session_events: self.session_events,
            shutdown: CancellationToken::new(),
            task_watchers: Arc::default(),
        });
        tokio::spawn(reap_idle_sessions(Arc::downgrade(&inner)));
        Ok(McpClient { inner })
    }
}

fn http_client_for(policy: &UrlPolicy) -> Result<reqwest::Client, UpstreamError> {
    build_shared_http_client(policy).map_err(|error| {
        UpstreamError::Config(crate::server::ServerConfigError::new(
            "mcp",
            format!("building the shared HTTP client failed: {error}"),
        ))
    })
}

async fn reap_idle_sessions(inner: std::sync::Weak<ClientInner>) {
    let period = {
        let Some(inner) = inner.upgrade() else { return };
        (inner.config.session_idle_timeout() / 4).clamp(
            std::time::Duration::from_secs(1),
            std::time::Duration::from_secs(60),
        )
    };
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let Some(inner) = inner.upgrade() else { return };
        if inner.shutdown.is_cancelled() {
            return;
        }
        let names = inner
            .server_names
            .lock()
            .map(|names| names.clone())
            .unwrap_or_default();
        inner
            .sessions
            .reap_idle(
                &names,
                inner.config.session_idle_timeout(),
                inner.config.shutdown_timeout(),
            )
            .await;
    }
}

impl McpClient {
    pub fn new(config: McpClientConfig) -> Result<Self, UpstreamError> {
        Self::builder(config).build()
    }

    pub fn builder(config: McpClientConfig) -> McpClientBuilder {
        McpClientBuilder {
            sampling: config.forward_sampling,
            config,
            policy: None,
            host_lookup: None,
            elicitation: None,
            session_events: None,
        }
    }

    pub fn config(&self) -> &McpClientConfig {
        &self.inner.config
    }

    /// The URL policy of registered servers.
    pub fn url_policy(&self) -> &UrlPolicy {
        &self.inner.policy
    }

    /// The URL policy of servers sent with a request (stricter by default).
    pub fn request_url_policy(&self) -> &UrlPolicy {
        &self.inner.request_policy
    }

    /// The URL policy a server chosen by `origin` obeys.
    pub fn url_policy_for(&self, origin: ServerOrigin) -> &UrlPolicy {
        self.reach(origin).0
    }

    /// The policy and HTTP client a server's connections use, by who chose it.
    fn reach(&self, origin: ServerOrigin) -> (&UrlPolicy, &reqwest::Client) {
        match origin {
            ServerOrigin::Registered => (&self.inner.policy, &self.inner.http_client),
            ServerOrigin::Request => (&self.inner.request_policy, &self.inner.request_http_client),
            ServerOrigin::OwnEndpoint => (&self.inner.own_policy, &self.inner.own_http_client),
        }
    }

    /// Where list-changed notifications go (the capability cache registers itself here).
    pub fn on_list_changed(&self, handler: ServerListChangedHandler) {
        if let Ok(mut slot) = self.inner.list_changed.lock() {
            *slot = Some(handler);
        }
    }

    /// The negotiated protocol version this client remembers for a server, if any.
    pub fn remembered_protocol_version(&self, server: &UpstreamServer) -> Option<String> {
        self.inner
            .versions
            .recall(&server.id, server.connection_fingerprint())
    }

    /// Seeds the memory (e.g. from the store at start-up) so the first connect skips the probe.
    pub fn remember_protocol_version(&self, server: &UpstreamServer, version: &str) {
        self.inner
            .versions
            .remember(&server.id, server.connection_fingerprint(), version);
    }

    pub fn session_statuses(&self, server_id: &ServerId) -> Vec<SessionStatus> {
        self.inner.sessions.statuses(server_id)
    }

    /// Whether the server's sessions just failed (a start failed, or the connection died) and
    /// none is up: its cached tools should be checked before they are offered.
    pub fn sessions_failed(&self, server_id: &ServerId) -> bool {
        let slots = self.inner.sessions.slots_for_server(server_id);
        slots.iter().any(|slot| slot.has_failed())
            && !slots
                .iter()
                .any(|slot| slot.status().state == switchboard_core::SessionState::Active)
    }

    /// How quickly the server has been answering lately (its last 20 requests and its last
    /// session start, through any session or one-shot connection). Forgotten when the server
    /// is closed for a change or a delete ([`Self::close_server`]).
    pub fn latency(&self, server_id: &ServerId) -> ServerLatency {
        self.inner.sessions.latencies.summary(server_id)
    }

    /// Lets the next use of a server in ERROR try again at once (after a manual sync or edit).
    pub fn reset_errors(&self, server_id: &ServerId) {
        for slot in self.inner.sessions.slots_for_server(server_id) {
            slot.clear_error();
        }
    }

    /// Closes every session of a server (deleted, deactivated, reconfigured); its stdio
    /// children are gone when this returns.
    pub async fn close_server(&self, server_id: &ServerId) {
        let name = self.server_name(server_id);
        self.inner
            .sessions
            .close_server(server_id, &name, self.inner.config.shutdown_timeout())
            .await;
    }

    /// Closes the session `caller` has with `server`, if any: a request's ephemeral server is
    /// used for that request only. Other callers' sessions of the same server stay up.
    pub async fn close_session(&self, server: &UpstreamServer, caller: &Caller) {
        let key = SessionKey {
            server_id: server.id.clone(),
            scope: SessionScopeKey::for_caller(
                server.session_scope,
                &caller.user_id,
                caller.conversation_id.as_ref(),
            ),
        };
        self.inner
            .sessions
            .close_session(&key, &server.name, self.inner.config.shutdown_timeout())
            .await;
    }

    /// Closes every session within `shutdown_timeout_secs`; later calls fail with
    /// `ShuttingDown`.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        let names = self
            .inner
            .server_names
            .lock()
            .map(|names| names.clone())
            .unwrap_or_default();
        self.inner
            .sessions
            .shutdown(&names, self.inner.config.shutdown_timeout())
            .await;
    }

    fn server_name(&self, server_id: &ServerId) -> String {
        self.inner
            .server_names
            .lock()
            .ok()
            .and_then(|names| names.get(server_id).cloned())
            .unwrap_or_default()
    }

    pub(crate) fn slot_for(
        &self,
        server: &UpstreamServer,
        scope: SessionScopeKey,
    ) -> Arc<SessionSlot> {
        if let Ok(mut names) = self.inner.server_names.lock() {
            names.insert(server.id.clone(), server.name.clone());
        }
        self.inner.sessions.slot(&SessionKey {
            server_id: server.id.clone(),
            scope,
        })
    }

    /// The live session for `server` and `scope`, started on first use.
    pub(crate) async fn session(
        &self,
        server: &UpstreamServer,
        scope: SessionScopeKey,
    ) -> Result<(Arc<SessionSlot>, Arc<LiveSession>), UpstreamError> {
        server.validate()?;
        let slot = self.slot_for(server, scope);
        let live = slot.acquire(&self.start_context(server)).await?;
        Ok((slot, live))
    }

    pub(crate) fn start_context<'a>(&'a self, server: &'a UpstreamServer) -> StartContext<'a> {
        let handler = self
            .inner
            .list_changed
            .lock()
            .ok()
            .and_then(|handler| handler.clone());
        let server_id = server.id.clone();
        let list_changed: Option<ListChangedCallback> = handler
            .map(|handler| Arc::new(move |kind| handler(&server_id, kind)) as ListChangedCallback);
        let (policy, http_client) = self.reach(server.origin);
        StartContext {
            server,
            config: &self.inner.config,
            http_client,
            policy,
            versions: &self.inner.versions,
            list_changed,
            elicitation: self.inner.elicitation.clone(),
            sampling: self.inner.sampling,
            session_events: self.inner.session_events.clone(),
            shutdown: self.inner.shutdown.clone(),
            task_watchers: Arc::clone(&self.inner.task_watchers),
        }
    }
}
