//! Each API area's main answers after one approved turn (so conversations, approvals and the
//! audit log have something to show), and the error bodies: status and body, snapshotted.

use crate::support::TestServer;
use crate::support::approvals::{ApprovalServer, Person, echo_call, start, until_approval};
use crate::support::snapshot::{Stable, settings};
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::fake_openai::ScriptedReply;

/// The answer as a snapshot sees it: `{status, body}`.
async fn answer(
    server: &ApprovalServer,
    who: &Person,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Value {
    let (status, body) = server.send(who, method, path, body).await;
    json!({"status": status.as_u16(), "body": body})
}

/// One turn as Alice: `echo hello`, approved once, answered.
async fn approved_turn(
    server: &ApprovalServer,
    fake: &switchboard_test_support::fake_openai::FakeOpenAi,
) -> String {
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call(
        "call_echo",
        "hello",
    )]));
    fake.enqueue(ScriptedReply::text(&["It said hello."]));
    let mut stream = server.ask(&server.alice, "echo hello").await;
    let (asked, _) = until_approval(&mut stream).await;
    let (status, decided) = server
        .decide(&server.alice, &asked["approval_id"], "approve", "once")
        .await;
    assert_eq!(status, 200, "{decided}");
    stream.until_done().await;
    // The call's audit row is written when the call finishes, not before `done`: wait for it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while server.audit("action=tool_call.completed").await.is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "no audit row for the call"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    decided["approval"]["conversation_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_main_answer_of_each_api_area() {
    let (fake, server, everything) = start(ApprovalConfig::default()).await;
    let conversation = approved_turn(&server, &fake).await;
    let admin = &server.admin;
    let alice = &server.alice;
    let server_path = format!("/api/mcp/servers/{everything}");
    server
        .set_policy(&everything, "get-sum", "ALWAYS_ALLOW")
        .await;
    // Synced once, as a server added through the API is: the turn's session announced a list
    // change, and the resync it started is over when this one answers (they take turns), so
    // the server's answer below does not depend on how far that resync got.
    let (status, synced) = server
        .send(admin, Method::POST, &format!("{server_path}/sync"), None)
        .await;
    assert!(status.is_success(), "{status} {synced}");

    let server_tools = format!("{server_path}/capabilities");
    let conversation_path = format!("/chat/conversations/{conversation}");
    let stranger = Person {
        id: admin.id.clone(),
        token: "sb_not_a_token".to_owned(),
    };
    let unknown_server = "/api/mcp/servers/00000000-0000-7000-8000-000000000000";
    let bud = json!({"name": "echoer", "system_prompt": "Echo what you are told."});
    let invalid_server = json!({"name": "", "transport": "stdio"});
    // (snapshot, who asks, method, path, body)
    let requests: Vec<(&str, &Person, Method, &str, Option<Value>)> = vec![
        ("me", alice, Method::GET, "/api/me", None),
        ("tokens_list", admin, Method::GET, "/api/tokens", None),
        ("users_list", admin, Method::GET, "/api/users", None),
        ("bud_created", admin, Method::POST, "/api/buds", Some(bud)),
        ("buds_list", admin, Method::GET, "/api/buds", None),
        (
            "policies_list",
            admin,
            Method::GET,
            "/api/mcp/policies",
            None,
        ),
        (
            "audit_search",
            admin,
            Method::GET,
            "/api/audit?server=everything&tool=echo",
            None,
        ),
        (
            "mcp_servers_list",
            admin,
            Method::GET,
            "/api/mcp/servers",
            None,
        ),
        ("mcp_server_detail", admin, Method::GET, &server_path, None),
        ("mcp_server_tools", admin, Method::GET, &server_tools, None),
        (
            "approvals_list",
            alice,
            Method::GET,
            "/chat/approvals?state=all",
            None,
        ),
        (
            "conversations_list",
            alice,
            Method::GET,
            "/chat/conversations",
            None,
        ),
        (
            "conversation_detail",
            alice,
            Method::GET,
            &conversation_path,
            None,
        ),
        ("health", admin, Method::GET, "/api/health", None),
        ("error_401", &stranger, Method::GET, "/api/me", None),
        ("error_404", admin, Method::GET, unknown_server, None),
        (
            "error_422",
            admin,
            Method::POST,
            "/api/mcp/servers",
            Some(invalid_server),
        ),
    ];
    let mut answers = Vec::new();
    for (name, who, method, path, body) in requests {
        answers.push((name, answer(&server, who, method, path, body).await));
    }

    let mut stable = Stable::new();
    let answers: Vec<(&str, Value)> = answers
        .into_iter()
        .map(|(name, value)| (name, stable.of(&value)))
        .collect();
    settings().bind(|| {
        for (name, value) in &answers {
            insta::assert_json_snapshot!(*name, value);
        }
    });
}

#[tokio::test]
async fn the_knowledge_graph_answers() {
    let server = TestServer::start().await;
    let token = server.owner_token.clone();
    let schema = json!({
        "object_types": [{"name": "Person", "description": "Someone",
            "properties": [{"name": "name", "type": "string", "required": true}]}],
        "relationship_types": []
    });
    let replaced = server
        .client
        .put(server.url("/api/kg/schema"))
        .bearer_auth(&token)
        .json(&json!({"schema": schema, "message": "people"}))
        .send()
        .await
        .unwrap();
    let mut answers = vec![("kg_schema_replaced", replaced)];
    for (name, path) in [
        ("kg_schema", "/api/kg/schema"),
        ("kg_versions", "/api/kg/versions"),
        ("kg_export", "/api/kg/export"),
    ] {
        answers.push((name, server.get(path, &token).send().await.unwrap()));
    }
    let mut stable = Stable::new();
    let mut snapshots = Vec::new();
    for (name, response) in answers {
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap();
        snapshots.push((name, stable.of(&json!({"status": status, "body": body}))));
    }
    settings().bind(|| {
        for (name, value) in &snapshots {
            insta::assert_json_snapshot!(*name, value);
        }
    });
}
