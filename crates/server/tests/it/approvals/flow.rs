//! The approval flow end to end over SSE: a real server and real HTTP clients, the scripted
//! fake OpenAI model asking for `server-everything` tools — approve once, deny, timeout,
//! parallel approvals in one turn, someone else deciding.

use crate::support::approvals::*;
use crate::support::sse::{answer_text, of_type};
use reqwest::Method;
use serde_json::json;
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::fake_openai::ScriptedReply;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_once_runs_the_call_and_the_answer_goes_on() {
    let (fake, server, _) = start(ApprovalConfig::default()).await;
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call("call_1", "hello")]));
    fake.enqueue(ScriptedReply::text(&["It said hello."]));
    let mut stream = server.ask(&server.alice, "echo hello").await;
    let (asked, before) = until_approval(&mut stream).await;
    assert!(
        tool_events(&before, "started").is_empty(),
        "nothing runs before the decision"
    );
    assert_eq!(asked["server"], "everything");
    assert_eq!(asked["tool"], "echo");
    assert_eq!(asked["arguments"], json!({"message": "hello"}));
    assert_eq!(asked["description"], "Echoes back the input string");
    assert!(asked["expires_at"].is_string());
    assert!(asked["diff"].is_null());

    // It is listed as pending for Alice (a reload finds it), not for Bob.
    let (_, pending) = server
        .send(&server.alice, Method::GET, "/chat/approvals", None)
        .await;
    assert_eq!(pending["approvals"][0]["approval_id"], asked["approval_id"]);
    let (_, bobs) = server
        .send(&server.bob, Method::GET, "/chat/approvals", None)
        .await;
    assert_eq!(bobs["approvals"], json!([]));

    let (status, decided) = server
        .decide(&server.alice, &asked["approval_id"], "approve", "once")
        .await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["decision"], "approved");
    let events = stream.until_done().await;
    let resolved = of_type(&events, "approval_resolved");
    assert_eq!(resolved[0]["decision"], "approved");
    assert_eq!(resolved[0]["decided_by"], server.alice.id.as_str());
    let completed = tool_events(&events, "completed");
    assert_eq!(completed[0]["result"]["content"][0]["text"], "Echo: hello");
    assert_eq!(answer_text(&events), "It said hello.");
    // Deciding again is a conflict.
    let (status, _) = server
        .decide(&server.alice, &asked["approval_id"], "deny", "once")
        .await;
    assert_eq!(status, 409);
    // The conversation's approval history shows it after a reload.
    let conversation = before[0]["conversation_id"].as_str().unwrap();
    let (_, history) = server
        .send(
            &server.alice,
            Method::GET,
            &format!("/chat/approvals?conversation_id={conversation}&state=all"),
            None,
        )
        .await;
    assert_eq!(history["approvals"][0]["status"], "approved");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_and_timeout_give_the_model_an_error_and_the_answer_continues() {
    let (fake, server, _) = start(ApprovalConfig {
        timeout_ms: Some(500),
        ..ApprovalConfig::default()
    })
    .await;
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call("call_deny", "no")]));
    fake.enqueue(ScriptedReply::text(&["You said no."]));
    let mut stream = server.ask(&server.alice, "echo no").await;
    let (asked, _) = until_approval(&mut stream).await;
    let (status, _) = server
        .decide(&server.alice, &asked["approval_id"], "deny", "once")
        .await;
    assert_eq!(status, 200);
    let events = stream.until_done().await;
    assert_eq!(
        of_type(&events, "approval_resolved")[0]["decision"],
        "denied"
    );
    let errors = tool_events(&events, "error");
    assert_eq!(errors[0]["error_code"], "denied");
    assert!(tool_events(&events, "started").is_empty());
    assert!(last_tool_messages(&fake)[0].contains("denied"));
    assert_eq!(answer_text(&events), "You said no.");
    assert_eq!(events.last().unwrap()["outcome"], "completed");

    // Nobody answers: expired after the configured 500 ms, denied, the answer goes on.
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call("call_late", "late")]));
    fake.enqueue(ScriptedReply::text(&["Nobody answered."]));
    let mut stream = server.ask(&server.alice, "echo late").await;
    let events = stream.until_done().await;
    assert_eq!(
        of_type(&events, "approval_resolved")[0]["decision"],
        "expired"
    );
    assert_eq!(
        of_type(&events, "approval_resolved")[0]["decided_by"],
        "timeout"
    );
    assert_eq!(tool_events(&events, "error")[0]["error_code"], "denied");
    assert!(last_tool_messages(&fake).last().unwrap().contains("within"));
    assert_eq!(answer_text(&events), "Nobody answered.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_approvals_in_one_turn_are_decided_separately() {
    let (fake, server, _) = start(ApprovalConfig::default()).await;
    fake.enqueue(ScriptedReply::tool_calls(&[
        echo_call("call_a", "first"),
        echo_call("call_b", "second"),
    ]));
    fake.enqueue(ScriptedReply::text(&["one of two"]));
    let mut stream = server.ask(&server.alice, "echo twice").await;
    let mut asked = Vec::new();
    while asked.len() < 2 {
        let event = stream.next_event().await.unwrap();
        if event["type"] == "approval_required" {
            asked.push(event);
        }
    }
    let by_call = |call: &str| {
        asked.iter().find(|event| event["call_id"] == call).unwrap()["approval_id"].clone()
    };
    server
        .decide(&server.alice, &by_call("call_b"), "deny", "once")
        .await;
    server
        .decide(&server.alice, &by_call("call_a"), "approve", "once")
        .await;
    let events = stream.until_done().await;
    let completed = tool_events(&events, "completed");
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0]["call_id"], "call_a");
    let errors = tool_events(&events, "error");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["call_id"], "call_b");
    assert_eq!(answer_text(&events), "one of two");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_user_deciding_gets_403_and_the_owner_still_can() {
    let (fake, server, _) = start(ApprovalConfig::default()).await;
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call("call_1", "mine")]));
    fake.enqueue(ScriptedReply::text(&["mine"]));
    let mut stream = server.ask(&server.alice, "echo mine").await;
    let (asked, _) = until_approval(&mut stream).await;
    let (status, body) = server
        .decide(&server.bob, &asked["approval_id"], "approve", "once")
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "forbidden");
    let (status, _) = server
        .send(
            &server.bob,
            Method::GET,
            &format!(
                "/chat/approvals?conversation_id={}",
                asked["details"]["conversation_id"].as_str().unwrap()
            ),
            None,
        )
        .await;
    assert_eq!(
        status, 404,
        "Bob does not learn Alice's conversation exists"
    );
    let (status, _) = server
        .decide(&server.alice, &asked["approval_id"], "approve", "once")
        .await;
    assert_eq!(status, 200);
    let events = stream.until_done().await;
    assert_eq!(tool_events(&events, "completed").len(), 1);
    // Unknown ids are 404; malformed decisions 422.
    let (status, _) = server
        .decide(&server.alice, &json!("no-such-approval"), "approve", "once")
        .await;
    assert_eq!(status, 404);
    let (status, _) = server
        .send(
            &server.alice,
            Method::POST,
            &format!("/chat/approvals/{}", asked["approval_id"].as_str().unwrap()),
            Some(json!({"decision": "maybe"})),
        )
        .await;
    assert_eq!(status, 422);
}
