//! The gateway's client taking part in its own calls, through the real wire (rmcp's client,
//! `server-everything` over stdio as the upstream): an elicitation-capable client's user
//! approves, denies or declines an `ASK_USER` call in the form the gateway sends (recorded and
//! audited as that user's decision, through elicitation, from that client; a person deciding
//! in Switchboard first wins, and the open form is withdrawn); the upstream's
//! progress reaches the client under its own `progressToken`; the client's
//! `notifications/cancelled` ends the call at once, recorded as cancelled.

use super::wire::{echo, text_of};
use crate::support::approvals::*;
use reqwest::Method;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, Implementation,
    ProgressNotificationParam, ServerResult,
};
use rmcp::service::{
    NotificationContext, PeerRequestOptions, RequestContext, RoleClient, RunningService, ServiceExt,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_approvals::ApprovalConfig;

const CLIENT_NAME: &str = "eliciting-client";

/// A client whose user answers every approval form with `answer`, and which keeps what it
/// was asked and the progress it heard.
#[derive(Clone, Default)]
struct Answering {
    /// `approve` or `deny` (accepted), `decline`, `cancel`, or `wait` (until the gateway
    /// withdraws the form).
    answer: Arc<Mutex<&'static str>>,
    /// Set when a waiting form was withdrawn (`notifications/cancelled`).
    withdrawn: Arc<tokio::sync::Notify>,
    asked: Arc<Mutex<Vec<String>>>,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    elicitation: bool,
}

impl ClientHandler for Answering {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        let answer = *self.answer.lock().unwrap();
        Ok(match answer {
            "wait" => {
                context.ct.cancelled().await;
                self.withdrawn.notify_one();
                ElicitResult::new(ElicitationAction::Cancel)
            }
            "decline" => ElicitResult::new(ElicitationAction::Decline),
            "cancel" => ElicitResult::new(ElicitationAction::Cancel),
            choice => ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"decision": choice})),
        })
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.elicitation {
            capabilities.elicitation = Some(ElicitationCapability::new());
        }
        rmcp::model::ClientConfig::new(capabilities, Implementation::new(CLIENT_NAME, "1.0.0"))
    }
}

type Client = RunningService<RoleClient, Answering>;

async fn connect(server: &ApprovalServer, token: &str, handler: Answering) -> Client {
    let config = StreamableHttpClientTransportConfig::with_uri(server.url("/gateway/mcp"))
        .auth_header(token);
    handler
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("the gateway accepts the client")
}

fn long_operation(seconds: u64, steps: u64) -> CallToolRequestParams {
    let arguments = json!({"duration": seconds, "steps": steps});
    CallToolRequestParams::new("everything__trigger-long-running-operation")
        .with_arguments(arguments.as_object().unwrap().clone())
}

