//! A per-user OAuth server used end to end through the HTTP API, against a real
//! OAuth-protected MCP server we did not write (`interop::OAuthProtectedServer`, the TypeScript
//! SDK's example with its demo authorization server): the admin registers it with auth `oauth`
//! `per_user`; the owner connects (authorize → the authorization server's redirects followed
//! headlessly → our callback), then lists its tools, tries one and runs a chat turn that calls
//! it as themselves; a member who has not connected gets `auth_required` and nothing of the
//! owner's; the owner's view says connected with scopes and expiry; after Disconnect the owner
//! must sign in again. The access token never appears in API answers, the audit, the stored
//! conversation or the logs, nor any token the connection holds in the database's files.

use super::log_capture::LogCapture;
use crate::support::chat::{ChatOptions, ChatServer, SseReader, member_token, of_type};
use crate::support::holds_in_any_form;
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_core::{ServerId, UserId};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::interop::OAuthProtectedServer;

async fn send_as(
    server: &ChatServer,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (reqwest::StatusCode, String) {
    let mut request = server
        .client
        .request(method, server.url(path))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    (response.status(), response.text().await.unwrap())
}

async fn ask_as(server: &ChatServer, token: &str, message: &str) -> Vec<Value> {
    let response = server
        .client
        .post(server.url("/chat/stream"))
        .bearer_auth(token)
        .json(&json!({"message": message}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    SseReader::new(response).until_done().await
}

/// `POST …/oauth/authorize` as `token`, the authorization server's redirects followed as a
/// browser would (the demo server consents at once) up to our redirect URI, whose query is then
/// handed to our own `/oauth/callback`; returns the UI's hash query it redirects to.
async fn connect(server: &ChatServer, token: &str, server_id: &str) -> String {
    let (status, body) = send_as(
        server,
        token,
        Method::POST,
        &format!("/api/mcp/servers/{server_id}/oauth/authorize"),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    let mut next = url::Url::parse(body["authorization_url"].as_str().unwrap()).unwrap();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for _ in 0..10 {
        if next.path() == "/oauth/callback" {
            let answer = browser
                .get(server.url(&format!("/oauth/callback?{}", next.query().unwrap())))
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 303);
            return answer.headers()["location"].to_str().unwrap().to_owned();
        }
        let response = browser.get(next.clone()).send().await.unwrap();
        assert!(
            response.status().is_redirection(),
            "{next} answered {}",
            response.status()
        );
        let location = response.headers()["location"].to_str().unwrap().to_owned();
        next = next.join(&location).unwrap();
    }
    panic!("the authorization server never sent the browser back to the redirect URI");
}

/// The owner's stored token response (access and refresh token), read from the store, where
/// alone its tokens may be.
async fn stored_token_response(server: &ChatServer, server_id: &str, user: &UserId) -> Value {
    let record = server
        .store
        .load_oauth_credentials(
            &server.workspace_id,
            &ServerId::from(server_id.to_owned()),
            Some(user),
        )
        .await
        .unwrap()
        .expect("the owner's connection is stored");
    record.credentials.payload["credentials"]["token_response"].clone()
}

fn auth_required_for<'a>(events: &'a [Value], server: &str) -> Option<&'a Value> {
    of_type(events, "auth_required")
        .into_iter()
        .find(|event| event["server"] == server)
}

fn offers_tools_of(events: &[Value], server: &str) -> bool {
    of_type(events, "meta")[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|tool| tool["server"] == server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_connects_their_own_account_and_their_calls_carry_their_token_only() {
    let logs = LogCapture::install();
    let peer = OAuthProtectedServer::start();
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_greet",
        "protected__greet",
        json!({"name": "Ada"}),
    )]));
    fake.enqueue(ScriptedReply::text(&["It greeted Ada."]));
    fake.enqueue(ScriptedReply::text(&["I cannot reach it for you."]));
    fake.enqueue(ScriptedReply::text(&["Sign in first."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    let owner = server.token.clone();
    let member = member_token(&server, "bob", "chat:use servers:read servers:write").await;
    let (status, created) = send_as(
        &server,
        &owner,
        Method::POST,
        "/api/mcp/servers",
        Some(json!({
            "name": "protected",
            "transport": "streamable_http",
            "url": peer.mcp_url(),
            "auth": {"mode": "oauth", "credential_scope": "per_user"},
        })),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = serde_json::from_str::<Value>(&created).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut answers = vec![created];

    // Before connecting, the owner too is asked to sign in.
    let (status, body) = send_as(
        &server,
        &owner,
        Method::POST,
        &format!("/api/mcp/servers/{id}/sync"),
        None,
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("needs_auth"), "{body}");

    let ui = connect(&server, &owner, &id).await;
    assert!(ui.contains("oauth=connected"), "{ui}");
    let me: Value = serde_json::from_str(
        &send_as(&server, &owner, Method::GET, "/api/me", None)
            .await
            .1,
    )
    .unwrap();
    let owner_id = UserId::from(me["user_id"].as_str().unwrap().to_owned());
    let token_response = stored_token_response(&server, &id, &owner_id).await;
    let access_token = token_response["access_token"].as_str().unwrap().to_owned();
    let stored_tokens: Vec<String> = ["access_token", "refresh_token"]
        .into_iter()
        .filter_map(|field| token_response[field].as_str().map(str::to_owned))
        .collect();

    // The owner lists the tools as themselves and tries one.
    let (status, synced) = send_as(
        &server,
        &owner,
        Method::POST,
        &format!("/api/mcp/servers/{id}/sync"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{synced}");
    let (status, capabilities) = send_as(
        &server,
        &owner,
        Method::GET,
        &format!("/api/mcp/servers/{id}/capabilities"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{capabilities}");
    assert!(capabilities.contains("\"greet\""), "{capabilities}");
    let (status, tried) = send_as(
        &server,
        &owner,
        Method::POST,
        &format!("/api/mcp/servers/{id}/tools/greet/call"),
        Some(json!({"arguments": {"name": "Ada"}})),
    )
    .await;
    assert_eq!(status, 200, "{tried}");
    assert!(tried.contains("Ada"), "{tried}");
    answers.extend([synced, capabilities, tried]);

    // A chat turn calls it as the owner.
    let owner_turn = ask_as(&server, &owner, "greet Ada").await;
    let calls = of_type(&owner_turn, "mcp_tool");
    assert!(
        calls.iter().any(|event| event["server"] == "protected"
            && event["tool"] == "greet"
            && event["status"] == "completed"),
        "{owner_turn:#?}"
    );
    assert!(auth_required_for(&owner_turn, "protected").is_none());
    let conversation_id = owner_turn[0]["conversation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    answers.push(serde_json::to_string(&owner_turn).unwrap());

    // The database's files hold the connection sealed: no token in plaintext or hex.
    let raw = server.raw_database_bytes();
    assert!(
        holds_in_any_form(&raw, &peer.mcp_url()),
        "the raw read sees plain columns"
    );
    for token in &stored_tokens {
        assert!(
            !holds_in_any_form(&raw, token),
            "an OAuth token is in the database's files unsealed"
        );
    }

    // The member has not connected: told to, with a URL of their own, and offered nothing.
    let member_turn = ask_as(&server, &member, "greet Ada").await;
    let announced =
        auth_required_for(&member_turn, "protected").unwrap_or_else(|| panic!("{member_turn:#?}"));
    assert_eq!(announced["code"], "needs_auth");
    assert!(
        announced["authorization_url"]
            .as_str()
            .is_some_and(|url| url.contains("/authorize?")),
        "{announced}"
    );
    assert!(
        !offers_tools_of(&member_turn, "protected"),
        "{member_turn:#?}"
    );
    assert!(of_type(&member_turn, "mcp_tool").is_empty());
    let (status, body) = send_as(
        &server,
        &member,
        Method::POST,
        &format!("/api/mcp/servers/{id}/tools/greet/call"),
        Some(json!({"arguments": {"name": "Bob"}})),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("needs_auth"), "{body}");
    let (status, member_view) = send_as(
        &server,
        &member,
        Method::GET,
        &format!("/api/mcp/servers/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let member_view: Value = serde_json::from_str(&member_view).unwrap();
    assert_eq!(member_view["auth"]["connected"], false, "{member_view}");
    assert_eq!(member_view["sync_status"], "needs_auth", "{member_view}");
    // Nor does the member see the owner's session (their user id, their errors).
    let member_sessions = member_view["sessions"].as_array().unwrap();
    assert!(
        member_sessions.iter().all(|s| s["scope"]["kind"] != "user"),
        "{member_view}"
    );
    answers.push(serde_json::to_string(&member_turn).unwrap());

    // The owner's view: connected, with the granted scopes and the expiry.
    let (status, owner_view) = send_as(
        &server,
        &owner,
        Method::GET,
        &format!("/api/mcp/servers/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let view: Value = serde_json::from_str(&owner_view).unwrap();
    assert_eq!(view["auth"]["mode"], "oauth", "{view}");
    assert_eq!(view["auth"]["credential_scope"], "per_user", "{view}");
    assert_eq!(view["auth"]["connected"], true, "{view}");
    assert_eq!(view["sync_status"], "synced", "{view}");
    assert_eq!(view["auth"]["scopes"], json!(["mcp:tools"]), "{view}");
    assert!(view["auth"]["expires_at"].is_string(), "{view}");
    let own_sessions = view["sessions"].as_array().unwrap();
    assert!(
        own_sessions.iter().any(|s| s["scope"]["kind"] == "user"),
        "the owner sees their own session: {view}"
    );
    answers.push(owner_view);

    // Disconnected: the owner must sign in again.
    let (status, body) = send_as(
        &server,
        &owner,
        Method::DELETE,
        &format!("/api/mcp/servers/{id}/oauth"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = send_as(
        &server,
        &owner,
        Method::POST,
        &format!("/api/mcp/servers/{id}/tools/greet/call"),
        Some(json!({"arguments": {"name": "Ada"}})),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    let again = ask_as(&server, &owner, "greet Ada again").await;
    assert!(
        auth_required_for(&again, "protected").is_some(),
        "{again:#?}"
    );
    assert!(!offers_tools_of(&again, "protected"), "{again:#?}");

    for path in [
        format!("/chat/conversations/{conversation_id}"),
        "/api/mcp/servers".to_owned(),
        format!("/api/mcp/servers/{id}"),
        format!("/api/mcp/servers/{id}/capabilities"),
        "/api/audit".to_owned(),
    ] {
        answers.push(send_as(&server, &owner, Method::GET, &path, None).await.1);
    }
    let stored = server.stored_messages(&conversation_id).await;
    answers.push(format!("{stored:?}"));
    answers.push(format!("{:?}", fake.requests()));
    let logged = logs.text();
    assert!(!logged.is_empty());
    answers.push(logged);
    for answer in &answers {
        assert!(
            !answer.contains(&access_token),
            "the access token leaked: {answer}"
        );
    }
}
