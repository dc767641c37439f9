//! End-to-end tests of the knowledge-graph MCP endpoint: a real server on 127.0.0.1:0 driven by
//! the rmcp client and by raw HTTP (for the wire details clients hide).

mod conformance;
mod inspector;
mod plain_rpc;
mod protocol;
mod replicas;
mod rest_reads;
mod scopes_and_limits;
mod security;
mod sessions;
mod stateless;
mod subscriptions;
mod with_store;

use chrono::Utc;
use serde_json::{Value, json};
use std::sync::Arc;
use switchboard_core::{Principal, ScopeSet, TokenId, UserId, WorkspaceId};
use switchboard_mcp_server::{KgConfig, KgEndpoint, KnowledgeGraphs, StaticTokens, WorkspaceGraph};
use tokio_util::sync::CancellationToken;

pub const DEFAULT_WORKSPACE: &str = "ws-default";
pub const OTHER_WORKSPACE: &str = "ws-other";
/// Tokens of the test server and their scopes.
pub const SCHEMA_READER: &str = "token-schema-reader";
pub const DATA_READER: &str = "token-data-reader";
pub const WRITER: &str = "token-writer";
pub const CHAT_ONLY: &str = "token-chat-only";
pub const OTHER_WORKSPACE_ADMIN: &str = "token-other-admin";

fn principal(workspace: &str, token: &str, scopes: &str) -> Principal {
    Principal {
        workspace_id: WorkspaceId::from_string(workspace),
        user_id: UserId::from_string(format!("user-{token}")),
        token_id: Some(TokenId::from_string(token)),
        scopes: ScopeSet::parse_list(scopes).unwrap(),
    }
}

#[derive(Debug)]
pub struct TestServer {
    pub base: String,
    pub graphs: KnowledgeGraphs,
    pub http: reqwest::Client,
    shutdown: CancellationToken,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with(KgConfig::default()).await
    }

    pub async fn start_with(config: KgConfig) -> Self {
        let tokens = StaticTokens::new()
            .with(
                SCHEMA_READER,
                principal(DEFAULT_WORKSPACE, SCHEMA_READER, "schema:read"),
            )
            .with(
                DATA_READER,
                principal(DEFAULT_WORKSPACE, DATA_READER, "schema:read data:read"),
            )
            .with(
                WRITER,
                principal(
                    DEFAULT_WORKSPACE,
                    WRITER,
                    "schema:read data:read data:write",
                ),
            )
            .with(
                CHAT_ONLY,
                principal(DEFAULT_WORKSPACE, CHAT_ONLY, "chat:use"),
            )
            .with(
                OTHER_WORKSPACE_ADMIN,
                principal(OTHER_WORKSPACE, OTHER_WORKSPACE_ADMIN, "admin"),
            );
        let graphs = KnowledgeGraphs::in_memory();
        graphs
            .load_sample_if_empty(&WorkspaceId::from_string(DEFAULT_WORKSPACE), Utc::now())
            .await
            .unwrap();
        let shutdown = CancellationToken::new();
        let endpoint = KgEndpoint::new(
            &config,
            Arc::new(tokens),
            graphs.clone(),
            Some(WorkspaceId::from_string(DEFAULT_WORKSPACE)),
            shutdown.clone(),
        )
        .unwrap();
        let router: axum::Router = endpoint.into_router();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            // With the peer's address, as Switchboard's own accept loop gives it (anonymous
            // sessions are capped per address).
            axum::serve(
                listener,
                router.into_make_service_with_connect_info::<std::net::SocketAddr>(),
            )
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
            .unwrap();
        });
        Self {
            base: format!("http://{address}"),
            graphs,
            http: switchboard_test_support::http_client::http_client(),
            shutdown,
        }
    }

    pub fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// POSTs one JSON-RPC message with the usual headers plus `extra`.
    pub async fn post(
        &self,
        token: Option<&str>,
        body: &Value,
        extra: &[(&str, &str)],
    ) -> reqwest::Response {
        self.post_raw(token, &body.to_string(), extra).await
    }

    pub async fn post_raw(
        &self,
        token: Option<&str>,
        body: &str,
        extra: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut request = self
            .http
            .post(self.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_owned());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }

    /// The graph of `DEFAULT_WORKSPACE`, to change it behind the endpoint's back.
    pub async fn default_graph(&self) -> Arc<WorkspaceGraph> {
        self.graphs
            .workspace(&DEFAULT_WORKSPACE.into())
            .await
            .unwrap()
    }

    /// Ends `session` with `DELETE /mcp` as `token`.
    pub async fn delete_session(&self, token: &str, session: &str) -> reqwest::Response {
        self.http
            .delete(self.url())
            .bearer_auth(token)
            .header("mcp-session-id", session)
            .send()
            .await
            .unwrap()
    }

    /// Opens a 2025-11-25 session for `token`; returns its id.
    pub async fn initialize(&self, token: Option<&str>) -> String {
        let response = self
            .post(token, &initialize_request("2025-11-25"), &[])
            .await;
        assert_eq!(response.status(), 200, "initialize failed");
        let session = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let answer = answer_of(response).await;
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = self
            .post(token, &initialized, &[("mcp-session-id", &session)])
            .await;
        assert_eq!(response.status(), 202);
        session
    }

    /// Calls a tool in `session` and returns the JSON-RPC answer (result or error).
    pub async fn call_tool(
        &self,
        token: Option<&str>,
        session: &str,
        name: &str,
        arguments: Value,
    ) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
        let response = self
            .post(
                token,
                &request,
                &[
                    ("mcp-session-id", session),
                    ("mcp-protocol-version", "2025-11-25"),
                ],
            )
            .await;
        assert_eq!(response.status(), 200);
        answer_of(response).await
    }
}

pub fn initialize_request(version: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "switchboard-tests", "version": "1"}}
    })
}

/// The JSON-RPC answer in a response, whether sent as JSON or as an SSE stream.
pub async fn answer_of(response: reqwest::Response) -> Value {
    let is_sse = response
        .headers()
        .get("content-type")
        .is_some_and(|value| value.to_str().unwrap().starts_with("text/event-stream"));
    let text = response.text().await.unwrap();
    if !is_sse {
        return serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|message| message.get("result").is_some() || message.get("error").is_some())
        .unwrap_or_else(|| panic!("no answer in stream: {text}"))
}

/// The structured content of a successful tool answer.
pub fn structured(answer: &Value) -> &Value {
    assert!(answer.get("error").is_none(), "unexpected error: {answer}");
    assert_ne!(answer["result"]["isError"], true, "tool error: {answer}");
    &answer["result"]["structuredContent"]
}
