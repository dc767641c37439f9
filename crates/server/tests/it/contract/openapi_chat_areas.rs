//! The chat-side areas — policies, buds, approvals, elicitations — driven through the real
//! server (a real approval and a real form from `server-everything`) answer what the OpenAPI
//! spec says: a listed status and a body matching the declared schema ([`Contract`]).

use super::openapi_contract::{Contract, same, server};
use crate::support::approvals::{echo_call, start, until_approval};
use reqwest::Method;
use serde_json::json;
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::fake_openai::{ScriptedReply, ScriptedToolCall};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_policies() {
    let (server, everything, contract) = server().await;
    let (admin, alice) = (&server.admin, &server.alice);
    let template = "/api/mcp/servers/{id}/tools/{name}/policy";
    let path = format!("/api/mcp/servers/{everything}/tools/echo/policy");
    let policy = (template, path.as_str());
    let allow = json!({"policy": "ALWAYS_ALLOW"});
    let set = contract
        .expect(
            &server,
            admin,
            Method::PUT,
            policy,
            Some(allow.clone()),
            200,
        )
        .await;
    assert_eq!(set["source"], "explicit");
    contract
        .expect(&server, admin, Method::GET, policy, None, 200)
        .await;
    let unknown = json!({"policy": "SOMETIMES"});
    contract
        .expect(&server, admin, Method::PUT, policy, Some(unknown), 422)
        .await;
    contract
        .expect(&server, alice, Method::PUT, policy, Some(allow), 403)
        .await;
    let listed = contract
        .expect(
            &server,
            admin,
            Method::GET,
            same("/api/mcp/policies"),
            None,
            200,
        )
        .await;
    assert_eq!(listed["policies"].as_array().unwrap().len(), 1);
    let reset = contract
        .expect(&server, admin, Method::DELETE, policy, None, 200)
        .await;
    assert_eq!(reset["source"], "default");
    let foreign = (template, "/api/mcp/servers/srv_missing/tools/echo/policy");
    contract
        .expect(&server, admin, Method::GET, foreign, None, 404)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buds_and_their_policies() {
    let (server, everything, contract) = server().await;
    let (admin, alice) = (&server.admin, &server.alice);
    let buds = same("/api/buds");
    let create = json!({"name": "helper", "system_prompt": "Be brief.",
        "mcp_config": {"servers": ["everything"]}});
    let bud = contract
        .expect(&server, alice, Method::POST, buds, Some(create), 201)
        .await;
    let bare = Some(json!({"name": "bare"}));
    contract
        .expect(&server, alice, Method::POST, buds, bare, 201)
        .await;
    let refused = json!({"name": "b", "mcp_config": {"servers": ["nope"]}});
    contract
        .expect(&server, alice, Method::POST, buds, Some(refused), 422)
        .await;
    let listed = contract
        .expect(&server, alice, Method::GET, buds, None, 200)
        .await;
    assert_eq!(listed["buds"].as_array().unwrap().len(), 2);
    let bud_id = bud["id"].as_str().unwrap();
    let path = format!("/api/buds/{bud_id}");
    let one = ("/api/buds/{bud_id}", path.as_str());
    contract
        .expect(&server, alice, Method::GET, one, None, 200)
        .await;
    let patch = json!({"model": "other-model", "provider": null});
    let patched = contract
        .expect(&server, alice, Method::PATCH, one, Some(patch.clone()), 200)
        .await;
    assert_eq!(patched["model"], "other-model");
    contract
        .expect(&server, &server.bob, Method::PATCH, one, Some(patch), 403)
        .await;

    let path = format!("/api/buds/{bud_id}/policies");
    let listing = ("/api/buds/{bud_id}/policies", path.as_str());
    let path = format!("/api/buds/{bud_id}/policies/{everything}/echo");
    let rule = (
        "/api/buds/{bud_id}/policies/{server_id}/{tool_name}",
        path.as_str(),
    );
    let allow = json!({"policy": "ALWAYS_ALLOW"});
    contract
        .expect(&server, admin, Method::PUT, rule, Some(allow), 200)
        .await;
    let listed = contract
        .expect(&server, admin, Method::GET, listing, None, 200)
        .await;
    assert_eq!(listed["policies"].as_array().unwrap().len(), 1);
    contract
        .expect(&server, admin, Method::DELETE, rule, None, 204)
        .await;
    contract
        .expect(&server, alice, Method::DELETE, one, None, 204)
        .await;
    contract
        .expect(&server, alice, Method::GET, one, None, 404)
        .await;
    let audited = contract
        .expect(
            &server,
            admin,
            Method::GET,
            ("/api/audit", "/api/audit?action=bud."),
            None,
            200,
        )
        .await;
    assert_eq!(audited["entries"].as_array().unwrap().len(), 4, "{audited}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_and_elicitations() {
    let (fake, server, _) = start(ApprovalConfig::default()).await;
    let contract = Contract::new();
    let (alice, bob) = (&server.alice, &server.bob);
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call("call_1", "hello")]));
    fake.enqueue(ScriptedReply::text(&["It said hello."]));
    let mut stream = server.ask(alice, "echo hello").await;
    let (asked, before) = until_approval(&mut stream).await;
    let approvals = same("/chat/approvals");
    let pending = contract
        .expect(&server, alice, Method::GET, approvals, None, 200)
        .await;
    assert_eq!(pending["approvals"][0]["approval_id"], asked["approval_id"]);
    let everyone = ("/chat/approvals", "/chat/approvals?all_users=true");
    contract
        .expect(&server, alice, Method::GET, everyone, None, 403)
        .await;
    let path = format!("/chat/approvals/{}", asked["approval_id"].as_str().unwrap());
    let decide = ("/chat/approvals/{approval_id}", path.as_str());
    let approve = json!({"decision": "approve", "remember": "once"});
    contract
        .expect(
            &server,
            bob,
            Method::POST,
            decide,
            Some(approve.clone()),
            403,
        )
        .await;
    let decided = contract
        .expect(
            &server,
            alice,
            Method::POST,
            decide,
            Some(approve.clone()),
            200,
        )
        .await;
    assert_eq!(decided["decision"], "approved");
    stream.until_done().await;
    contract
        .expect(&server, alice, Method::POST, decide, Some(approve), 409)
        .await;
    let maybe = json!({"decision": "maybe"});
    contract
        .expect(&server, alice, Method::POST, decide, Some(maybe), 422)
        .await;
    let conversation = before[0]["conversation_id"].as_str().unwrap();
    let path = format!("/chat/approvals?conversation_id={conversation}&state=all");
    let history = contract
        .expect(
            &server,
            alice,
            Method::GET,
            ("/chat/approvals", &path),
            None,
            200,
        )
        .await;
    assert_eq!(history["approvals"][0]["status"], "approved");
    let unknown = (
        "/chat/approvals/{approval_id}",
        "/chat/approvals/apr_missing",
    );
    let deny = json!({"decision": "deny"});
    contract
        .expect(&server, alice, Method::POST, unknown, Some(deny), 404)
        .await;

    let audit = ("/api/audit", "/api/audit?action=approval.");
    let audited = contract
        .expect(&server, &server.admin, Method::GET, audit, None, 200)
        .await;
    assert_eq!(audited["entries"][0]["decision"], "approved", "{audited}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitations() {
    let (fake, server, everything) = start(ApprovalConfig::default()).await;
    let contract = Contract::new();
    let alice = &server.alice;
    // Sync first (the elicitation tool exists only for clients that can answer forms).
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call("call_0", "sync")]));
    fake.enqueue(ScriptedReply::text(&["ok"]));
    let mut stream = server.ask(alice, "first").await;
    let (asked, _) = until_approval(&mut stream).await;
    server
        .decide(alice, &asked["approval_id"], "deny", "once")
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
    let mut stream = server.ask(alice, "ask me things").await;
    let form = stream.until("elicitation_required").await.pop().unwrap();

    let listing = same("/chat/elicitations");
    let pending = contract
        .expect(&server, alice, Method::GET, listing, None, 200)
        .await;
    assert_eq!(
        pending["elicitations"][0]["elicitation_id"],
        form["elicitation_id"]
    );
    let everyone = ("/chat/elicitations", "/chat/elicitations?all_users=true");
    contract
        .expect(&server, alice, Method::GET, everyone, None, 403)
        .await;
    let path = format!(
        "/chat/elicitations/{}",
        form["elicitation_id"].as_str().unwrap()
    );
    let answer = ("/chat/elicitations/{elicitation_id}", path.as_str());
    let wrong = json!({"action": "accept", "content": {"name": 42}});
    contract
        .expect(&server, alice, Method::POST, answer, Some(wrong), 422)
        .await;
    let decline = json!({"action": "decline"});
    let declined = contract
        .expect(
            &server,
            alice,
            Method::POST,
            answer,
            Some(decline.clone()),
            200,
        )
        .await;
    assert_eq!(declined["elicitation"]["status"], "declined");
    stream.until_done().await;
    contract
        .expect(
            &server,
            alice,
            Method::POST,
            answer,
            Some(decline.clone()),
            409,
        )
        .await;
    let missing = (
        "/chat/elicitations/{elicitation_id}",
        "/chat/elicitations/eli_missing",
    );
    contract
        .expect(&server, alice, Method::POST, missing, Some(decline), 404)
        .await;
}
