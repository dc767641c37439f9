//! What every whole-stack bench starts from: the real HTTP server on a loopback port, SQLite
//! (WAL, `synchronous=FULL` unless the bench asks otherwise) in a temp dir, our own knowledge-graph endpoint at `/mcp`
//! registered as the upstream `kg` (with the sample data, and rate limits out of the way: a
//! bench makes thousands of calls a minute), and the chat engine with the given model; the
//! TCP connections that reach `/mcp` are counted by their peer port ([`McpPeers`]). Each
//! bench binary includes this module (`#[path]`), so the stack is assembled in one place and
//! every bench measures the same thing.

// Each bench binary uses the parts it measures.
#![allow(dead_code)]

pub mod sse;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use switchboard_approvals::{ApprovalConfig, Approvals};
use switchboard_chat::{
    ApprovalGate, ChatConfig, ChatService, EventSink, GateDecision, GateRequest, OwnEndpoints,
};
use switchboard_core::{Principal, ServerId, TransportKind};
use switchboard_llm::{LlmConfig, LlmProvider};
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_mcp_server::{KgConfig, KnowledgeGraphService, register_kg_upstream};
use switchboard_server::{AppState, ServerConfig, app, serve_router};
use switchboard_store::{DatabaseConfig, NewServer, SecretCipher, Store};
use tokio_util::sync::CancellationToken;

/// Who decides the calls of the stack's chat.
pub enum Gate {
    /// The real approvals (policies, pins, asking, audit), as in production.
    Approvals,
    /// Every call allowed: for benches that measure the engine, not people deciding (a chat
    /// engine without a gate would refuse every call).
    AllowEveryCall,
}

#[derive(Debug)]
struct AllowEveryCall;

#[async_trait::async_trait]
impl ApprovalGate for AllowEveryCall {
    async fn review(&self, _request: &GateRequest, _events: &EventSink) -> GateDecision {
        GateDecision::Allow {
            decided_by: "bench:allow_every_call".to_owned(),
        }
    }
}

/// A running stack; cancel `shutdown` to stop it.
pub struct Stack {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The workspace owner's all-scopes token.
    pub token: String,
    pub client: reqwest::Client,
    pub store: Store,
    /// The owner, as the token authenticates them.
    pub principal: Principal,
    /// The registered `kg` server (our own `/mcp`).
    pub kg_server: ServerId,
    /// The connections requests to `/mcp` came over.
    pub mcp_peers: McpPeers,
    approvals: Option<Approvals>,
    pub shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Stack {
    /// The real approvals of a stack started with [`Gate::Approvals`].
    pub fn approvals(&self) -> &Approvals {
        self.approvals
            .as_ref()
            .expect("the stack was started with Gate::Approvals")
    }

    /// Registers a remote upstream server `name` at `url` in the owner's workspace, active.
    pub async fn register_remote(&self, name: &str, transport: TransportKind, url: &str) {
        let server = NewServer::remote(name, transport, url);
        self.store
            .create_server(&self.principal.workspace_id, server)
            .await
            .unwrap();
    }
}

/// Starts the stack; `provider` is the chat's model (the offline planner when `None`).
pub async fn start(provider: Option<Arc<dyn LlmProvider>>, gate: Gate) -> Stack {
    start_on(provider, gate, &DatabaseConfig::default()).await
}

/// [`start`] on the database `database` selects (a PostgreSQL one registers this replica's
/// instance, as the binary does, so other replicas see its answers in flight).
pub async fn start_on(
    provider: Option<Arc<dyn LlmProvider>>,
    gate: Gate,
    database: &DatabaseConfig,
) -> Stack {
    start_configured(provider, gate, database, McpClientConfig::default()).await
}

/// [`start`] with the chat's MCP client configured by `mcp` (timeouts, URL policy).
pub async fn start_with(
    provider: Option<Arc<dyn LlmProvider>>,
    gate: Gate,
    mcp: McpClientConfig,
) -> Stack {
    start_configured(provider, gate, &DatabaseConfig::default(), mcp).await
}

async fn start_configured(
    provider: Option<Arc<dyn LlmProvider>>,
    gate: Gate,
    database: &DatabaseConfig,
    mcp: McpClientConfig,
) -> Stack {
    let (dir, store) = open(database).await;
    let boot = store.bootstrap_default(None).await.unwrap().unwrap();
    let workspace = boot.workspace.id.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    register_kg_upstream(&store, &workspace, &format!("http://{address}/mcp"))
        .await
        .unwrap();
    let kg_server = store
        .find_server_by_name(&workspace, "kg")
        .await
        .unwrap()
        .unwrap()
        .id;
    let identity = Identity {
        token: boot.plaintext.expose().to_owned(),
        principal: Principal {
            workspace_id: workspace,
            user_id: boot.owner.id,
            token_id: Some(boot.token.id),
            scopes: boot.token.scopes,
        },
        kg_server,
    };
    serve((dir, store), provider, gate, listener, identity, true, mcp).await
}

impl Stack {
    /// A second replica on the same (PostgreSQL) database, serving the same workspace and
    /// token, with its own chat engine (every call allowed) and `/mcp`.
    pub async fn replica(
        &self,
        provider: Option<Arc<dyn LlmProvider>>,
        database: &DatabaseConfig,
    ) -> Stack {
        let opened = open(database).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let identity = Identity {
            token: self.token.clone(),
            principal: self.principal.clone(),
            kg_server: self.kg_server.clone(),
        };
        serve(
            opened,
            provider,
            Gate::AllowEveryCall,
            listener,
            identity,
            false,
            McpClientConfig::default(),
        )
        .await
    }
}

/// Who the stack's requests are made as.
struct Identity {
    token: String,
    principal: Principal,
    kg_server: ServerId,
}

async fn open(database: &DatabaseConfig) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(database, dir.path(), SecretCipher::generate())
        .await
        .unwrap();
    if database.url.is_some() {
        // Alive for three minutes without heartbeats: longer than a bench's run.
        store
            .register_instance(std::time::Duration::from_secs(60))
            .await
            .unwrap();
    }
    (dir, store)
}

