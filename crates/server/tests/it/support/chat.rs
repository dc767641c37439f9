//! A real server with the chat engine for the chat tests: SQLite in a temp dir, our own kg
//! endpoint at `/mcp` (sample dataset loaded, registered as upstream `kg`), an `McpClient`, a
//! configurable LLM; plus an SSE reader, interop peers, and store helpers.

use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_chat::{ApprovalGate, ChatConfig, ChatService, OwnEndpoints};
use switchboard_core::{ConversationId, TransportKind, WorkspaceId};
use switchboard_llm::{LlmConfig, LlmProvider, ProviderKind};
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_mcp_server::{KgConfig, KnowledgeGraphService, register_kg_upstream};
use switchboard_registry::ServerRegistry;
use switchboard_server::{AppState, KgSchemaContext, run};
use switchboard_store::{
    DatabaseConfig, NewServer, SecretCipher, ServerConnectionConfig, ServerSecrets, Store,
};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The gate of the chat tests that are not about approvals: allows every call (the approvals
/// crate's gate is exercised by the `approvals_*` tests).
#[derive(Debug)]
pub struct AllowEveryCall;

#[async_trait::async_trait]
impl ApprovalGate for AllowEveryCall {
    async fn review(
        &self,
        _request: &switchboard_chat::GateRequest,
        _events: &switchboard_chat::EventSink,
    ) -> switchboard_chat::GateDecision {
        switchboard_chat::GateDecision::Allow {
            decided_by: "test:allow_every_call".to_owned(),
        }
    }
}

/// What to vary between chat tests.
pub struct ChatOptions {
    pub chat: ChatConfig,
    pub llm: LlmConfig,
    pub provider: Option<Arc<dyn LlmProvider>>,
    /// The approval gate (default: [`AllowEveryCall`]); `None` builds the engine without one.
    pub gate: Option<Arc<dyn ApprovalGate>>,
    pub mcp: McpClientConfig,
    /// Run on a fresh PostgreSQL schema instead of SQLite.
    pub postgres: bool,
    /// `server.shutdown_grace_secs` (how long a shutdown lets answers in flight finish).
    pub shutdown_grace_secs: u64,
    /// Resolves host names for the MCP client (default: the system resolver).
    pub host_lookup: Option<Arc<dyn switchboard_mcp_client::url_policy::HostLookup>>,
}

impl Default for ChatOptions {
    fn default() -> Self {
        Self {
            chat: ChatConfig::default(),
            llm: LlmConfig::default(),
            provider: None,
            gate: Some(Arc::new(AllowEveryCall)),
            mcp: McpClientConfig {
                session_init_timeout_secs: 15,
                session_init_backoff_ms: 50,
                session_error_retry_secs: 1,
                ..McpClientConfig::default()
            },
            postgres: false,
            shutdown_grace_secs: crate::support::test_config().shutdown_grace_secs,
            host_lookup: None,
        }
    }
}

impl ChatOptions {
    /// The scripted OpenAI-compatible fake at `base_url`, with quick retries.
    pub fn openai(base_url: &str) -> Self {
        Self {
            llm: LlmConfig {
                provider: ProviderKind::Openai,
                base_url: base_url.to_owned(),
                api_key: Some(switchboard_llm::ApiKey::new("sk-test")),
                model: "fake-model".to_owned(),
                retry_base_delay_ms: 10,
                retry_max_delay_ms: 50,
                stream_idle_timeout_ms: 30_000,
                ..LlmConfig::default()
            },
            ..Self::default()
        }
    }
}

impl ChatOptions {
    /// The scripted fake Anthropic Messages API at `base_url`, with quick retries.
    pub fn anthropic(base_url: &str) -> Self {
        Self {
            llm: LlmConfig {
                provider: ProviderKind::Anthropic,
                base_url: base_url.to_owned(),
                api_key: Some(switchboard_llm::ApiKey::new("sk-ant-test")),
                model: "claude-fake".to_owned(),
                retry_base_delay_ms: 10,
                retry_max_delay_ms: 50,
                stream_idle_timeout_ms: 30_000,
                ..LlmConfig::default()
            },
            ..Self::default()
        }
    }
}

pub use crate::support::sse::{SseReader, answer_text, of_type};

/// A new member of `server`'s workspace and their token holding `scopes` (space-separated).
pub async fn member_token(server: &ChatServer, name: &str, scopes: &str) -> String {
    let (_, token) = crate::support::person_with_token(
        &server.store,
        &server.workspace_id,
        name,
        switchboard_store::UserRole::Member,
        scopes,
    )
    .await;
    token
}
pub use switchboard_test_support::interop::{Peer, everything_js};
pub use switchboard_test_support::postgres::PostgresSchema;

pub struct ChatServer {
    pub address: SocketAddr,
    /// The MCP Apps sandbox origin's listener.
    pub apps_address: SocketAddr,
    pub store: Store,
    pub token: String,
    pub workspace_id: WorkspaceId,
    pub client: reqwest::Client,
    pub chat: ChatService,
    pub registry: ServerRegistry,
    pub shutdown: CancellationToken,
    stop: Option<oneshot::Sender<()>>,
    /// `switchboard_server::run`, until it returns after a shutdown.
    serving: Option<JoinHandle<std::io::Result<()>>>,
    data_dir: tempfile::TempDir,
    _schema: Option<PostgresSchema>,
}

impl ChatServer {
    pub async fn start(options: ChatOptions) -> Self {
        let data_dir = tempfile::tempdir().unwrap();
        let schema = options.postgres.then(PostgresSchema::create);
        let database = match &schema {
            Some(schema) => DatabaseConfig {
                url: Some(schema.url()),
                max_connections: 4,
                ..DatabaseConfig::default()
            },
            None => DatabaseConfig::default(),
        };
        let store = Store::open(&database, data_dir.path(), SecretCipher::generate())
            .await
            .unwrap();
        let bootstrapped = store.bootstrap_default(None).await.unwrap().unwrap();
        let workspace_id = bootstrapped.workspace.id.clone();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let mut mcp = McpClient::builder(options.mcp);
        if let Some(lookup) = options.host_lookup {
            mcp = mcp.host_lookup(lookup);
        }
        let mcp = mcp.build().unwrap();
        let registry = ServerRegistry::new(mcp.clone(), store.clone());
        let kg = KnowledgeGraphService::for_store(
            store.clone(),
            KgConfig::default(),
            Some(workspace_id.clone()),
        )
        .unwrap();
        let server_config = switchboard_server::ServerConfig {
            shutdown_grace_secs: options.shutdown_grace_secs,
            ..crate::support::test_config()
        };
        // OAuth as the binary wires it: the registered servers' URL policy, the public URL.
        let oauth = switchboard_registry::oauth::OAuthService::new(
            store.clone(),
            mcp.url_policy_for(switchboard_mcp_client::url_policy::ServerOrigin::Registered)
                .clone(),
            switchboard_server::oauth::settings(&server_config.public_url, "test"),
        )
        .unwrap();
        registry.set_oauth(oauth.clone());
        let mut builder =
            ChatService::builder(store.clone(), mcp.clone(), options.chat, options.llm)
                .schema_context(Arc::new(KgSchemaContext::new(kg.clone())))
                .authorization(Arc::new(switchboard_server::oauth::OAuthStarter(
                    oauth.clone(),
                )))
                .registry(registry.clone())
                .own_endpoints(OwnEndpoints::for_listener(address))
                .shutdown_token(shutdown.clone());
        if let Some(provider) = options.provider {
            builder = builder.provider(provider);
        }
        if let Some(gate) = options.gate {
            builder = builder.approval_gate(gate);
        }
        let chat = builder.build().unwrap();
        kg.load_sample_if_configured().await.unwrap();
        register_kg_upstream(&store, &workspace_id, &format!("http://{address}/mcp"))
            .await
            .unwrap();
        let apps_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let apps_address = apps_listener.local_addr().unwrap();
        let state = AppState::new(store.clone(), server_config.clone())
            .with_apps_origin(format!("http://{apps_address}"))
            .with_oauth(oauth)
            .with_shutdown_token(shutdown.clone())
            .with_knowledge_graph(kg)
            .with_mcp_registry(registry.clone())
            .with_chat(chat.clone());
        tokio::spawn(switchboard_server::run_apps(apps_listener, state.clone()));
        let (stop, stopped) = oneshot::channel::<()>();
        let serving = tokio::spawn(run(listener, state, async {
            let _ = stopped.await;
        }));
        Self {
            address,
            apps_address,
            store,
            token: bootstrapped.plaintext.expose().to_owned(),
            workspace_id,
            client: switchboard_test_support::http_client::http_client(),
            chat,
            registry,
            shutdown,
            stop: Some(stop),
            serving: Some(serving),
            data_dir,
            _schema: schema,
        }
    }

    /// Every byte of the SQLite database as it is on disk now (the file, its WAL and shared
    /// memory), for checking that a secret is nowhere in plaintext; empty on PostgreSQL.
    pub fn raw_database_bytes(&self) -> Vec<u8> {
        super::raw_sqlite_bytes(self.data_dir.path())
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// Resolves the server's shutdown future (as SIGTERM does in the binary) and returns the
    /// task serving it, which ends once the drain and the cancel phase are over.
    pub fn begin_shutdown(&mut self) -> JoinHandle<std::io::Result<()>> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.serving.take().expect("shutdown begun twice")
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> reqwest::Response {
        let mut request = self
            .client
            .request(method, self.url(path))
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        request.send().await.unwrap()
    }

    /// Starts an answer; panics unless the server answers 200 with an event stream.
    pub async fn ask(&self, body: Value) -> SseReader {
        let response = self
            .client
            .post(self.url("/chat/stream"))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status();
        if status != 200 {
            panic!(
                "POST /chat/stream answered {status}: {}",
                response.text().await.unwrap_or_default()
            );
        }
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        SseReader::new(response)
    }

    /// Asks `message` in a new conversation and reads the whole answer.
    pub async fn ask_and_wait(&self, body: Value) -> Vec<Value> {
        self.ask(body).await.until_done().await
    }

    pub async fn attach(&self, conversation_id: &str) -> SseReader {
        let response = self
            .client
            .get(self.url(&format!("/chat/{conversation_id}/stream")))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        SseReader::new(response)
    }

    pub async fn conversation(&self, conversation_id: &str) -> Value {
        let response = self
            .send(
                reqwest::Method::GET,
                &format!("/chat/conversations/{conversation_id}"),
                None,
            )
            .await;
        assert_eq!(response.status(), 200);
        response.json().await.unwrap()
    }

    /// Registers an upstream in the test workspace; returns its id.
    pub async fn register_server(&self, server: NewServer) -> String {
        self.store
            .create_server(&self.workspace_id, server)
            .await
            .unwrap()
            .id
            .into_string()
    }

    /// Waits until no answer is in flight for the conversation (the turn saved everything).
    pub async fn wait_until_idle(&self, conversation_id: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let detail = self.conversation(conversation_id).await;
            if detail["conversation"]["answer_in_flight"] == json!(false) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the answer is still in flight after 20 s"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    pub async fn stored_messages(
        &self,
        conversation_id: &str,
    ) -> Vec<switchboard_store::MessageRecord> {
        self.store
            .list_messages(&self.workspace_id, &ConversationId::from(conversation_id))
            .await
            .unwrap()
    }

    pub async fn stored_tool_calls(
        &self,
        conversation_id: &str,
    ) -> Vec<switchboard_store::ToolCallRecord> {
        self.store
            .list_tool_calls(&self.workspace_id, &ConversationId::from(conversation_id))
            .await
            .unwrap()
    }
}

impl Drop for ChatServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// `server-everything` over stdio, registered under `name`.
pub fn everything_stdio(name: &str) -> NewServer {
    NewServer {
        name: name.to_owned(),
        transport: TransportKind::Stdio,
        url: None,
        command: Some("node".to_owned()),
        args: vec![everything_js(), "stdio".to_owned()],
        connection: ServerConnectionConfig::default(),
        secrets: ServerSecrets::default(),
        is_active: true,
    }
}

/// A remote server registration.
pub fn remote_server(name: &str, url: &str) -> NewServer {
    NewServer::remote(name, TransportKind::StreamableHttp, url)
}
