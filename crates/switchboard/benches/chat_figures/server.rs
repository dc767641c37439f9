//! Starting the real server for the bench: SQLite in a temp dir, our kg endpoint at `/mcp`
//! registered as an upstream, and the chat engine with the given model, on a loopback port.

use std::sync::Arc;
use switchboard_chat::{
    ApprovalGate, ChatConfig, ChatService, EventSink, GateDecision, GateRequest, OwnEndpoints,
};
use switchboard_llm::{LlmConfig, LlmProvider};
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_mcp_server::{KgConfig, KnowledgeGraphService, register_kg_upstream};
use switchboard_server::{AppState, ServerConfig, app, serve_router};
use switchboard_store::{DatabaseConfig, SecretCipher, Store};
use tokio_util::sync::CancellationToken;

/// The bench measures the engine, not people deciding: every call is allowed (a chat engine
/// without a gate would refuse them).
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

/// A server started by [`start`]; cancel `shutdown` to stop it.
pub struct Running {
    pub base: String,
    pub token: String,
    pub client: reqwest::Client,
    pub shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

pub async fn start(provider: Arc<dyn LlmProvider>) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        &DatabaseConfig::default(),
        dir.path(),
        SecretCipher::generate(),
    )
    .await
    .unwrap();
    let boot = store.bootstrap_default(None).await.unwrap().unwrap();
    let workspace = boot.workspace.id.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let client = McpClient::new(McpClientConfig::default()).unwrap();
    let chat = ChatService::builder(
        store.clone(),
        client,
        ChatConfig::default(),
        LlmConfig::default(),
    )
    .provider(provider)
    .approval_gate(Arc::new(AllowEveryCall))
    .own_endpoints(OwnEndpoints::for_listener(address))
    .shutdown_token(shutdown.clone())
    .build()
    .unwrap();
    // The per-token rate limit protects the endpoint from clients; the bench measures latency.
    let kg_config = KgConfig {
        rate_limit_per_minute: 1_000_000,
        rate_limit_burst: 1_000_000,
        ..KgConfig::default()
    };
    let kg = KnowledgeGraphService::for_store(store.clone(), kg_config, Some(workspace.clone()))
        .unwrap();
    kg.load_sample_if_configured().await.unwrap();
    register_kg_upstream(&store, &workspace, &format!("http://{address}/mcp"))
        .await
        .unwrap();
    let config = ServerConfig {
        bind: address,
        ..ServerConfig::default()
    };
    let state = AppState::new(store, config.clone())
        .with_shutdown_token(shutdown.clone())
        .with_knowledge_graph(kg)
        .with_chat(chat);
    let token = shutdown.clone();
    let router = app(state);
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
    Running {
        base: format!("http://{address}"),
        token: boot.plaintext.expose().to_owned(),
        client: reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .unwrap(),
        shutdown,
        _dir: dir,
    }
}
