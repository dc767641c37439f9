//! MCP Apps in a chat answer, against the official example server
//! `@modelcontextprotocol/server-basic-vanillajs` (software we did not write) and our hostile
//! fixture app (`tests/apps/hostile-app-server.mjs`, which declares a CSP): the `mcp_tool`
//! events of a call to a tool with a `ui://` resource name its app (server, URI, the hash read
//! at the sync), and the stored tool message keeps the same reference for the history; the API
//! hands the app of a call only to whoever may read the conversation, as a short-lived URL on
//! the apps origin (its own listener), which serves the stored HTML under exactly the policy
//! the resource declares and nothing else.

use crate::support::chat::{ChatOptions, ChatServer, of_type};
use serde_json::json;
use switchboard_core::{ToolMessageMetadata, TransportKind};
use switchboard_store::{NewServer, ServerConnectionConfig, ServerSecrets};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::interop::{interop, repo_root};

fn basic_app_stdio() -> NewServer {
    let entry =
        interop("apps/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
    NewServer {
        name: "basic-app".to_owned(),
        transport: TransportKind::Stdio,
        url: None,
        command: Some("node".to_owned()),
        args: vec![entry.to_str().unwrap().to_owned(), "--stdio".to_owned()],
        connection: ServerConnectionConfig::default(),
        secrets: ServerSecrets::default(),
        is_active: true,
    }
}

/// Our hostile fixture app's server (`tests/apps/`), over stdio.
pub fn hostile_app_stdio() -> NewServer {
    let script = repo_root().join("tests/apps/hostile-app-server.mjs");
    NewServer {
        name: "hostile-app".to_owned(),
        transport: TransportKind::Stdio,
        url: None,
        command: Some("node".to_owned()),
        args: vec![script.to_str().unwrap().to_owned()],
        connection: ServerConnectionConfig::default(),
        secrets: ServerSecrets::default(),
        is_active: true,
    }
}

/// A chat server with both app servers registered, and one answer that called both apps'
/// tools; returns the server, the conversation and the two calls' ids (probe, get-time).
async fn both_apps_called() -> (ChatServer, FakeOpenAi, String, String, String) {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[
        ScriptedToolCall::new("call_probe", "hostile-app__probe", json!({})),
        ScriptedToolCall::new("call_time", "basic-app__get-time", json!({})),
    ]));
    fake.enqueue(ScriptedReply::text(&["Done."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server.register_server(hostile_app_stdio()).await;
    server.register_server(basic_app_stdio()).await;
    let events = server
        .ask_and_wait(json!({"message": "probe and time"}))
        .await;
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    let call_of = |tool: &str| {
        of_type(&events, "mcp_tool")
            .iter()
            .find(|event| event["tool"] == tool && event["status"] == "completed")
            .unwrap_or_else(|| panic!("{tool} completed: {events:#?}"))["tool_call_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let probe = call_of("probe");
    let time = call_of("get-time");
    (server, fake, conversation_id, probe, time)
}

async fn app_of(
    server: &ChatServer,
    token: &str,
    conversation_id: &str,
    call: &str,
) -> reqwest::Response {
    server
        .client
        .get(server.url(&format!(
            "/chat/conversations/{conversation_id}/tool-calls/{call}/app"
        )))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_page_is_served_on_its_own_origin_under_exactly_the_policy_it_declares() {
    let (server, _fake, conversation_id, probe, time) = both_apps_called().await;
    let apps_origin = format!("http://{}", server.apps_address);
    assert_ne!(apps_origin, server.url(""));
    for (call, connect_src) in [
        (&probe, "connect-src https://allowed.invalid;"),
        (&time, "connect-src 'none';"),
    ] {
        let response = app_of(&server, &server.token, &conversation_id, call).await;
        assert_eq!(response.status(), 200);
        let app: serde_json::Value = response.json().await.unwrap();
        let sandbox_url = app["sandbox_url"].as_str().unwrap();
        assert!(
            sandbox_url.starts_with(&format!("{apps_origin}/sandbox/")),
            "{app:#}"
        );
        assert_eq!(app["sandbox_origin"], apps_origin.as_str());
        assert_eq!(app["state"], "completed");
        assert!(app["result"]["structuredContent"].is_object(), "{app:#}");

        // No token on the apps origin: the URL alone serves the page.
        let page = reqwest::get(sandbox_url).await.unwrap();
        assert_eq!(page.status(), 200);
        let headers = page.headers().clone();
        let policy = headers["content-security-policy"]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(
            policy, app["content_security_policy"],
            "the header is what the API says"
        );
        assert!(policy.contains(connect_src), "{policy}");
        assert!(policy.starts_with("default-src 'none';"), "{policy}");
        assert!(policy.contains("frame-src 'none';"), "{policy}");
        assert!(policy.ends_with("sandbox allow-scripts"), "{policy}");
        assert_eq!(headers["content-type"], "text/html; charset=utf-8");
        assert_eq!(headers["cache-control"], "no-store");
        assert_eq!(headers["referrer-policy"], "no-referrer");
        assert!(
            headers["permissions-policy"]
                .to_str()
                .unwrap()
                .contains("camera=()")
        );
        let html = page.text().await.unwrap();
        let stored = server
            .store
            .get_app_resource(
                &server.workspace_id,
                &switchboard_core::ServerId::from_string(app["server_id"].as_str().unwrap()),
                app["resource_uri"].as_str().unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(
            html, stored.html,
            "the page is the resource as stored at the sync"
        );

        // The ticket is sealed: changed by one character, it opens nothing; and the main
        // origin does not serve sandbox pages.
        let ticket = sandbox_url.rsplit('/').next().unwrap();
        let mut tampered = ticket.to_owned().into_bytes();
        let last = tampered.len() - 1;
        tampered[last] = if tampered[last] == b'0' { b'1' } else { b'0' };
        let tampered = String::from_utf8(tampered).unwrap();
        for refused in [
            format!("{apps_origin}/sandbox/{tampered}"),
            format!("{apps_origin}/sandbox/not-hex"),
            server.url(&format!("/sandbox/{ticket}")),
        ] {
            let status = reqwest::get(&refused).await.unwrap().status();
            assert_eq!(status, 404, "{refused}");
        }
    }
    // The apps origin serves nothing but sandbox pages: no UI, no API, no token taken.
    for path in [
        "/",
        "/index.html",
        "/chat/conversations",
        "/api/health",
        "/mcp",
    ] {
        let response = server
            .client
            .get(format!("{apps_origin}{path}"))
            .bearer_auth(&server.token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404, "{path}");
    }
    // The UI may frame the apps origin and nothing else.
    let ui = reqwest::get(server.url("/")).await.unwrap();
    let ui_policy = ui.headers()["content-security-policy"].to_str().unwrap();
    assert!(
        ui_policy.ends_with(&format!("; frame-src {apps_origin}")),
        "{ui_policy}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_of_a_call_is_only_for_whoever_may_read_the_conversation() {
    let (server, _fake, conversation_id, probe, _) = both_apps_called().await;
    let member = crate::support::chat::member_token(&server, "mallory", "chat:use").await;
    let response = app_of(&server, &member, &conversation_id, &probe).await;
    assert_eq!(response.status(), 404, "someone else's conversation");
    let body = response.text().await.unwrap();
    assert!(!body.contains("sandbox"), "{body}");
    // Her own conversation does not reach the call either.
    let own = server
        .client
        .post(server.url("/chat/conversations"))
        .bearer_auth(&member)
        .json(&json!({"title": "mine"}))
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), 201);
    let own_id = own.json::<serde_json::Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let response = app_of(&server, &member, &own_id, &probe).await;
    assert_eq!(response.status(), 404, "a call of another conversation");
    // Without a token, nothing.
    let anonymous = server
        .client
        .get(server.url(&format!(
            "/chat/conversations/{conversation_id}/tool-calls/{probe}/app"
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    // The owner gets it.
    assert_eq!(
        app_of(&server, &server.token, &conversation_id, &probe)
            .await
            .status(),
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_an_app_tool_names_its_app_in_the_events_and_the_stored_message() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_time",
        "basic-app__get-time",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["It is now."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    let server_id =
        switchboard_core::ServerId::from_string(server.register_server(basic_app_stdio()).await);

    let events = server
        .ask_and_wait(json!({"message": "what time is it"}))
        .await;
    let tool_events = of_type(&events, "mcp_tool");
    assert!(!tool_events.is_empty(), "{events:#?}");
    let tools = server
        .store
        .list_server_tools(&server.workspace_id, &server_id)
        .await
        .unwrap();
    let sha256 = tools[0]
        .meta
        .ui
        .as_ref()
        .unwrap()
        .resource_sha256
        .clone()
        .unwrap();
    for event in &tool_events {
        assert_eq!(
            event["app"],
            json!({
                "server_id": server_id.as_str(),
                "resource_uri": "ui://get-time/mcp-app.html",
                "resource_sha256": sha256,
            }),
            "{event:#}"
        );
    }
    assert_eq!(tool_events.last().unwrap()["status"], "completed");

    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let messages = server.stored_messages(conversation_id).await;
    let tool_message = messages
        .iter()
        .find(|message| message.role == switchboard_core::ChatRole::Tool)
        .unwrap();
    let metadata = ToolMessageMetadata::from_stored(&tool_message.metadata).unwrap();
    let app = metadata.app.expect("the stored message names the app");
    assert_eq!(app.resource_uri, "ui://get-time/mcp-app.html");
    assert_eq!(app.server_id, server_id);
}
