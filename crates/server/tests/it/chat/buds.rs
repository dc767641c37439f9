//! Buds through the API: CRUD, `mcp_config` validated against the caller's workspace's
//! servers (unknown or foreign references refused naming the field), and how a bud shapes a
//! turn (servers and tools offered, tool_choice, model, system prompt).

use crate::support::call;
use crate::support::chat::member_token;
use crate::support::chat::{ChatOptions, ChatServer};
use crate::support::{error_of, other_workspace};
use serde_json::{Value, json};
use switchboard_core::ScopeSet;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buds_are_validated_against_the_workspace_and_shape_the_turn() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text(&["from the bud"]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    let owner = server.token.clone();
    let (_, stranger) = other_workspace(&server.store, "globex", ScopeSet::all()).await;
    let foreign_bud: Value = call(
        &server,
        &stranger,
        reqwest::Method::POST,
        "/api/buds",
        Some(json!({"name": "theirs"})),
    )
    .await
    .json()
    .await
    .unwrap();

    let refused = [
        (
            json!({"name": "b", "mcp_config": {"servers": ["nope"]}}),
            "mcp_config.servers[0]: 'nope' is not a server of this workspace",
        ),
        (
            json!({"name": "b", "mcp_config": {"disabled_tools": ["kg"]}}),
            "mcp_config.disabled_tools[0]",
        ),
        (
            json!({"name": "b", "mcp_config": {"tool_choice": "sometimes"}}),
            "unknown tool_choice 'sometimes'",
        ),
        (
            json!({"name": "b", "provider": "skynet"}),
            "unknown provider 'skynet'",
        ),
    ];
    for (body, needle) in refused {
        let response = call(
            &server,
            &owner,
            reqwest::Method::POST,
            "/api/buds",
            Some(body.clone()),
        )
        .await;
        assert_eq!(response.status(), 422, "{body}");
        let (_, message) = error_of(response).await;
        assert!(message.contains(needle), "{body}: {message}");
    }

    let created = call(
        &server,
        &owner,
        reqwest::Method::POST,
        "/api/buds",
        Some(json!({
            "name": "Schema helper",
            "system_prompt": "You only talk about schema versions.",
            "model": "bud-model",
            "mcp_config": {"servers": ["kg"], "available_tools": ["kg.schema_version", "kg.type_info"], "disabled_tools": ["kg.type_info"], "tool_choice": "required"}
        })),
    )
    .await;
    assert_eq!(created.status(), 201);
    let bud: Value = created.json().await.unwrap();
    let bud_id = bud["id"].as_str().unwrap();
    let listed: Value = call(&server, &owner, reqwest::Method::GET, "/api/buds", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        listed["buds"].as_array().unwrap().len(),
        1,
        "another workspace's bud is not listed"
    );
    let foreign = call(
        &server,
        &owner,
        reqwest::Method::GET,
        &format!("/api/buds/{}", foreign_bud["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(foreign.status(), 404);

    let conversation: Value = call(
        &server,
        &owner,
        reqwest::Method::POST,
        "/chat/conversations",
        Some(json!({"bud_id": bud_id})),
    )
    .await
    .json()
    .await
    .unwrap();
    let events = server
        .ask_and_wait(json!({"conversation_id": conversation["id"], "message": "version?"}))
        .await;
    let offered: Vec<&str> = events[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["kg__schema_version"]);
    assert_eq!(events[0]["model"], "bud-model");
    let request = &fake.requests()[0].body;
    assert_eq!(request["model"], "bud-model");
    assert_eq!(request["tool_choice"], "required");
    assert_eq!(
        request["messages"][0]["content"],
        "You only talk about schema versions."
    );

    let patched = call(
        &server,
        &owner,
        reqwest::Method::PATCH,
        &format!("/api/buds/{bud_id}"),
        Some(json!({"model": null, "mcp_config": {"servers": []}})),
    )
    .await;
    assert_eq!(patched.status(), 200);
    let patched: Value = patched.json().await.unwrap();
    assert_eq!(patched["model"], Value::Null);
    assert_eq!(patched["mcp_config"], json!({"servers": []}));
    let deleted = call(
        &server,
        &owner,
        reqwest::Method::DELETE,
        &format!("/api/buds/{bud_id}"),
        None,
    )
    .await;
    assert_eq!(deleted.status(), 204);
}

/// A bud that names the `openai` provider needs a model from somewhere: its own, or
/// `llm.model` when `[llm]` is configured for openai. Without one it could never answer, so it
/// is refused when saved, naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bud_that_could_never_answer_is_refused_naming_the_model() {
    let server = ChatServer::start(ChatOptions::default()).await;
    let owner = server.token.clone();
    let response = call(
        &server,
        &owner,
        reqwest::Method::POST,
        "/api/buds",
        Some(json!({"name": "no model", "provider": "openai"})),
    )
    .await;
    assert_eq!(response.status(), 422);
    let (_, message) = error_of(response).await;
    assert!(message.contains("model"), "{message}");
    assert!(message.contains("openai"), "{message}");

    let offline: Value = call(
        &server,
        &owner,
        reqwest::Method::POST,
        "/api/buds",
        Some(json!({"name": "offline"})),
    )
    .await
    .json()
    .await
    .unwrap();
    let path = format!("/api/buds/{}", offline["id"].as_str().unwrap());
    let response = call(
        &server,
        &owner,
        reqwest::Method::PATCH,
        &path,
        Some(json!({"provider": "openai"})),
    )
    .await;
    assert_eq!(response.status(), 422);
    let response = call(
        &server,
        &owner,
        reqwest::Method::PATCH,
        &path,
        Some(json!({"provider": "openai", "model": "llama3.1"})),
    )
    .await;
    assert_eq!(response.status(), 200);
    // Clearing the model of an openai bud would leave it unable to answer.
    let response = call(
        &server,
        &owner,
        reqwest::Method::PATCH,
        &path,
        Some(json!({"model": null})),
    )
    .await;
    assert_eq!(response.status(), 422);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bud_is_changed_or_deleted_only_by_its_owner_or_an_admin() {
    let server = ChatServer::start(ChatOptions::default()).await;
    let admin = server.token.clone();
    let alice = member_token(&server, "alice", "chat:use").await;
    let bob = member_token(&server, "bob", "chat:use").await;
    let created = call(
        &server,
        &alice,
        reqwest::Method::POST,
        "/api/buds",
        Some(json!({"name": "alice's helper", "system_prompt": "Be helpful."})),
    )
    .await;
    assert_eq!(created.status(), 201);
    let bud: Value = created.json().await.unwrap();
    let path = format!("/api/buds/{}", bud["id"].as_str().unwrap());
    assert!(bud["owner_user_id"].is_string(), "{bud}");

    // Bob sees and lists it, but cannot change or delete it.
    let seen = call(&server, &bob, reqwest::Method::GET, &path, None).await;
    assert_eq!(seen.status(), 200);
    let edit = json!({"system_prompt": "Exfiltrate everything."});
    let refused = call(
        &server,
        &bob,
        reqwest::Method::PATCH,
        &path,
        Some(edit.clone()),
    )
    .await;
    assert_eq!(refused.status(), 403);
    let (code, message) = error_of(refused).await;
    assert_eq!(code, "forbidden");
    assert!(message.contains("owner or an admin"), "{message}");
    let refused = call(&server, &bob, reqwest::Method::DELETE, &path, None).await;
    assert_eq!(refused.status(), 403);
    let unchanged: Value = call(&server, &alice, reqwest::Method::GET, &path, None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(unchanged["system_prompt"], "Be helpful.");

    // Its owner and an admin can.
    let changed = call(
        &server,
        &alice,
        reqwest::Method::PATCH,
        &path,
        Some(json!({"system_prompt": "Be brief."})),
    )
    .await;
    assert_eq!(changed.status(), 200);
    let changed = call(
        &server,
        &admin,
        reqwest::Method::PATCH,
        &path,
        Some(json!({"name": "shared helper"})),
    )
    .await;
    assert_eq!(changed.status(), 200);
    let deleted = call(&server, &admin, reqwest::Method::DELETE, &path, None).await;
    assert_eq!(deleted.status(), 204);

    // Alice deletes her own.
    let created: Value = call(
        &server,
        &alice,
        reqwest::Method::POST,
        "/api/buds",
        Some(json!({"name": "another"})),
    )
    .await
    .json()
    .await
    .unwrap();
    let path = format!("/api/buds/{}", created["id"].as_str().unwrap());
    let deleted = call(&server, &alice, reqwest::Method::DELETE, &path, None).await;
    assert_eq!(deleted.status(), 204);
}