fn call(params: CallToolRequestParams) -> ClientRequest {
    ClientRequest::CallToolRequest(CallToolRequest::new(params))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eliciting_clients_user_approves_or_refuses_its_calls() {
    let (_fake, server, _) = start(ApprovalConfig::default()).await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use", "chat:use"])
        .await;
    let handler = Answering {
        elicitation: true,
        ..Answering::default()
    };
    let client = connect(&server, &carol.token, handler.clone()).await;

    // ASK_USER: the form names the server, the tool and the arguments; "approve" runs it.
    *handler.answer.lock().unwrap() = "approve";
    let result = client.call_tool(echo("asked")).await.unwrap();
    assert_eq!(text_of(&result), "Echo: asked");
    let asked = handler.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("\"echo\"") && asked[0].contains("\"everything\""));
    assert!(asked[0].contains("\"message\": \"asked\""), "{}", asked[0]);

    // "deny", declining and dismissing the form: refused with a tool error saying so.
    for (answer, says) in [
        ("deny", "denied this call in eliciting-client"),
        (
            "decline",
            "declined the approval request in eliciting-client",
        ),
        (
            "cancel",
            "dismissed the approval request in eliciting-client",
        ),
    ] {
        *handler.answer.lock().unwrap() = answer;
        let refused = client.call_tool(echo(answer)).await.unwrap();
        assert_eq!(refused.is_error, Some(true), "{answer}");
        assert!(text_of(&refused).contains(says), "{}", text_of(&refused));
    }

    // Recorded as Carol's decisions, through elicitation, from this client.
    let (status, listed) = server
        .send(&carol, Method::GET, "/chat/approvals?state=all", None)
        .await;
    assert_eq!(status, 200, "{listed}");
    let approvals = listed["approvals"].as_array().unwrap();
    assert_eq!(approvals.len(), 4, "{listed:#}");
    assert!(approvals.iter().all(|approval| {
        approval["decided_by"] == carol.id.as_str()
            && approval["reason"]
                .as_str()
                .is_some_and(|reason| reason.contains("eliciting-client through MCP elicitation"))
    }));
    let decisions = server.audit("action=approval.").await;
    let by_client: Vec<&Value> = decisions
        .iter()
        .filter(|entry| entry["details"]["via"] == "elicitation")
        .collect();
    assert_eq!(by_client.len(), 4, "{decisions:#?}");
    assert!(by_client.iter().all(|entry| {
        entry["details"]["client_name"] == CLIENT_NAME
            && entry["details"]["origin"] == "gateway"
            && entry["actor"] == carol.id.as_str()
    }));
    let approved = by_client
        .iter()
        .filter(|entry| entry["action"] == "approval.approved")
        .count();
    assert_eq!(approved, 1);

    // Whoever answers first decides: Carol approves in Switchboard while the form is open,
    // the call runs, and the client is told the form is withdrawn.
    *handler.answer.lock().unwrap() = "wait";
    let peer = client.peer().clone();
    let waiting = tokio::spawn(async move { peer.call_tool(echo("either way")).await });
    let asked = super::wire::pending_approval(&server, &carol).await;
    let (status, decided) = server
        .decide(&carol, &asked["approval_id"], "approve", "once")
        .await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(
        text_of(&waiting.await.unwrap().unwrap()),
        "Echo: either way"
    );
    tokio::time::timeout(Duration::from_secs(10), handler.withdrawn.notified())
        .await
        .expect("the open form is withdrawn");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_client_and_its_cancel_ends_the_call() {
    let (_fake, server, everything) = start(ApprovalConfig::default()).await;
    server
        .set_policy(
            &everything,
            "trigger-long-running-operation",
            "ALWAYS_ALLOW",
        )
        .await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use", "chat:use"])
        .await;
    let handler = Answering::default();
    let client = connect(&server, &carol.token, handler.clone()).await;

    // Progress: the upstream's four reports, under the token this client sent.
    let handle = client
        .send_request_with_option(call(long_operation(1, 4)), PeerRequestOptions::no_options())
        .await
        .unwrap();
    let token = handle.progress_token.clone();
    let ServerResult::CallToolResult(result) = handle.await_response().await.unwrap() else {
        panic!("a tool result");
    };
    assert!(
        text_of(&result).contains("Steps: 4"),
        "{}",
        text_of(&result)
    );
    let heard = handler.progress.lock().unwrap().clone();
    assert_eq!(heard.len(), 4, "{heard:?}");
    assert!(
        heard
            .iter()
            .all(|progress| progress.progress_token == token)
    );
    assert_eq!(heard[3].progress, 4.0);
    assert_eq!(heard[3].total, Some(4.0));

    // Cancel: a 30 s operation, cancelled by the client once running, ends at once.
    let handle = client
        .send_request_with_option(
            call(long_operation(30, 30)),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    handle
        .cancel(Some("changed my mind".to_owned()))
        .await
        .unwrap();
    let audited = wait_for_audit(&server, "action=tool_call.").await;
    let cancelled = audited
        .iter()
        .find(|entry| {
            entry["tool_name"] == "trigger-long-running-operation" && entry["status"] != "completed"
        })
        .expect("the cancelled call is audited");
    assert_eq!(cancelled["details"]["origin"], "gateway", "{cancelled:#}");
    let error = cancelled["details"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("cancelled"), "{cancelled:#}");
    assert!(
        cancelled["duration_ms"]
            .as_u64()
            .is_some_and(|ms| ms < 10_000),
        "ended at the cancel, not after its 30 s: {cancelled:#}"
    );

    // The session is still usable.
    server.set_policy(&everything, "echo", "ALWAYS_ALLOW").await;
    let again = client.call_tool(echo("still here")).await.unwrap();
    assert_eq!(text_of(&again), "Echo: still here");
    client.cancel().await.unwrap();
}

/// The audit entries matching `query` once the cancelled call is among them (well before its
/// 30 s would be up).
async fn wait_for_audit(server: &ApprovalServer, query: &str) -> Vec<Value> {
    for _ in 0..100 {
        let audited = server.audit(query).await;
        if audited.len() >= 2 {
            return audited;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the cancelled call was not audited within 10 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_elicitation_waits_for_switchboards_approval() {
    let (_fake, server, _) = start(ApprovalConfig::default()).await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use", "chat:use"])
        .await;
    let handler = Answering::default();
    let client = connect(&server, &carol.token, handler.clone()).await;
    let peer = client.peer().clone();
    let waiting = tokio::spawn(async move { peer.call_tool(echo("by a person")).await });
    let asked = super::wire::pending_approval(&server, &carol).await;
    server
        .decide(&carol, &asked["approval_id"], "approve", "once")
        .await;
    let result = waiting.await.unwrap().unwrap();
    assert_eq!(text_of(&result), "Echo: by a person");
    assert!(handler.asked.lock().unwrap().is_empty(), "no form was sent");
    client.cancel().await.unwrap();
}
