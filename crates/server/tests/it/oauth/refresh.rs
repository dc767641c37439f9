//! A refused OAuth token is refreshed without the person noticing: a connected person's call
//! that the upstream answers 401 gets one refresh (`refresh_token` grant) and one retry, and
//! succeeds with the new token; when the refresh is refused too, the call answers `needs_auth`
//! (sign in again). The same holds for a chat turn's call. Prints the added latency of a call that must refresh its token.

use super::refreshing_server::RefreshingServer;
use crate::support::chat::{ChatOptions, ChatServer, of_type};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

async fn send(
    server: &ChatServer,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let response = server.send(method, path, body).await;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Connects the caller: authorize, then our callback with a code and the flow's state.
async fn connect(server: &ChatServer, id: &str) {
    let (status, body) = send(
        server,
        Method::POST,
        &format!("/api/mcp/servers/{id}/oauth/authorize"),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let url = url::Url::parse(body["authorization_url"].as_str().unwrap()).unwrap();
    let state = url
        .query_pairs()
        .find(|(key, _)| key == "state")
        .map(|(_, value)| value.into_owned())
        .unwrap();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let answer = browser
        .get(server.url(&format!("/oauth/callback?code=the-code&state={state}")))
        .send()
        .await
        .unwrap();
    let location = answer.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.contains("oauth=connected"), "{location}");
}

/// Tries `whoami`; returns the answer's text and how long it took.
async fn whoami(server: &ChatServer, id: &str) -> (u16, String, Duration) {
    let started = Instant::now();
    let (status, body) = send(
        server,
        Method::POST,
        &format!("/api/mcp/servers/{id}/tools/whoami/call"),
        Some(json!({"arguments": {}})),
    )
    .await;
    (status, body.to_string(), started.elapsed())
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_is_refreshed_once_and_the_call_retried() {
    let upstream = RefreshingServer::start().await;
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_whoami",
        "refreshing__whoami",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["Done."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    let (status, created) = send(
        &server,
        Method::POST,
        "/api/mcp/servers",
        Some(json!({
            "name": "refreshing",
            "transport": "streamable_http",
            "url": upstream.mcp_url(),
            "auth": {"mode": "oauth", "credential_scope": "per_user"},
        })),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    connect(&server, &id).await;
    let (status, synced) = send(
        &server,
        Method::POST,
        &format!("/api/mcp/servers/{id}/sync"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{synced}");
    assert_eq!(synced["tool_count"], 1, "{synced}");

    let (status, text, _) = whoami(&server, &id).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("generation 1"), "{text}");

    // Warm calls (session open, token valid) against calls whose token is refused first.
    let mut plain = Vec::new();
    let mut refreshed = Vec::new();
    for round in 0..5u32 {
        let (status, text, took) = whoami(&server, &id).await;
        assert_eq!(status, 200, "{text}");
        plain.push(took);
        upstream.expire_tokens();
        let (status, text, took) = whoami(&server, &id).await;
        assert_eq!(status, 200, "{text}");
        assert!(
            text.contains(&format!("generation {}", round + 2)),
            "{text}"
        );
        assert_eq!(
            upstream.refreshes(),
            round + 1,
            "one refresh per refused token"
        );
        refreshed.push(took);
    }
    eprintln!(
        "oauth figures: a tried call takes {:?} (median of 5) with a valid token, {:?} when its token is refused, refreshed and the call retried on a new session",
        median(plain),
        median(refreshed)
    );

    // A chat turn's call whose token is refused: refreshed and retried as well.
    upstream.expire_tokens();
    let events = server.ask_and_wait(json!({"message": "who am I?"})).await;
    let calls = of_type(&events, "mcp_tool");
    assert!(
        calls
            .iter()
            .any(|event| event["tool"] == "whoami" && event["status"] == "completed"),
        "{events:#?}"
    );
    assert_eq!(upstream.refreshes(), 6);

    // Testing the connection with a refused token: refreshed and retried as well.
    upstream.expire_tokens();
    let test_path = format!("/api/mcp/servers/{id}/test");
    let (status, tested) = send(&server, Method::POST, &test_path, None).await;
    assert_eq!(status, 200, "{tested}");
    assert_eq!(tested["ok"], true, "{tested}");
    assert_eq!(upstream.refreshes(), 7);

    // Refused again and the refresh refused too: the person must sign in again, and the
    // server is not marked failed for everyone else.
    upstream.refuse_refreshes();
    upstream.expire_tokens();
    let (status, text, _) = whoami(&server, &id).await;
    assert_eq!(status, 409, "{text}");
    assert!(text.contains("needs_auth"), "{text}");
    upstream.expire_tokens();
    let (status, tested) = send(&server, Method::POST, &test_path, None).await;
    assert_eq!(status, 409, "{tested}");
    assert_eq!(tested["error"]["code"], "needs_auth", "{tested}");

    let (_, view) = send(
        &server,
        Method::GET,
        &format!("/api/mcp/servers/{id}"),
        None,
    )
    .await;
    let (_, audit) = send(&server, Method::GET, "/api/audit", None).await;
    for token in upstream.issued() {
        for answer in [&view, &audit] {
            assert!(
                !answer.to_string().contains(&token),
                "a token leaked: {answer}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_connection_serves_everyone_and_is_refreshed_before_it_expires() {
    // Tokens that expire within the refresh margin are refreshed before use, never refused.
    let upstream = RefreshingServer::with_token_lifetime(30).await;
    let server = ChatServer::start(ChatOptions::default()).await;
    let member =
        crate::support::chat::member_token(&server, "bob", "servers:read servers:write").await;
    let (status, created) = send(
        &server,
        Method::POST,
        "/api/mcp/servers",
        Some(json!({
            "name": "team",
            "transport": "streamable_http",
            "url": upstream.mcp_url(),
            "auth": {"mode": "oauth", "credential_scope": "shared"},
        })),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    // The admin connects the workspace.
    connect(&server, &id).await;
    let (status, synced) = send(
        &server,
        Method::POST,
        &format!("/api/mcp/servers/{id}/sync"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{synced}");

    // A member who connected nothing uses the shared connection.
    let response = server
        .client
        .post(server.url(&format!("/api/mcp/servers/{id}/tools/whoami/call")))
        .bearer_auth(&member)
        .json(&json!({"arguments": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert!(text.contains("called with token generation"), "{text}");
    let view: Value = server
        .client
        .get(server.url(&format!("/api/mcp/servers/{id}")))
        .bearer_auth(&member)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(view["auth"]["connected"], true, "{view}");
    assert!(upstream.refreshes() >= 1, "refreshed ahead of expiry");
    assert_eq!(
        upstream.refusals(),
        0,
        "no request was sent with an expiring token"
    );
}
