//! A workspace on a fresh SQLite store with two users, a registered server with tools and a
//! conversation per user; gate requests built as the chat engine builds them; an event sink
//! that records what the gate emitted.

use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_approvals::{ApprovalConfig, Approvals};
use switchboard_chat::{ChatEvent, EventSink, GateRequest, GateTarget};
use switchboard_core::{
    ConversationId, Principal, ScopeSet, ServerId, ToolCallId, ToolDefinition, UserId,
};
use switchboard_store::{
    DatabaseConfig, NewConversation, NewServer, SecretCipher, ServerRecord, Store, UserRole,
    WorkspaceRecord,
};
use tokio_util::sync::CancellationToken;

pub struct World {
    pub store: Store,
    pub approvals: Approvals,
    pub workspace: WorkspaceRecord,
    pub alice: Principal,
    pub bob: Principal,
    pub admin: Principal,
    pub server: ServerRecord,
    pub alices_conversation: ConversationId,
    pub bobs_conversation: ConversationId,
    _dir: tempfile::TempDir,
}

pub fn tool(name: &str, description: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        title: None,
        description: description.to_owned(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        output_schema: None,
        annotations: None,
        meta: Default::default(),
    }
}

pub fn principal(workspace: &WorkspaceRecord, user: &UserId, scopes: &str) -> Principal {
    Principal {
        workspace_id: workspace.id.clone(),
        user_id: user.clone(),
        token_id: None,
        scopes: ScopeSet::parse_list(scopes).unwrap(),
    }
}

impl World {
    pub async fn new(config: ApprovalConfig) -> World {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(
            &DatabaseConfig::default(),
            dir.path(),
            SecretCipher::generate(),
        )
        .await
        .unwrap();
        let workspace = store.create_workspace("acme").await.unwrap();
        let alice = store
            .create_user(&workspace.id, "alice", UserRole::Member)
            .await
            .unwrap();
        let bob = store
            .create_user(&workspace.id, "bob", UserRole::Member)
            .await
            .unwrap();
        let root = store
            .create_user(&workspace.id, "root", UserRole::Owner)
            .await
            .unwrap();
        let server = store
            .create_server(
                &workspace.id,
                NewServer::remote(
                    "files",
                    switchboard_core::TransportKind::StreamableHttp,
                    "http://127.0.0.1:9/mcp",
                ),
            )
            .await
            .unwrap();
        let conversation = |owner: &UserId| NewConversation {
            owner_user_id: owner.clone(),
            bud_id: None,
            title: "t".into(),
            mcp_config_overrides: None,
            model_choice: Default::default(),
        };
        let alices_conversation = store
            .create_conversation(&workspace.id, conversation(&alice.id))
            .await
            .unwrap()
            .id;
        let bobs_conversation = store
            .create_conversation(&workspace.id, conversation(&bob.id))
            .await
            .unwrap()
            .id;
        let approvals = Approvals::new(store.clone(), config).unwrap();
        World {
            alice: principal(&workspace, &alice.id, "chat:use"),
            bob: principal(&workspace, &bob.id, "chat:use"),
            admin: principal(&workspace, &root.id, "admin"),
            store,
            approvals,
            workspace,
            server,
            alices_conversation,
            bobs_conversation,
            _dir: dir,
        }
    }

    /// Syncs the server's tools (and instructions) as the MCP client would.
    pub async fn sync(&self, tools: &[ToolDefinition], instructions: Option<&str>) {
        self.store
            .replace_server_tools(&self.workspace.id, &self.server.id, tools)
            .await
            .unwrap();
        self.approvals
            .observe_server_sync(&self.workspace.id, &self.server.id, instructions, tools)
            .await
            .unwrap();
    }

    pub fn server_id(&self) -> ServerId {
        self.server.id.clone()
    }

    /// A call of `tool` by `who` in `conversation`, as the chat engine proposes it.
    pub async fn request(
        &self,
        who: &Principal,
        conversation: &ConversationId,
        tool: &ToolDefinition,
        arguments: Value,
    ) -> GateRequest {
        let owner = self
            .store
            .get_conversation(&self.workspace.id, conversation)
            .await
            .unwrap()
            .owner_user_id;
        let record = self
            .store
            .create_tool_call(
                &self.workspace.id,
                switchboard_store::NewToolCall {
                    conversation_id: conversation.clone(),
                    message_id: None,
                    llm_call_id: format!("call_{}", ToolCallId::generate()),
                    server_id: Some(self.server.id.clone()),
                    server_name: self.server.name.clone(),
                    tool_name: tool.name.clone(),
                    arguments: arguments.to_string(),
                },
            )
            .await
            .unwrap();
        GateRequest {
            principal: who.clone(),
            conversation_id: conversation.clone(),
            conversation_owner: owner,
            tool_call_id: record.id,
            llm_call_id: record.llm_call_id,
            target: GateTarget::Registered {
                server_id: self.server.id.clone(),
                server_name: self.server.name.clone(),
            },
            tool: tool.clone(),
            arguments,
            cancellation: CancellationToken::new(),
            origin: switchboard_chat::CallOrigin::Chat,
            client_approver: None,
        }
    }
}

/// Records the events a gate emits.
#[derive(Clone, Default)]
pub struct Recorder {
    pub events: Arc<Mutex<Vec<ChatEvent>>>,
}

impl Recorder {
    pub fn sink(&self) -> EventSink {
        let events = self.events.clone();
        EventSink::new(move |event| events.lock().unwrap().push(event))
    }

    pub fn all(&self) -> Vec<ChatEvent> {
        self.events.lock().unwrap().clone()
    }

    /// Waits until an `approval_required` event appears and returns it.
    pub async fn approval_required(&self) -> switchboard_chat::ApprovalRequiredEvent {
        for _ in 0..500 {
            if let Some(event) = self.all().into_iter().find_map(|event| match event {
                ChatEvent::ApprovalRequired(required) => Some(required),
                _ => None,
            }) {
                return event;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no approval_required event: {:?}", self.all());
    }

    pub fn resolved(&self) -> Vec<switchboard_chat::ApprovalResolvedEvent> {
        self.all()
            .into_iter()
            .filter_map(|event| match event {
                ChatEvent::ApprovalResolved(resolved) => Some(resolved),
                _ => None,
            })
            .collect()
    }
}
