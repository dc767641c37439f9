//! Approvals between users an operator added over the API (`POST /api/users`, then a token
//! each with `POST /api/tokens {user_id}`): another member can neither decide nor read a
//! member's approval and conversation; an admin user can decide it.

use crate::support::approvals::*;
use crate::support::sse::{answer_text, of_type};
use reqwest::Method;
use serde_json::json;
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::fake_openai::ScriptedReply;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_cannot_decide_or_read_another_members_approval_and_an_admin_can_decide_it() {
    let (fake, server, _) = start(ApprovalConfig::default()).await;
    let dana = server.person_via_api("dana", "member", &["chat:use"]).await;
    let erin = server.person_via_api("erin", "member", &["chat:use"]).await;
    let carol = server.person_via_api("carol", "admin", &["admin"]).await;

    fake.enqueue(ScriptedReply::tool_calls(&[echo_call("call_1", "dana's")]));
    fake.enqueue(ScriptedReply::text(&["Done for Dana."]));
    let mut stream = server.ask(&dana, "echo dana's").await;
    let (asked, before) = until_approval(&mut stream).await;
    let approval_id = asked["approval_id"].clone();
    let conversation = before[0]["conversation_id"].as_str().unwrap().to_owned();
    assert_eq!(asked["details"]["conversation_id"], conversation.as_str());

    // Erin, with a valid chat:use token of the same workspace, may not decide it…
    for decision in ["approve", "deny"] {
        let (status, body) = server.decide(&erin, &approval_id, decision, "once").await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(body["error"]["code"], "forbidden");
        assert_eq!(
            body["error"]["message"],
            "only the conversation's owner or an admin may decide this approval request"
        );
    }
    // …nor see it or the conversation it belongs to.
    let (status, pending) = server
        .send(&erin, Method::GET, "/chat/approvals", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(pending["approvals"], json!([]));
    let (status, _) = server
        .send(
            &erin,
            Method::GET,
            &format!("/chat/approvals?conversation_id={conversation}"),
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (status, body) = server
        .send(
            &erin,
            Method::GET,
            &format!("/chat/conversations/{conversation}"),
            None,
        )
        .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "not_found");
    let (status, listed) = server
        .send(&erin, Method::GET, "/chat/conversations", None)
        .await;
    assert_eq!(status, 200);
    assert!(!listed.to_string().contains(&conversation), "{listed}");
    // Her refusals left the request pending for Dana.
    let (_, dana_pending) = server
        .send(&dana, Method::GET, "/chat/approvals", None)
        .await;
    assert_eq!(dana_pending["approvals"][0]["approval_id"], approval_id);
    let (status, _) = server
        .send(
            &dana,
            Method::GET,
            &format!("/chat/conversations/{conversation}"),
            None,
        )
        .await;
    assert_eq!(status, 200);

    // Carol, an admin user, decides it; the answer goes on and says who decided.
    let (status, decided) = server.decide(&carol, &approval_id, "approve", "once").await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["decision"], "approved");
    let events = stream.until_done().await;
    let resolved = of_type(&events, "approval_resolved");
    assert_eq!(resolved[0]["decision"], "approved");
    assert_eq!(resolved[0]["decided_by"], carol.id.as_str());
    let completed = tool_events(&events, "completed");
    assert_eq!(completed[0]["result"]["content"][0]["text"], "Echo: dana's");
    assert_eq!(answer_text(&events), "Done for Dana.");
    // Once decided, nobody decides again — not even the owner.
    let (status, _) = server.decide(&dana, &approval_id, "deny", "once").await;
    assert_eq!(status, 409);
}
