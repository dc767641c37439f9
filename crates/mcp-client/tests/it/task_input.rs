//! A tool call that became a task and asks its client something on the way (SEP-2663: status
//! `input_required` with the questions in `inputRequests`, answered with `tasks/update`),
//! against rmcp's own `TaskManager` (test-support's task server, its `asking_report` tool): the
//! question goes to the same person a call's own form would, once, and the task completes
//! with the answer.

use crate::support::{caller, context, quick_config, remote_server};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use switchboard_core::TransportKind;
use switchboard_mcp_client::{
    ElicitationRequest, ElicitationResponder, ElicitationResponse, McpClient,
};
use switchboard_test_support::task_server::TaskServer;

/// Fills in every form with `answer`, keeping the messages it was shown.
#[derive(Debug)]
struct Person {
    answer: Value,
    asked: Mutex<Vec<String>>,
}

impl ElicitationResponder for Person {
    fn respond(
        &self,
        request: ElicitationRequest,
    ) -> futures::future::BoxFuture<'static, ElicitationResponse> {
        self.asked.lock().unwrap().push(request.message);
        Box::pin(std::future::ready(ElicitationResponse::Accept(
            self.answer.clone(),
        )))
    }
}

async fn call_asking_report(client: &McpClient, fixture: &TaskServer) -> String {
    let server = remote_server("tasks", TransportKind::StreamableHttp, &fixture.url());
    let snapshot = client
        .fetch_capabilities(&server, &caller("ada"))
        .await
        .unwrap();
    let tool = snapshot
        .tools
        .iter()
        .find(|tool| tool.name == "asking_report")
        .expect("the asking_report tool");
    let result = client
        .call_tool(&server, tool, json!({}), &context("ada"))
        .await
        .unwrap();
    assert!(!result.is_error, "{}", result.text_for_model());
    result.text_for_model()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_asks_for_input_gets_it_once_and_completes() {
    let fixture = TaskServer::start().await;
    let person = Arc::new(Person {
        answer: json!({"topic": "tides"}),
        asked: Mutex::default(),
    });
    let client = McpClient::builder(quick_config())
        .elicitation(person.clone())
        .build()
        .unwrap();
    assert_eq!(
        call_asking_report(&client, &fixture).await,
        "report ready: tides"
    );
    assert_eq!(
        *person.asked.lock().unwrap(),
        ["Which topic?"],
        "asked once, though the task stays input_required over several polls"
    );
    assert_eq!(fixture.log.finished(), 1);
    assert!(fixture.log.cancelled().is_empty());
    client.shutdown().await;

    // Without anyone to ask, the form is declined, and the task goes on with what it has.
    let alone = McpClient::new(quick_config()).unwrap();
    assert_eq!(
        call_asking_report(&alone, &fixture).await,
        "report ready: nothing"
    );
    alone.shutdown().await;
}
