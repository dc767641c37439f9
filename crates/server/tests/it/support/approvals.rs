//! A real server wired the way the binary wires approvals: one `Approvals` whose gate the chat
//! engine uses, whose elicitation responder the MCP client uses, and which serves
//! `/chat/approvals`, `/chat/elicitations`, the policy routes and `/api/audit`. The model is
//! the scripted fake OpenAI server; the upstream is `server-everything` over stdio, synced by the
//! MCP registry (which tells approvals after every sync). Users: the
//! bootstrap admin, and Alice and Bob with `chat:use` tokens.

use crate::support::chat::everything_stdio;
use crate::support::sse::{SseReader, of_type};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use switchboard_approvals::{ApprovalConfig, Approvals, RecoveredRequests};
use switchboard_chat::{ChatConfig, ChatService};
use switchboard_core::{ServerId, UserId, WorkspaceId};
use switchboard_llm::{LlmConfig, ProviderKind};
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_mcp_server::{KgConfig, KnowledgeGraphService};
use switchboard_registry::ServerRegistry;
use switchboard_server::{AppState, app, serve_router};
use switchboard_store::{DatabaseConfig, InstanceHeartbeat, SecretCipher, Store, UserRole};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedToolCall};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Replicas' heartbeat in tests: a crashed one is presumed dead 1.5 s after its last beat.
pub const TEST_HEARTBEAT: Duration = Duration::from_millis(500);

pub struct Person {
    pub id: UserId,
    pub token: String,
}

pub struct ApprovalServer {
    pub address: SocketAddr,
    pub store: Store,
    pub workspace_id: WorkspaceId,
    pub approvals: Approvals,
    pub admin: Person,
    pub alice: Person,
    pub bob: Person,
    pub client: reqwest::Client,
    /// The task hearing other replicas' decisions (PostgreSQL only).
    pub decision_listener: Option<tokio::task::JoinHandle<()>>,
    /// What the start-up recovery changed, as the binary runs it after registering this
    /// instance: (tool calls, approvals and forms expired).
    pub recovered_at_start: (u64, RecoveredRequests),
    /// Keeps this instance alive (every `TEST_HEARTBEAT`); `crash` stops it without cleanup.
    heartbeat: Option<InstanceHeartbeat>,
    /// Where the store is, for a replica to open its own.
    database: DatabaseConfig,
    shutdown: CancellationToken,
    stop: Option<oneshot::Sender<()>>,
    _data_dir: tempfile::TempDir,
}

fn llm(base_url: &str) -> LlmConfig {
    LlmConfig {
        provider: ProviderKind::Openai,
        base_url: base_url.to_owned(),
        api_key: Some(switchboard_llm::ApiKey::new("sk-test")),
        model: "fake-model".to_owned(),
        retry_base_delay_ms: 10,
        retry_max_delay_ms: 50,
        stream_idle_timeout_ms: 30_000,
        ..LlmConfig::default()
    }
}

impl ApprovalServer {
    pub async fn start(config: ApprovalConfig, llm_base_url: &str) -> Self {
        Self::start_on(config, llm_base_url, &DatabaseConfig::default()).await
    }

    /// A server on `database` (SQLite in its own data dir when the URL is unset), bootstrapped.
    pub async fn start_on(
        config: ApprovalConfig,
        llm_base_url: &str,
        database: &DatabaseConfig,
    ) -> Self {
        Self::start_with_kg(config, llm_base_url, database, KgConfig::default()).await
    }

    /// [`Self::start_on`] with `kg` as the `[kg]` settings (`/mcp` and the gateway).
    pub async fn start_with_kg(
        config: ApprovalConfig,
        llm_base_url: &str,
        database: &DatabaseConfig,
        kg: KgConfig,
    ) -> Self {
        let data_dir = tempfile::tempdir().unwrap();
        let store = Store::open(database, data_dir.path(), SecretCipher::generate())
            .await
            .unwrap();
        let bootstrapped = store.bootstrap_default(None).await.unwrap().unwrap();
        let workspace_id = bootstrapped.workspace.id.clone();
        let mut people = Vec::new();
        for name in ["alice", "bob"] {
            let (id, token) =
                super::person_with_token(&store, &workspace_id, name, UserRole::Member, "chat:use")
                    .await;
            people.push(Person { id, token });
        }
        let bob = people.pop().unwrap();
        let alice = people.pop().unwrap();
        let admin = Person {
            id: bootstrapped.owner.id,
            token: bootstrapped.plaintext.expose().to_owned(),
        };
        Self::serve(
            (config, kg),
            llm_base_url,
            (store, database.clone()),
            workspace_id,
            [admin, alice, bob],
            data_dir,
        )
        .await
    }