/// Serves the stack on `listener`; `load_sample` fills the knowledge graph (once per
/// database).
async fn serve(
    (dir, store): (tempfile::TempDir, Store),
    provider: Option<Arc<dyn LlmProvider>>,
    gate: Gate,
    listener: tokio::net::TcpListener,
    identity: Identity,
    load_sample: bool,
    mcp: McpClientConfig,
) -> Stack {
    let address = listener.local_addr().unwrap();
    let workspace = identity.principal.workspace_id.clone();
    let shutdown = CancellationToken::new();
    let approvals = match gate {
        Gate::Approvals => Some(Approvals::new(store.clone(), ApprovalConfig::default()).unwrap()),
        Gate::AllowEveryCall => None,
    };
    let chat = chat_engine(
        &store,
        provider,
        approvals.as_ref(),
        address,
        &shutdown,
        mcp,
    );
    let kg_config = KgConfig {
        rate_limit_per_minute: 1_000_000,
        rate_limit_burst: 1_000_000,
        gateway_rate_limit_per_minute: 1_000_000,
        gateway_rate_limit_burst: 1_000_000,
        ..KgConfig::default()
    };
    let kg = KnowledgeGraphService::for_store(store.clone(), kg_config, Some(workspace)).unwrap();
    if load_sample {
        kg.load_sample_if_configured().await.unwrap();
    }
    let config = ServerConfig {
        bind: address,
        // The streams figure holds 10,000 streams open from one loopback address.
        max_connections: 20_000,
        max_connections_per_peer: 20_000,
        ..ServerConfig::default()
    };
    let mut state = AppState::new(store.clone(), config.clone())
        .with_shutdown_token(shutdown.clone())
        .with_knowledge_graph(kg)
        .with_chat(chat);
    if let Some(approvals) = &approvals {
        state = state.with_approvals(approvals.clone());
    }
    let token = shutdown.clone();
    let mcp_peers = McpPeers::default();
    let router = app(state).layer(axum::middleware::from_fn({
        let mcp_peers = mcp_peers.clone();
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            mcp_peers.saw(&request);
            next.run(request)
        }
    }));
    tokio::spawn(async move {
        serve_router(
            listener,
            router,
            &config,
            token.clone(),
            token.cancelled_owned(),
        )
        .await
    });
    Stack {
        base: format!("http://{address}"),
        token: identity.token,
        client: reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .unwrap(),
        store,
        principal: identity.principal,
        kg_server: identity.kg_server,
        mcp_peers,
        approvals,
        shutdown,
        _dir: dir,
    }
}

/// The peer ports of the connections requests to `/mcp` came over: a new port is a new TCP
/// connection (loopback ports are not reused within a bench's seconds).
#[derive(Clone, Debug, Default)]
pub struct McpPeers {
    ports: Arc<Mutex<HashSet<u16>>>,
}

impl McpPeers {
    fn saw(&self, request: &axum::extract::Request) {
        let peer = request
            .extensions()
            .get::<axum::extract::ConnectInfo<SocketAddr>>();
        if let (Some(peer), "/mcp") = (peer, request.uri().path()) {
            self.ports.lock().unwrap().insert(peer.0.port());
        }
    }

    /// Connections seen so far.
    pub fn count(&self) -> usize {
        self.ports.lock().unwrap().len()
    }
}

/// This process's resident memory, in KiB.
pub fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmRSS:"))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|value| value.parse().ok())
        })
        .unwrap_or(0)
}

/// This process's open file descriptors.
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |entries| entries.count())
}

/// The chat engine: the real approvals (and their elicitation responder) or every call allowed.
fn chat_engine(
    store: &Store,
    provider: Option<Arc<dyn LlmProvider>>,
    approvals: Option<&Approvals>,
    address: std::net::SocketAddr,
    shutdown: &CancellationToken,
    mcp: McpClientConfig,
) -> ChatService {
    let mut client = McpClient::builder(mcp);
    if let Some(approvals) = approvals {
        client = client.elicitation(approvals.elicitation_responder());
    }
    let mut chat = ChatService::builder(
        store.clone(),
        client.build().unwrap(),
        ChatConfig::default(),
        LlmConfig::default(),
    )
    .approval_gate(match approvals {
        Some(approvals) => approvals.gate(),
        None => Arc::new(AllowEveryCall),
    })
    .own_endpoints(OwnEndpoints::for_listener(address))
    .shutdown_token(shutdown.clone());
    if let Some(provider) = provider {
        chat = chat.provider(provider);
    }
    chat.build().unwrap()
}
