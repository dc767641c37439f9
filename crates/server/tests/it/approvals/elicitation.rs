//! Elicitation end to end: `server-everything` asks for a form during a call; the owner
//! answers over the API (checked against the schema, defaults applied).

use crate::support::approvals::*;
use crate::support::sse::{answer_text, of_type};
use reqwest::Method;
use serde_json::json;
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::fake_openai::{ScriptedReply, ScriptedToolCall};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_form_is_answered_over_the_api_with_defaults_applied() {
    let (fake, server, everything) = start(ApprovalConfig::default()).await;
    // Sync first (the elicitation tool exists only for clients that can answer forms).
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call("call_0", "sync")]));
    fake.enqueue(ScriptedReply::text(&["ok"]));
    let mut stream = server.ask(&server.alice, "first").await;
    let (asked, _) = until_approval(&mut stream).await;
    server
        .decide(&server.alice, &asked["approval_id"], "deny", "once")
        .await;
    stream.until_done().await;
    server
        .set_policy(&everything, "trigger-elicitation-request", "ALWAYS_ALLOW")
        .await;

    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_form",
        "everything__trigger-elicitation-request",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["thanks for the form"]));
    let mut stream = server.ask(&server.alice, "ask me things").await;
    let events = stream.until("elicitation_required").await;
    let form = events.last().unwrap().clone();
    assert_eq!(form["server"], "everything");
    assert!(form["requested_schema"]["properties"]["name"].is_object());
    let path = format!(
        "/chat/elicitations/{}",
        form["elicitation_id"].as_str().unwrap()
    );
    let (status, _) = server
        .send(
            &server.bob,
            Method::POST,
            &path,
            Some(json!({"action": "decline"})),
        )
        .await;
    assert_eq!(status, 403);
    let (status, body) = server
        .send(
            &server.alice,
            Method::POST,
            &path,
            Some(json!({"action": "accept", "content": {"name": 42}})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    // Formats the form asks for are checked too; every problem is named, no value echoed.
    let (status, body) = server
        .send(
            &server.alice,
            Method::POST,
            &path,
            Some(json!({"action": "accept", "content": {
                "name": "Ada", "email": "not-an-email", "birthdate": "yesterday"
            }})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("email"), "{message}");
    assert!(message.contains("birthdate"), "{message}");
    assert!(!message.contains("not-an-email"), "{message}");
    let (status, body) = server
        .send(
            &server.alice,
            Method::POST,
            &path,
            Some(json!({"action": "accept", "content": {"name": "Ada Lovelace", "check": true}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let events = stream.until_done().await;
    let resolved = of_type(&events, "elicitation_resolved");
    assert_eq!(resolved[0]["action"], "accept");
    assert_eq!(resolved[0]["expired"], false);
    let completed = tool_events(&events, "completed");
    let result = serde_json::to_string(&completed[0]["result"]).unwrap();
    assert!(result.contains("Ada Lovelace"), "{result}");
    // The schema's default reached the server.
    assert!(
        result.contains("It was a dark and stormy night."),
        "{result}"
    );
    assert_eq!(answer_text(&events), "thanks for the form");
}
