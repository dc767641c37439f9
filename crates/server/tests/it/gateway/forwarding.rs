//! What an upstream asks or tells during a gateway client's call, passed on to that client
//! through the real wire: rmcp's Streamable HTTP client at `/gateway/mcp` (aggregated), the
//! `conformance-fixture` as a registered Streamable HTTP upstream: the upstream's log messages
//! reach the client under `fixture/<logger>`, filtered by the level it set with
//! `logging/setLevel` (which the upstream is also told).
//!
//! Not covered here yet: forwarded `elicitation/create` and `sampling/createMessage`. The
//! fixture negotiates 2026-07-28 with Switchboard, where a server may not send requests to the
//! client, so it cannot exercise them; an upstream pinned to 2025-11-25 is needed.

#![allow(deprecated)] // sampling and logging: deprecated by 2026-07-28, what this tests

use super::passthrough::fixture_server;
use crate::support::approvals::*;
use crate::support::chat::remote_server;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, Implementation,
    LoggingLevel, LoggingMessageNotificationParam, SamplingMessage, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::fake_openai::FakeOpenAi;

const CLIENT_NAME: &str = "forwarding-client";

/// A client that answers forms with `answer` and sampling with a fixed text, and keeps the
/// log messages it heard.
#[derive(Clone, Default)]
struct Answering {
    capable: bool,
    answer: Arc<Mutex<Value>>,
    forms: Arc<Mutex<Vec<String>>>,
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Answering {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.forms.lock().unwrap().push(message);
        }
        let content = self.answer.lock().unwrap().clone();
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(content))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text("the client's model says hi"),
            "client-model".to_owned(),
        ))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.capable {
            capabilities.elicitation = Some(ElicitationCapability::new());
            capabilities.sampling = Some(Default::default());
        }
        rmcp::model::ClientConfig::new(capabilities, Implementation::new(CLIENT_NAME, "1.0.0"))
    }
}

async fn connect(
    server: &ApprovalServer,
    token: &str,
    handler: Answering,
) -> RunningService<RoleClient, Answering> {
    let config = StreamableHttpClientTransportConfig::with_uri(server.url("/gateway/mcp"))
        .auth_header(token);
    handler
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("the gateway accepts the client")
}

fn tool(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(format!("fixture__{name}"))
        .with_arguments(arguments.as_object().unwrap().clone())
}

async fn text_of_call(
    client: &RunningService<RoleClient, Answering>,
    params: CallToolRequestParams,
) -> String {
    let result = client.call_tool(params).await.unwrap();
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_requests_and_logs_reach_the_client_whose_call_caused_them() {
    let (_fixture, fixture_url) = fixture_server().await;
    let fake = FakeOpenAi::start().await;
    let server = ApprovalServer::start(ApprovalConfig::default(), &fake.base_url()).await;
    let fixture = server
        .store
        .create_server(&server.workspace_id, remote_server("fixture", &fixture_url))
        .await
        .unwrap();
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    for name in [
        "test_elicitation",
        "test_sampling",
        "test_tool_with_logging",
    ] {
        server.set_policy(&fixture.id, name, "ALWAYS_ALLOW").await;
    }

    let capable = Answering {
        capable: true,
        ..Answering::default()
    };
    *capable.answer.lock().unwrap() = json!({"response": "from the gateway's client"});
    let client = connect(&server, &carol.token, capable.clone()).await;

    // Log messages of the call, named after their server on the aggregated endpoint.
    text_of_call(&client, tool("test_tool_with_logging", json!({}))).await;
    let heard = wait_for_logs(&capable, 3).await;
    assert!(
        heard
            .iter()
            .all(|log| log.logger.as_deref() == Some("fixture/conformance-fixture")),
        "{heard:?}"
    );
    // At `warning`, the fixture's `info` messages are no longer the client's.
    client
        .peer()
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    capable.logs.lock().unwrap().clear();
    text_of_call(&client, tool("test_tool_with_logging", json!({}))).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let heard: Vec<_> = capable.logs.lock().unwrap().clone();
    assert!(
        heard.iter().all(|log| log.level != LoggingLevel::Info),
        "{heard:?}"
    );
    client.cancel().await.unwrap();
}

async fn wait_for_logs(client: &Answering, count: usize) -> Vec<LoggingMessageNotificationParam> {
    for _ in 0..50 {
        let heard = client.logs.lock().unwrap().clone();
        if heard.len() >= count {
            return heard;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("heard {:?}", client.logs.lock().unwrap());
}
