//! A chat turn through a server with user fields (issue 11): registered at our own kg endpoint
//! with `Authorization: Bearer {{user.KG_TOKEN}}`. The owner, who set their own token, gets
//! its tools and a call through it succeeds; a member without a value sees the server among
//! `unavailable_servers` with `needs_user_credentials` and gets none of its tools. The value
//! never appears in the stream, the conversation, the server views or the audit.

use crate::support::chat::member_token;
use crate::support::chat::{ChatOptions, ChatServer, SseReader, of_type};
use crate::support::issue_token;
use serde_json::{Value, json};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

async fn ask_as(server: &ChatServer, token: &str, body: Value) -> Vec<Value> {
    let response = server
        .client
        .post(server.url("/chat/stream"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    SseReader::new(response).until_done().await
}

async fn text_of(server: &ChatServer, path: &str) -> String {
    let response = server.send(reqwest::Method::GET, path, None).await;
    assert_eq!(response.status(), 200, "{path}");
    response.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_uses_the_callers_own_value_and_a_person_without_one_is_told() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_kg",
        "personal__schema_version",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["Here is the version."]));
    fake.enqueue(ScriptedReply::text(&["I cannot reach it for you."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    let canary = issue_token(&server, &server.token, "personal kg", &["schema:read"])
        .await
        .plaintext;
    let bob = member_token(&server, "bob", "chat:use servers:read").await;
    let created = server
        .send(
            reqwest::Method::POST,
            "/api/mcp/servers",
            Some(json!({
                "name": "personal",
                "transport": "streamable_http",
                "url": format!("http://{}/mcp", server.address),
                "headers": {"Authorization": "Bearer {{user.KG_TOKEN}}"},
                "auth": {"user_fields": {"KG_TOKEN": {"title": "Personal access token", "secret": true}}},
            })),
        )
        .await;
    assert_eq!(created.status(), 201);
    let id = created.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let set = server
        .send(
            reqwest::Method::PUT,
            &format!("/api/mcp/servers/{id}/user-credentials"),
            Some(json!({"values": {"KG_TOKEN": canary}})),
        )
        .await;
    assert_eq!(set.status(), 200);
    let mut answers = vec![set.text().await.unwrap()];

    let owner_turn = ask_as(
        &server,
        &server.token,
        json!({"message": "schema version?"}),
    )
    .await;
    let calls = of_type(&owner_turn, "mcp_tool");
    assert!(
        calls.iter().any(|event| event["server"] == "personal"
            && event["tool"] == "schema_version"
            && event["status"] == "completed"),
        "{owner_turn:#?}"
    );
    assert!(
        calls.iter().all(|event| event["status"] != "error"),
        "{owner_turn:#?}"
    );
    let meta = of_type(&owner_turn, "meta")[0];
    assert!(
        meta["unavailable_servers"]
            .as_array()
            .is_none_or(|servers| servers.iter().all(|s| s["server"] != "personal")),
        "{meta}"
    );
    let conversation_id = owner_turn[0]["conversation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    answers.push(serde_json::to_string(&owner_turn).unwrap());

    let bob_turn = ask_as(&server, &bob, json!({"message": "schema version?"})).await;
    let meta = of_type(&bob_turn, "meta")[0];
    let personal = meta["unavailable_servers"]
        .as_array()
        .and_then(|servers| servers.iter().find(|s| s["server"] == "personal"))
        .unwrap_or_else(|| panic!("{meta}"));
    assert_eq!(personal["code"], "needs_user_credentials", "{personal}");
    assert!(
        personal["message"]
            .as_str()
            .unwrap()
            .contains("needs your Personal access token"),
        "{personal}"
    );
    assert!(
        meta["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|tool| tool["server"] != "personal"),
        "{meta}"
    );
    answers.push(serde_json::to_string(&bob_turn).unwrap());

    for path in [
        format!("/chat/conversations/{conversation_id}"),
        "/api/mcp/servers".to_owned(),
        format!("/api/mcp/servers/{id}"),
        "/api/audit".to_owned(),
    ] {
        answers.push(text_of(&server, &path).await);
    }
    for answer in &answers {
        assert!(!answer.contains(&canary), "the value leaked: {answer}");
    }
}
