//! The chat API around the answers: conversations (create, page, read, rename, overrides,
//! delete, visibility), buds (CRUD, validation of `mcp_config` against the workspace's
//! servers) and how a bud shapes a turn; scopes; a process without a chat engine.

use crate::support::chat::{ChatOptions, ChatServer, member_token};
use crate::support::{TestServer, call, error_of, other_workspace};
use serde_json::{Value, json};
use switchboard_core::{Scope, ScopeSet};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_are_created_paged_renamed_and_deleted_and_stay_private() {
    let server = ChatServer::start(ChatOptions::default()).await;
    let owner = server.token.clone();
    let mut ids = Vec::new();
    for index in 0..3 {
        let response = call(
            &server,
            &owner,
            reqwest::Method::POST,
            "/chat/conversations",
            Some(json!({"title": format!("c{index}")})),
        )
        .await;
        assert_eq!(response.status(), 201);
        let created: Value = response.json().await.unwrap();
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    let first: Value = call(
        &server,
        &owner,
        reqwest::Method::GET,
        "/chat/conversations?limit=2",
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(first["conversations"].as_array().unwrap().len(), 2);
    assert_eq!(first["conversations"][0]["id"], ids[2].as_str());
    let cursor = first["next_cursor"].as_str().unwrap();
    let second: Value = call(
        &server,
        &owner,
        reqwest::Method::GET,
        &format!("/chat/conversations?limit=2&cursor={cursor}"),
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(second["conversations"].as_array().unwrap().len(), 1);
    assert_eq!(second["conversations"][0]["id"], ids[0].as_str());
    assert_eq!(second["next_cursor"], Value::Null);
    let bad_cursor = call(
        &server,
        &owner,
        reqwest::Method::GET,
        "/chat/conversations?cursor=nonsense",
        None,
    )
    .await;
    assert_eq!(bad_cursor.status(), 400);

    let renamed = call(
        &server,
        &owner,
        reqwest::Method::PATCH,
        &format!("/chat/conversations/{}", ids[0]),
        Some(json!({"title": "Renamed"})),
    )
    .await;
    assert_eq!(renamed.status(), 200);
    assert_eq!(renamed.json::<Value>().await.unwrap()["title"], "Renamed");

    // Another member of the workspace sees none of it; neither does another workspace.
    let bob = member_token(&server, "bob", "chat:use").await;
    let listed: Value = call(
        &server,
        &bob,
        reqwest::Method::GET,
        "/chat/conversations",
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(listed["conversations"], json!([]));
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let response = call(
            &server,
            &bob,
            method,
            &format!("/chat/conversations/{}", ids[0]),
            None,
        )
        .await;
        assert_eq!(response.status(), 404);
    }
    let attach = call(
        &server,
        &bob,
        reqwest::Method::GET,
        &format!("/chat/{}/stream", ids[0]),
        None,
    )
    .await;
    assert_eq!(attach.status(), 404);
    let (_, stranger) = other_workspace(&server.store, "globex", ScopeSet::all()).await;
    let response = call(
        &server,
        &stranger,
        reqwest::Method::POST,
        "/chat/stream",
        Some(json!({"conversationId": ids[0], "message": "hi"})),
    )
    .await;
    assert_eq!(response.status(), 404);

    let deleted = call(
        &server,
        &owner,
        reqwest::Method::DELETE,
        &format!("/chat/conversations/{}", ids[0]),
        None,
    )
    .await;
    assert_eq!(deleted.status(), 204);
    let gone = call(
        &server,
        &owner,
        reqwest::Method::GET,
        &format!("/chat/conversations/{}", ids[0]),
        None,
    )
    .await;
    assert_eq!(gone.status(), 404);
    let (code, message) = error_of(gone).await;
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("not_found", "conversation not found")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_precise_errors_and_change_nothing() {
    let server = ChatServer::start(ChatOptions::default()).await;
    let owner = server.token.clone();
    let cases = [
        (
            "/chat/stream",
            json!({"message": "   "}),
            422,
            "message: must not be empty",
        ),
        (
            "/chat/stream",
            json!({"message": "hi", "conversationId": "no-such-id"}),
            404,
            "conversation not found",
        ),
        (
            "/chat/conversations",
            json!({"mcp_config_overrides": {"additional_servers": ["nope"]}}),
            422,
            "mcp_config_overrides.additional_servers[0]",
        ),
        (
            "/chat/conversations",
            json!({"mcp_config_overrides": {"disabled_servers": ["kg"]}}),
            422,
            "unknown field `disabled_servers`",
        ),
        (
            "/chat/conversations",
            json!({"bud_id": "no-such-bud"}),
            404,
            "bud not found",
        ),
    ];
    for (path, body, status, needle) in cases {
        let response = call(
            &server,
            &owner,
            reqwest::Method::POST,
            path,
            Some(body.clone()),
        )
        .await;
        assert_eq!(response.status(), status, "{path} {body}");
        let (_, message) = error_of(response).await;
        assert!(message.contains(needle), "{path} {body}: {message}");
    }
    let listed: Value = call(
        &server,
        &owner,
        reqwest::Method::GET,
        "/chat/conversations",
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        listed["conversations"],
        json!([]),
        "refused requests created nothing"
    );
    let unknown_field = call(
        &server,
        &owner,
        reqwest::Method::POST,
        "/chat/stream",
        Some(json!({"mesage": "hi"})),
    )
    .await;
    assert_eq!(unknown_field.status(), 422);
    assert_eq!(error_of(unknown_field).await.0, "invalid_request");

    let reader = member_token(&server, "reader", "schema:read").await;
    for (method, path) in [
        (reqwest::Method::GET, "/chat/conversations"),
        (reqwest::Method::GET, "/api/buds"),
    ] {
        let response = call(&server, &reader, method, path, None).await;
        assert_eq!(response.status(), 403);
        assert!(error_of(response).await.1.contains(Scope::ChatUse.as_str()));
    }
}

#[tokio::test]
async fn without_a_chat_engine_the_chat_routes_say_so() {
    let server = TestServer::start().await;
    let response = server
        .get("/chat/conversations", &server.owner_token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    let (code, message) = error_of(response).await;
    assert_eq!(code, "unavailable");
    assert!(message.contains("chat engine"), "{message}");
}

/// Tool messages stored with older, camelCase metadata (`isError`, `durationMs`…) are read
/// through the one typed shape: the API answers them with the snake_case names the engine
/// writes today, so clients read one name per field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_camel_case_tool_metadata_is_served_with_one_name_per_field() {
    let server = ChatServer::start(ChatOptions::default()).await;
    let events = server.ask_and_wait(json!({"message": "hello"})).await;
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    server
        .store
        .append_message(
            &server.workspace_id,
            &switchboard_core::ConversationId::from(conversation_id.as_str()),
            switchboard_store::NewMessage {
                role: switchboard_core::ChatRole::Tool,
                content: "{\"error\":\"boom\"}".to_owned(),
                tool_calls: Vec::new(),
                tool_call_id: Some("call_old".to_owned()),
                metadata: json!({
                    "toolCallId": "tc_old", "state": "failed", "server": "everything",
                    "tool": "echo", "isError": true, "truncated": false, "resultChars": 16,
                    "durationMs": 12, "error": "boom", "errorCode": "tool_error"
                }),
                status: switchboard_store::MessageStatus::Complete,
            },
        )
        .await
        .unwrap();

    let detail = server.conversation(&conversation_id).await;
    let messages = detail["messages"].as_array().unwrap();
    let old = messages
        .iter()
        .find(|message| message["tool_call_id"] == "call_old")
        .unwrap();
    assert_eq!(
        old["metadata"],
        json!({
            "tool_call_id": "tc_old", "state": "failed", "server": "everything",
            "tool": "echo", "is_error": true, "truncated": false, "result_chars": 16,
            "duration_ms": 12, "error": "boom", "error_code": "tool_error"
        })
    );
}
