//! The input of a call to a tool with an MCP App while the model writes it: a scripted model
//! streams the arguments of our hostile fixture app's `probe` slowly, and the answer's stream
//! carries `tool_input_partial` events — growing objects, each a part of the final input, an
//! open string value closed where it stood — all before the call's `mcp_tool` `started`,
//! which has the whole input. A tool without an app (the kg's) gets none.

use super::apps::hostile_app_stdio;
use crate::support::chat::{ChatOptions, ChatServer, of_type};
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_tools_input_streams_as_partial_objects_before_the_call_starts() {
    let fake = FakeOpenAi::start().await;
    let input = json!({"title": "Quarterly report for the northern region", "rows": [1, 2, 3, 4]});
    fake.enqueue(ScriptedReply::slow_tool_call(
        &ScriptedToolCall::new("call_probe", "hostile-app__probe", input.clone()),
        8,
        Duration::from_millis(150),
    ));
    fake.enqueue(ScriptedReply::text(&["Done."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server.register_server(hostile_app_stdio()).await;
    let events = server.ask_and_wait(json!({"message": "probe"})).await;

    let started_at = events
        .iter()
        .position(|event| event["type"] == "mcp_tool" && event["status"] == "started")
        .unwrap_or_else(|| panic!("no started event: {events:#?}"));
    let partial_at: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, event)| event["type"] == "tool_input_partial")
        .map(|(at, _)| at)
        .collect();
    assert!(partial_at.len() >= 3, "{events:#?}");
    assert!(partial_at.iter().all(|at| *at < started_at));
    let partials = of_type(&events, "tool_input_partial");
    let mut previous_size = 0;
    for partial in &partials {
        assert_eq!(partial["call_id"], "call_probe");
        assert_eq!(partial["index"], 0);
        assert_eq!(partial["server"], "hostile-app");
        assert_eq!(partial["tool"], "probe");
        assert_eq!(partial["app"]["resource_uri"], "ui://hostile/probe.html");
        let arguments = partial["arguments"].as_object().unwrap();
        assert!(!arguments.is_empty());
        // Each is the final input cut short: a title that begins it, rows that begin its rows.
        if let Some(title) = arguments.get("title") {
            let title = title.as_str().unwrap();
            assert!(
                input["title"].as_str().unwrap().starts_with(title),
                "{partial}"
            );
        }
        if let Some(Value::Array(rows)) = arguments.get("rows") {
            assert_eq!(rows[..], input["rows"].as_array().unwrap()[..rows.len()]);
        }
        let size = partial["arguments"].to_string().len();
        assert!(size > previous_size, "not growing: {partials:#?}");
        previous_size = size;
    }
    // The title showed while it was still being written.
    assert!(
        partials.iter().any(|partial| partial["arguments"]["title"]
            .as_str()
            .is_some_and(|title| title.len() < input["title"].as_str().unwrap().len())),
        "{partials:#?}"
    );
    assert_eq!(events[started_at]["arguments"], input);

    // The app the events name can be loaded before the call exists, by whoever may read the
    // conversation, at the hash the events named.
    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let app = &partials[0]["app"];
    let preview = app_preview(&server, &server.token, conversation_id, app).await;
    assert_eq!(preview.status(), 200);
    let page: Value = preview.json().await.unwrap();
    assert!(
        page["sandbox_url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("http://{}/sandbox/", server.apps_address)),
        "{page:#}"
    );
    assert_eq!(page["resource_sha256"], app["resource_sha256"]);
    let html = reqwest::get(page["sandbox_url"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(html.status(), 200);
    let member = crate::support::chat::member_token(&server, "mallory", "chat:use").await;
    let refused = app_preview(&server, &member, conversation_id, app).await;
    assert_eq!(refused.status(), 404, "someone else's conversation");
    let mut changed = app.clone();
    changed["resource_sha256"] = json!("0".repeat(64));
    let stale = app_preview(&server, &server.token, conversation_id, &changed).await;
    assert_eq!(stale.status(), 409);
    let mut unknown = app.clone();
    unknown["resource_uri"] = json!("ui://hostile/other.html");
    let missing = app_preview(&server, &server.token, conversation_id, &unknown).await;
    assert_eq!(missing.status(), 404);
    // Without the app's parameters: 400 naming what is missing (404 for anyone else).
    let bare = format!("/chat/conversations/{conversation_id}/app-preview");
    for (token, expected) in [(&server.token, 400), (&member, 404)] {
        let response = server
            .client
            .get(server.url(&bare))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), expected);
        if expected == 400 {
            assert!(response.text().await.unwrap().contains("server_id"));
        }
    }
}

async fn app_preview(
    server: &ChatServer,
    token: &str,
    conversation_id: &str,
    app: &Value,
) -> reqwest::Response {
    let url = reqwest::Url::parse_with_params(
        &server.url(&format!(
            "/chat/conversations/{conversation_id}/app-preview"
        )),
        [
            ("server_id", app["server_id"].as_str().unwrap()),
            ("resource_uri", app["resource_uri"].as_str().unwrap()),
            ("resource_sha256", app["resource_sha256"].as_str().unwrap()),
        ],
    )
    .unwrap();
    server
        .client
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_without_an_app_streams_no_partial_input() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::slow_tool_call(
        &ScriptedToolCall::new("call_type", "kg__type_info", json!({"type_name": "Team"})),
        4,
        Duration::from_millis(120),
    ));
    fake.enqueue(ScriptedReply::text(&["Done."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    let events = server.ask_and_wait(json!({"message": "team?"})).await;
    assert!(
        of_type(&events, "mcp_tool")
            .iter()
            .any(|event| event["status"] == "completed"),
        "{events:#?}"
    );
    assert!(of_type(&events, "tool_input_partial").is_empty());
}
