//! `/api/people` and what it does to tokens, through the real HTTP interface: a demoted
//! admin's token loses the admin routes on its next request, a deactivated person's tokens
//! are refused (401, saying so) until they are reactivated, a removed person's tokens are
//! gone and their conversations kept (given to the removing admin) or deleted as asked; the
//! workspace always keeps an active admin (409); only admins manage people; other
//! workspaces' people answer 404.

use crate::support::chat::{ChatOptions, ChatServer};
use crate::support::{TestServer, error_of, other_workspace, person_with_token};
use reqwest::StatusCode;
use serde_json::{Value, json};
use switchboard_core::ScopeSet;
use switchboard_store::UserRole;

async fn send(
    server: &TestServer,
    method: reqwest::Method,
    token: &str,
    path: &str,
    body: Option<Value>,
) -> reqwest::Response {
    let mut request = server
        .client
        .request(method, server.url(path))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    request.send().await.unwrap()
}

async fn patch(server: &TestServer, token: &str, user_id: &str, body: Value) -> reqwest::Response {
    let path = format!("/api/people/{user_id}");
    send(server, reqwest::Method::PATCH, token, &path, Some(body)).await
}

/// A new user with `role` and a token holding `scopes`: (user id, token).
async fn person(server: &TestServer, name: &str, role: &str, scopes: &[&str]) -> (String, String) {
    let owner = &server.owner_token;
    let body = json!({"name": name, "role": role});
    let response = send(
        server,
        reqwest::Method::POST,
        owner,
        "/api/users",
        Some(body),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let user: Value = response.json().await.unwrap();
    let user_id = user["id"].as_str().unwrap().to_owned();
    let body = json!({"name": "laptop", "scopes": scopes, "user_id": user_id});
    let response = send(
        server,
        reqwest::Method::POST,
        owner,
        "/api/tokens",
        Some(body),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let issued: Value = response.json().await.unwrap();
    (user_id, issued["plaintext"].as_str().unwrap().to_owned())
}

async fn status_of(server: &TestServer, token: &str, path: &str) -> StatusCode {
    server.get(path, token).send().await.unwrap().status()
}

#[tokio::test]
async fn a_demoted_admins_token_loses_the_admin_routes_at_once_and_regains_them() {
    let server = TestServer::start().await;
    let (erin, erin_token) = person(&server, "erin", "admin", &["admin"]).await;
    assert_eq!(
        status_of(&server, &erin_token, "/api/people").await,
        StatusCode::OK
    );

    let response = patch(
        &server,
        &server.owner_token,
        &erin,
        json!({"role": "member"}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let erin_view: Value = response.json().await.unwrap();
    assert_eq!(erin_view["role"], "member");
    assert_eq!(erin_view["active"], true);

    let response = server.get("/api/people", &erin_token).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(error_of(response).await.0, "insufficient_scope");
    let me: Value = crate::support::json_body(server.get("/api/me", &erin_token)).await;
    assert_eq!(
        me["scopes"],
        json!([]),
        "the token's admin scope is not hers now"
    );

    let response = patch(
        &server,
        &server.owner_token,
        &erin,
        json!({"role": "admin"}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        status_of(&server, &erin_token, "/api/people").await,
        StatusCode::OK
    );
}

#[tokio::test]
async fn a_deactivated_persons_tokens_are_refused_until_reactivated() {
    let server = TestServer::start().await;
    let (frank, frank_token) = person(&server, "frank", "member", &["chat:use"]).await;
    assert_eq!(
        status_of(&server, &frank_token, "/api/me").await,
        StatusCode::OK
    );

    let response = patch(
        &server,
        &server.owner_token,
        &frank,
        json!({"active": false}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let view: Value = response.json().await.unwrap();
    assert_eq!(
        (view["active"].clone(), view["usable_tokens"].clone()),
        (json!(false), json!(1))
    );

    let response = server.get("/api/me", &frank_token).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let (code, message) = error_of(response).await;
    assert_eq!(code, "unauthorized");
    assert!(
        message.contains("'frank'") && message.contains("deactivated"),
        "{message}"
    );

    // No new token for a deactivated person either.
    let body = json!({"name": "again", "scopes": ["chat:use"], "user_id": frank});
    let path = "/api/tokens";
    let response = send(
        &server,
        reqwest::Method::POST,
        &server.owner_token,
        path,
        Some(body),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);

    let people: Value =
        crate::support::json_body(server.get("/api/people", &server.owner_token)).await;
    let listed = people
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == frank.as_str());
    assert_eq!(listed.unwrap()["active"], false);

    let response = patch(
        &server,
        &server.owner_token,
        &frank,
        json!({"active": true}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        status_of(&server, &frank_token, "/api/me").await,
        StatusCode::OK
    );
}

#[tokio::test]
async fn a_removed_persons_tokens_stop_and_the_person_is_gone() {
    let server = TestServer::start().await;
    let (gina, gina_token) = person(&server, "gina", "member", &["chat:use"]).await;
    let path = format!("/api/people/{gina}?conversations=delete");
    let owner = &server.owner_token;
    let response = send(&server, reqwest::Method::DELETE, owner, &path, None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        status_of(&server, &gina_token, "/api/me").await,
        StatusCode::UNAUTHORIZED
    );
    let response = send(&server, reqwest::Method::DELETE, owner, &path, None).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let audit: Value =
        crate::support::json_body(server.get("/api/audit?action=user.deleted", owner)).await;
    assert!(
        audit.to_string().contains(&gina),
        "the audit keeps the removal: {audit}"
    );
}

#[tokio::test]
async fn the_last_active_admin_cannot_be_demoted_deactivated_or_removed() {
    let server = TestServer::start().await;
    let owner = &server.owner_token;
    let me: Value = crate::support::json_body(server.get("/api/me", owner)).await;
    let owner_id = me["user_id"].as_str().unwrap().to_owned();

    let response = patch(&server, owner, &owner_id, json!({"role": "member"})).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    let (code, message) = error_of(response).await;
    assert_eq!(code, "conflict");
    assert!(message.contains("last active owner or admin"), "{message}");

    // An admin who is deactivated does not count: the owner is still the last active one.
    let (hugo, hugo_token) = person(&server, "hugo", "admin", &["admin"]).await;
    assert_eq!(
        patch(&server, owner, &hugo, json!({"active": false}))
            .await
            .status(),
        StatusCode::OK
    );
    let response = patch(&server, owner, &owner_id, json!({"role": "member"})).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);

    // With Hugo active again the owner may step down; then Hugo is the last one.
    assert_eq!(
        patch(&server, owner, &hugo, json!({"active": true}))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        patch(&server, owner, &owner_id, json!({"role": "member"}))
            .await
            .status(),
        StatusCode::OK
    );
    let response = patch(&server, &hugo_token, &hugo, json!({"role": "member"})).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    let path = format!("/api/people/{hugo}?conversations=keep");
    let response = send(&server, reqwest::Method::DELETE, &hugo_token, &path, None).await;
    assert_eq!(
        response.status(),
        StatusCode::CONFLICT,
        "nobody removes themselves"
    );
    let response = patch(&server, &hugo_token, &hugo, json!({"active": false})).await;
    assert_eq!(
        response.status(),
        StatusCode::CONFLICT,
        "nobody deactivates themselves"
    );
}

#[tokio::test]
async fn only_admins_manage_people_and_other_workspaces_people_are_not_found() {
    let server = TestServer::start().await;
    let (ivan, ivan_token) =
        person(&server, "ivan", "member", &["chat:use", "servers:write"]).await;
    let response = patch(&server, &ivan_token, &ivan, json!({"role": "admin"})).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        status_of(&server, &ivan_token, "/api/people").await,
        StatusCode::FORBIDDEN
    );

    let (_, other_admin) = other_workspace(&server.store, "elsewhere", ScopeSet::all()).await;
    let response = patch(&server, &other_admin, &ivan, json!({"active": false})).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let path = format!("/api/people/{ivan}?conversations=delete");
    let response = send(&server, reqwest::Method::DELETE, &other_admin, &path, None).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        status_of(&server, &ivan_token, "/api/me").await,
        StatusCode::OK
    );

    let owner = &server.owner_token;
    let response = patch(&server, owner, &ivan, json!({})).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let response = patch(&server, owner, &ivan, json!({"role": "owner"})).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
}

/// `person`'s new conversation titled `title`; its id.
async fn conversation_of(server: &ChatServer, token: &str, title: &str) -> String {
    let response = server
        .client
        .post(server.url("/chat/conversations"))
        .bearer_auth(token)
        .json(&json!({"title": title}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let created: Value = response.json().await.unwrap();
    created["id"].as_str().unwrap().to_owned()
}

/// The JSON answer of `method path` sent with the owner's token.
async fn owner_json(server: &ChatServer, method: reqwest::Method, path: &str) -> Value {
    server.send(method, path, None).await.json().await.unwrap()
}

/// The status of `/api/me` with `token`.
async fn me_status(server: &ChatServer, token: &str) -> StatusCode {
    let me = server.client.get(server.url("/api/me")).bearer_auth(token);
    me.send().await.unwrap().status()
}

async fn remove(server: &ChatServer, user_id: &str, query: &str) -> reqwest::Response {
    let path = format!("/api/people/{user_id}{query}");
    server.send(reqwest::Method::DELETE, &path, None).await
}

async fn removal_keeps_or_deletes_the_conversations(postgres: bool) {
    let server = ChatServer::start(ChatOptions {
        postgres,
        ..ChatOptions::default()
    })
    .await;
    let me = owner_json(&server, reqwest::Method::GET, "/api/me").await;
    let owner_id = me["user_id"].as_str().unwrap().to_owned();
    let workspace = &server.workspace_id;
    let (lena, lena_token) = person_with_token(
        &server.store,
        workspace,
        "lena",
        UserRole::Member,
        "chat:use",
    )
    .await;
    let (max, max_token) = person_with_token(
        &server.store,
        workspace,
        "max",
        UserRole::Member,
        "chat:use",
    )
    .await;
    let kept = [
        conversation_of(&server, &lena_token, "lena's research").await,
        conversation_of(&server, &lena_token, "lena's notes").await,
    ];
    let dropped = conversation_of(&server, &max_token, "max's draft").await;

    // No choice, or a wrong one: 400 saying what to send, and nothing is removed.
    let response = remove(&server, lena.as_str(), "").await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let (code, message) = error_of(response).await;
    assert_eq!(code, "bad_request");
    assert!(message.contains("?conversations=keep"), "{message}");
    let response = remove(&server, lena.as_str(), "?conversations=maybe").await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(error_of(response).await.1.contains("not `maybe`"));
    let response = remove(&server, "no-such-person", "").await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND, "404 before 400");
    assert_eq!(me_status(&server, &lena_token).await, StatusCode::OK);

    // Keep: Lena's conversations become the removing admin's, readable and listed.
    let path = format!("/api/people/{lena}?conversations=keep");
    let removed = owner_json(&server, reqwest::Method::DELETE, &path).await;
    assert_eq!(
        removed,
        json!({"id": lena.as_str(), "name": "lena", "conversations": "keep",
               "transferred_conversations": 2, "conversations_owner": owner_id})
    );
    for id in &kept {
        let conversation = server.conversation(id).await;
        assert!(
            conversation.to_string().contains("lena's"),
            "{conversation}"
        );
    }
    let listed = owner_json(&server, reqwest::Method::GET, "/chat/conversations").await;
    let listed = listed.to_string();
    assert!(
        kept.iter().all(|id| listed.contains(id.as_str())),
        "{listed}"
    );
    assert_eq!(
        me_status(&server, &lena_token).await,
        StatusCode::UNAUTHORIZED
    );

    // Delete: Max's conversation goes with him.
    let path = format!("/api/people/{max}?conversations=delete");
    let removed = owner_json(&server, reqwest::Method::DELETE, &path).await;
    assert_eq!(removed["transferred_conversations"], 0);
    assert!(removed["conversations_owner"].is_null(), "{removed}");
    let path = format!("/chat/conversations/{dropped}");
    let response = server.send(reqwest::Method::GET, &path, None).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    // The audit says what became of the conversations.
    let path = "/api/audit?action=user.deleted";
    let audit = owner_json(&server, reqwest::Method::GET, path).await;
    let audit = audit.to_string();
    assert!(
        audit.contains(r#""conversations":"keep""#)
            && audit.contains(r#""transferred_conversations":2"#),
        "{audit}"
    );
    assert!(audit.contains(r#""conversations":"delete""#), "{audit}");
}

#[tokio::test]
async fn a_removed_persons_conversations_are_kept_by_the_admin_or_deleted_as_asked() {
    removal_keeps_or_deletes_the_conversations(false).await;
}

#[tokio::test]
async fn a_removed_persons_conversations_are_kept_or_deleted_on_postgres() {
    removal_keeps_or_deletes_the_conversations(true).await;
}