    /// Another replica on the same (PostgreSQL) database: its own store pool, approvals,
    /// MCP client, chat engine and listener; the same workspace, people and tokens.
    pub async fn replica(&self, config: ApprovalConfig, llm_base_url: &str) -> Self {
        let database = self.database.clone();
        self.replica_on(config, llm_base_url, &database).await
    }

    /// [`Self::replica`] connecting with `database` (the same database, e.g. another
    /// `search_path`).
    pub async fn replica_on(
        &self,
        config: ApprovalConfig,
        llm_base_url: &str,
        database: &DatabaseConfig,
    ) -> Self {
        let data_dir = tempfile::tempdir().unwrap();
        let store = Store::open(database, data_dir.path(), SecretCipher::generate())
            .await
            .unwrap();
        let same = |person: &Person| Person {
            id: person.id.clone(),
            token: person.token.clone(),
        };
        Self::serve(
            (config, KgConfig::default()),
            llm_base_url,
            (store, database.clone()),
            self.workspace_id.clone(),
            [same(&self.admin), same(&self.alice), same(&self.bob)],
            data_dir,
        )
        .await
    }

    async fn serve(
        (config, kg): (ApprovalConfig, KgConfig),
        llm_base_url: &str,
        (store, database): (Store, DatabaseConfig),
        workspace_id: WorkspaceId,
        [admin, alice, bob]: [Person; 3],
        data_dir: tempfile::TempDir,
    ) -> Self {
        // As the binary does: this process's instance first; the start-up recoveries touch
        // only instances that are not alive.
        store.register_instance(TEST_HEARTBEAT).await.unwrap();
        let approvals = Approvals::new(store.clone(), config).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        // As the binary does: on PostgreSQL other replicas' decisions wake calls waiting here.
        let decision_listener = approvals.start_decision_listener(shutdown.clone()).await;
        let mcp = McpClient::builder(McpClientConfig {
            session_init_timeout_secs: 15,
            session_init_backoff_ms: 50,
            session_error_retry_secs: 1,
            ..McpClientConfig::default()
        })
        .elicitation(approvals.elicitation_responder())
        .on_session_event(approvals.session_event_handler())
        .build()
        .unwrap();
        let registry = ServerRegistry::new(mcp.clone(), store.clone());
        registry.on_synced(approvals.synced_handler());
        let chat =
            ChatService::builder(store.clone(), mcp, ChatConfig::default(), llm(llm_base_url))
                .approval_gate(approvals.gate())
                .shutdown_token(shutdown.clone())
                .build()
                .unwrap();
        let recovered_at_start = (
            chat.recover_interrupted_calls().await.unwrap(),
            approvals.recover_after_restart().await.unwrap(),
        );
        // As the binary does: dead instances' task calls are followed here, found at start
        // and at every heartbeat after.
        chat.resume_task_calls().await.unwrap();
        chat.keep_adopting_task_calls(TEST_HEARTBEAT);
        chat.keep_forwarding_task_cancels();
        let heartbeat = store.keep_instance_alive();
        let server_config = crate::support::test_config();
        let kg = KnowledgeGraphService::for_store(store.clone(), kg, None).unwrap();
        let state = AppState::new(store.clone(), server_config.clone())
            .with_knowledge_graph(kg)
            .with_shutdown_token(shutdown.clone())
            .with_chat(chat)
            .with_mcp_registry(registry)
            .with_approvals(approvals.clone());
        let router = app(state);
        let (stop, stopped) = oneshot::channel::<()>();
        let token = shutdown.clone();
        tokio::spawn(async move {
            serve_router(listener, router, &server_config, token, async {
                let _ = stopped.await;
            })
            .await
        });
        Self {
            address,
            store,
            workspace_id,
            approvals,
            admin,
            alice,
            bob,
            client: switchboard_test_support::http_client::http_client(),
            decision_listener,
            recovered_at_start,
            heartbeat,
            database,
            shutdown,
            stop: Some(stop),
            _data_dir: data_dir,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// `server-everything` over stdio as server `everything`, with its tools synced.
    pub async fn register_everything(&self) -> ServerId {
        let server = self
            .store
            .create_server(&self.workspace_id, everything_stdio("everything"))
            .await
            .unwrap();
        server.id
    }

    pub async fn send(
        &self,
        who: &Person,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (reqwest::StatusCode, Value) {
        let mut request = self
            .client
            .request(method, self.url(path))
            .bearer_auth(&who.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, body)
    }

    /// A new user of the workspace made the way an operator makes one — `POST /api/users`,
    /// then `POST /api/tokens {user_id}` with the bootstrap admin's token — and its token.
    pub async fn person_via_api(&self, name: &str, role: &str, scopes: &[&str]) -> Person {
        let (status, user) = self
            .send(
                &self.admin,
                reqwest::Method::POST,
                "/api/users",
                Some(json!({"name": name, "role": role})),
            )
            .await;
        assert_eq!(status, 201, "{user}");
        let (status, token) = self
            .send(
                &self.admin,
                reqwest::Method::POST,
                "/api/tokens",
                Some(json!({"name": name, "scopes": scopes, "user_id": user["id"]})),
            )
            .await;
        assert_eq!(status, 201, "{token}");
        Person {
            id: UserId::from_string(user["id"].as_str().unwrap()),
            token: token["plaintext"].as_str().unwrap().to_owned(),
        }
    }

    /// Starts an answer as `who`.
    pub async fn ask(&self, who: &Person, message: &str) -> SseReader {
        let response = self
            .client
            .post(self.url("/chat/stream"))
            .bearer_auth(&who.token)
            .json(&json!({"message": message}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "POST /chat/stream");
        SseReader::new(response)
    }

    /// Decides an approval as `who`.
    pub async fn decide(
        &self,
        who: &Person,
        approval_id: &Value,
        decision: &str,
        remember: &str,
    ) -> (reqwest::StatusCode, Value) {
        self.send(
            who,
            reqwest::Method::POST,
            &format!("/chat/approvals/{}", approval_id.as_str().unwrap()),
            Some(json!({"decision": decision, "remember": remember})),
        )
        .await
    }

    pub async fn set_policy(&self, server_id: &ServerId, tool: &str, policy: &str) {
        let (status, body) = self
            .send(
                &self.admin,
                reqwest::Method::PUT,
                &format!("/api/mcp/servers/{server_id}/tools/{tool}/policy"),
                Some(json!({"policy": policy})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
    }

    /// `GET /api/audit` with `query`, as the admin.
    pub async fn audit(&self, query: &str) -> Vec<Value> {
        let (status, body) = self
            .send(
                &self.admin,
                reqwest::Method::GET,
                &format!("/api/audit?{query}"),
                None,
            )
            .await;
        assert_eq!(status, 200, "{body}");
        body["entries"].as_array().unwrap().clone()
    }
}

impl ApprovalServer {
    /// This replica stops saying it is alive without cleaning anything up, as a crashed
    /// process would (its answers keep running here, but other replicas may now recover them).
    pub fn crash_heartbeat(&mut self) {
        if let Some(heartbeat) = self.heartbeat.take() {
            heartbeat.abandon();
        }
    }
}

impl Drop for ApprovalServer {
    fn drop(&mut self) {
        self.crash_heartbeat();
        self.shutdown.cancel();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

// Helpers of the approval tests.

pub const SECRET: &str = "sk-live-DO-NOT-STORE-123";

pub fn echo_call(id: &str, message: &str) -> ScriptedToolCall {
    ScriptedToolCall::new(id, "everything__echo", json!({"message": message}))
}

pub fn tool_events<'a>(events: &'a [Value], status: &str) -> Vec<&'a Value> {
    of_type(events, "mcp_tool")
        .into_iter()
        .filter(|event| event["status"] == status)
        .collect()
}

/// The `tool` messages the model was sent on its last request.
pub fn last_tool_messages(fake: &FakeOpenAi) -> Vec<String> {
    let requests = fake.requests();
    let last = requests.last().expect("the model was asked");
    last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap().to_owned())
        .collect()
}

pub async fn start(
    config: ApprovalConfig,
) -> (FakeOpenAi, ApprovalServer, switchboard_core::ServerId) {
    let fake = FakeOpenAi::start().await;
    let server = ApprovalServer::start(config, &fake.base_url()).await;
    let everything = server.register_everything().await;
    (fake, server, everything)
}

/// [`start`] with the gateway's lists in pages of `page_size`.
pub async fn start_paged(
    config: ApprovalConfig,
    page_size: usize,
) -> (FakeOpenAi, ApprovalServer, switchboard_core::ServerId) {
    let fake = FakeOpenAi::start().await;
    let kg = KgConfig {
        gateway_page_size: page_size,
        ..KgConfig::default()
    };
    let server =
        ApprovalServer::start_with_kg(config, &fake.base_url(), &DatabaseConfig::default(), kg)
            .await;
    let everything = server.register_everything().await;
    (fake, server, everything)
}

/// Reads until `approval_required` and returns it with everything before it.
pub async fn until_approval(stream: &mut SseReader) -> (Value, Vec<Value>) {
    let events = stream.until("approval_required").await;
    (events.last().unwrap().clone(), events)
}
