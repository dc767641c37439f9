//! Small builders shared by the test modules.

use std::collections::BTreeMap;
use switchboard_core::{ScopeSet, TransportKind, WorkspaceId};
use switchboard_store::{
    ConversationRecord, NewServer, NewToken, ServerConnectionConfig, ServerRecord, ServerSecrets,
    Store, UserRecord, UserRole, WorkspaceRecord,
};

/// A workspace named `name` with one owner user.
pub async fn workspace_with_owner(store: &Store, name: &str) -> (WorkspaceRecord, UserRecord) {
    let workspace = store
        .create_workspace(name)
        .await
        .expect("create workspace");
    let owner = store
        .create_user(&workspace.id, "alice", UserRole::Owner)
        .await
        .expect("create user");
    (workspace, owner)
}

pub fn new_token(user: &UserRecord, scopes: &str) -> NewToken {
    NewToken {
        user_id: user.id.clone(),
        name: "test token".to_owned(),
        scopes: ScopeSet::parse_list(scopes).expect("scopes"),
        expires_at: None,
    }
}

pub fn stdio_server(name: &str) -> NewServer {
    NewServer {
        name: name.to_owned(),
        transport: TransportKind::Stdio,
        url: None,
        command: Some("npx".to_owned()),
        args: vec![
            "-y".to_owned(),
            "@modelcontextprotocol/server-everything".to_owned(),
        ],
        connection: ServerConnectionConfig::default(),
        secrets: ServerSecrets::default(),
        is_active: true,
    }
}

pub fn http_server_with_secrets(name: &str, api_key: &str, header_value: &str) -> NewServer {
    NewServer {
        connection: ServerConnectionConfig {
            timeout_ms: Some(5_000),
            ..ServerConnectionConfig::default()
        },
        secrets: ServerSecrets {
            headers: BTreeMap::from([("X-Upstream-Auth".to_owned(), header_value.to_owned())]),
            api_key: Some(api_key.to_owned()),
            env: BTreeMap::new(),
            oauth_client_secret: None,
        },
        ..NewServer::remote(
            name,
            TransportKind::StreamableHttp,
            "https://mcp.example.com/mcp",
        )
    }
}

pub fn tool(name: &str, description: &str) -> switchboard_core::ToolDefinition {
    switchboard_core::ToolDefinition {
        name: name.to_owned(),
        title: None,
        description: description.to_owned(),
        input_schema: serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        output_schema: None,
        annotations: None,
        meta: Default::default(),
    }
}

/// A conversation `owner` starts in `workspace_id` (titled "Planning", no bud).
pub async fn start_conversation(
    store: &Store,
    workspace_id: &WorkspaceId,
    owner: &UserRecord,
) -> ConversationRecord {
    store
        .create_conversation(workspace_id, new_conversation(owner))
        .await
        .expect("create conversation")
}

/// [`stdio_server`] `name`, registered in `workspace_id`.
pub async fn add_stdio_server(
    store: &Store,
    workspace_id: &WorkspaceId,
    name: &str,
) -> ServerRecord {
    store
        .create_server(workspace_id, stdio_server(name))
        .await
        .expect("create server")
}

pub fn new_conversation(owner: &UserRecord) -> switchboard_store::NewConversation {
    switchboard_store::NewConversation {
        owner_user_id: owner.id.clone(),
        bud_id: None,
        title: "Planning".to_owned(),
        mcp_config_overrides: None,
        model_choice: Default::default(),
    }
}

pub fn new_tool_call(
    conversation_id: &switchboard_core::ConversationId,
    server: Option<&switchboard_store::ServerRecord>,
    llm_call_id: &str,
) -> switchboard_store::NewToolCall {
    switchboard_store::NewToolCall {
        conversation_id: conversation_id.clone(),
        message_id: None,
        llm_call_id: llm_call_id.to_owned(),
        server_id: server.map(|server| server.id.clone()),
        server_name: server.map_or("unknown".to_owned(), |server| server.name.clone()),
        tool_name: "search".to_owned(),
        arguments: r#"{"q":"roadmap"}"#.to_owned(),
    }
}

/// A bud with only a name: no prompt, provider, model, servers or fallbacks.
pub fn plain_bud(name: &str) -> switchboard_store::NewBud {
    switchboard_store::NewBud {
        name: name.to_owned(),
        system_prompt: String::new(),
        provider: None,
        model: None,
        mcp_config: serde_json::json!({}),
        owner_user_id: None,
        fallbacks: Vec::new(),
    }
}
