//! What an upstream asks or tells during a gateway client's call, passed on to that client
//! through the real wire: rmcp's Streamable HTTP client at `/gateway/mcp` (aggregated), the
//! `conformance-fixture` as a registered Streamable HTTP upstream: the upstream's log messages
//! reach the client under `fixture/<logger>`, filtered by the level it set with
//! `logging/setLevel` (which the upstream is also told).
//!
//! `logging/setLevel` (which the upstream is also told). The fixture negotiates 2026-07-28 with
//! Switchboard, so what it needs from the client mid-call comes as `input_required` rounds
//! (SEP-2322); the gateway's client, at 2025-11-25, is asked with `elicitation/create` and
//! `sampling/createMessage` requests of its own, and the call goes on with its answers.

#![allow(deprecated)] // sampling and logging: deprecated by 2026-07-28, what this tests

use super::passthrough::FixtureBehindGateway;
use crate::support::approvals::*;
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

const CLIENT_NAME: &str = "forwarding-client";

/// A client that fills in every field of a form ("Ada", `true`, 7) and answers sampling with
/// a fixed text, and keeps the forms it was shown and the log messages it heard.
#[derive(Clone, Default)]
struct Answering {
    capable: bool,
    forms: Arc<Mutex<Vec<String>>>,
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Answering {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let wire = serde_json::to_value(&request).unwrap();
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.forms.lock().unwrap().push(message);
        }
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(filled_in(&wire)))
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

/// Every field of the form's `requestedSchema`, filled in.
fn filled_in(form: &Value) -> Value {
    let mut content = serde_json::Map::new();
    let properties = form["requestedSchema"]["properties"].as_object();
    for (name, property) in properties.into_iter().flatten() {
        let value = match property["type"].as_str() {
            Some("boolean") => json!(true),
            Some("number" | "integer") => json!(7),
            _ => json!("Ada"),
        };
        content.insert(name.clone(), value);
    }
    Value::Object(content)
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
    let stack = FixtureBehindGateway::start("carol").await;
    let (server, fixture_id, carol) = (&stack.server, &stack.fixture_id, &stack.member);
    for name in [
        "test_elicitation",
        "test_sampling",
        "test_tool_with_logging",
    ] {
        server.set_policy(fixture_id, name, "ALWAYS_ALLOW").await;
    }

    let capable = Answering {
        capable: true,
        ..Answering::default()
    };
    let client = connect(server, &carol.token, capable.clone()).await;

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

/// What the fixture asks for in `input_required` rounds reaches the gateway's client as its
/// own requests, whose answers go back upstream: one form, sampling, several inputs at once,
/// several rounds, and sealed state that must come back intact. A client that declared
/// neither gets a clear failure for sampling, not a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_an_upstream_asks_for_is_given_by_the_client_whose_call_asked() {
    let stack = FixtureBehindGateway::start("dave").await;
    let (server, fixture_id, dave) = (&stack.server, &stack.fixture_id, &stack.member);
    let asked = [
        (
            "test_elicitation",
            json!({"message": "Your name?"}),
            "User response: action=accept, content={\"response\":\"Ada\"}",
        ),
        (
            "test_sampling",
            json!({"prompt": "Say hi"}),
            "LLM response: the client's model says hi",
        ),
        (
            "test_input_required_result_elicitation",
            json!({}),
            "Hello, Ada!",
        ),
        (
            "test_input_required_result_multiple_inputs",
            json!({}),
            "Name: Ada; Greeting: the client's model says hi; Roots: 0",
        ),
        (
            "test_input_required_result_multi_round",
            json!({}),
            "Multi-round complete for Ada who likes Ada",
        ),
        (
            "test_input_required_result_tampered_state",
            json!({}),
            "integrity-ok: state verified",
        ),
    ];
    for (name, _, _) in &asked {
        server.set_policy(fixture_id, name, "ALWAYS_ALLOW").await;
    }
    let capable = Answering {
        capable: true,
        ..Answering::default()
    };
    let client = connect(server, &dave.token, capable.clone()).await;
    for (name, arguments, expected) in asked {
        let text = text_of_call(&client, tool(name, arguments)).await;
        assert_eq!(text, expected, "{name}");
    }
    let forms = capable.forms.lock().unwrap().clone();
    assert_eq!(
        forms,
        [
            "Your name?",
            "What is your name?",
            "What is your name?",
            "Step 1: What is your name?",
            "Step 2: What is your favorite color?",
            "Please confirm",
        ],
        "each form once, in the order asked"
    );
    client.cancel().await.unwrap();

    let incapable = connect(server, &dave.token, Answering::default()).await;
    let refused = incapable
        .call_tool(tool("test_sampling", json!({"prompt": "Say hi"})))
        .await;
    let message = match refused {
        Ok(result) => {
            assert_eq!(result.is_error, Some(true), "{result:?}");
            serde_json::to_string(&result.content).unwrap()
        }
        Err(error) => error.to_string(),
    };
    assert!(
        message.contains("sampling/createMessage"),
        "names what could not be answered: {message}"
    );
    incapable.cancel().await.unwrap();
}
