//! An MCP App's own `tools/call` (`POST …/tool-calls/{id}/app/tool-calls`), with the real
//! approval gate: the app of our hostile fixture (`tests/apps/`) may call a tool of its own
//! server — its app-only `note`, never offered to the model — only after a person approves it,
//! and the call is audited with origin `app`; a tool of another server (by its own name or by
//! the chat's `server__tool` name) is refused without reaching anyone, and so is someone who
//! may not read the conversation.

use super::apps::hostile_app_stdio;
use crate::support::approvals::*;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::fake_openai::{ScriptedReply, ScriptedToolCall};

async fn pending_approval(server: &ApprovalServer, who: &Person) -> Value {
    for _ in 0..200 {
        let (status, body) = server.send(who, Method::GET, "/chat/approvals", None).await;
        assert_eq!(status, 200, "{body}");
        if let Some(first) = body["approvals"].as_array().and_then(|list| list.first()) {
            return first.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no approval was asked for");
}

/// An answer of Alice's that called the hostile fixture's `probe` (allowed by a policy), whose
/// app the tests then speak for.
struct ProbeShown {
    fake: switchboard_test_support::fake_openai::FakeOpenAi,
    server: ApprovalServer,
    hostile: switchboard_core::ServerId,
    /// The probe's `mcp_tool` event.
    probe: Value,
    conversation_id: String,
}

async fn probe_shown() -> ProbeShown {
    let (fake, server, _everything) = start(ApprovalConfig::default()).await;
    let hostile = server
        .store
        .create_server(&server.workspace_id, hostile_app_stdio())
        .await
        .unwrap()
        .id;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_probe",
        "hostile-app__probe",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["Probed."]));
    server.set_policy(&hostile, "probe", "ALWAYS_ALLOW").await;
    let events = server.ask(&server.alice, "probe").await.until_done().await;
    let probe = tool_events(&events, "completed")
        .into_iter()
        .find(|event| event["tool"] == "probe")
        .unwrap_or_else(|| panic!("{events:#?}"));
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    ProbeShown {
        probe: probe.clone(),
        fake,
        server,
        hostile,
        conversation_id,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_calls_its_own_servers_tool_through_the_gate_and_no_other_servers() {
    let ProbeShown {
        fake,
        server,
        probe,
        conversation_id,
        ..
    } = probe_shown().await;
    let path = format!(
        "/chat/conversations/{conversation_id}/tool-calls/{}/app/tool-calls",
        probe["tool_call_id"].as_str().unwrap()
    );
    // The app-only tool was never offered to the model.
    let offered = fake.requests()[0].body["tools"].to_string();
    assert!(offered.contains("hostile-app__probe") && !offered.contains("hostile-app__note"));

    // Another server's tool, by its own name or by the chat's name: refused, not recorded.
    for name in ["echo", "everything__echo", "no-such-tool"] {
        let (status, body) = server
            .send(
                &server.alice,
                Method::POST,
                &path,
                Some(json!({"name": name})),
            )
            .await;
        assert_eq!(status, 403, "{name}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("own server"),
            "{body}"
        );
    }
    // Someone who may not read the conversation.
    let (status, _) = server
        .send(
            &server.bob,
            Method::POST,
            &path,
            Some(json!({"name": "note"})),
        )
        .await;
    assert_eq!(status, 404);

    // Its own server's app-only tool: asked of the person (ASK_USER by default), then run.
    let call = {
        let client = server.client.clone();
        let url = server.url(&path);
        let token = server.alice.token.clone();
        tokio::spawn(async move {
            let response = client
                .post(url)
                .bearer_auth(token)
                .json(&json!({"name": "note", "arguments": {"text": "from the app"}}))
                .send()
                .await
                .unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        })
    };
    let approval = pending_approval(&server, &server.alice).await;
    assert_eq!(approval["tool"], "note", "{approval:#}");
    // It names the app that asked: the chat shows its card under that app.
    assert_eq!(approval["app_of"], probe["tool_call_id"], "{approval:#}");
    let (status, body) = server
        .decide(&server.alice, &approval["id"], "approve", "once")
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .expect("the call ends once approved")
        .unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["structuredContent"]["noted"], "from the app");

    // Audited with origin `app`, naming the call the app is shown with.
    let audited = server.audit("action=tool_call.").await;
    let app_rows: Vec<&Value> = audited
        .iter()
        .filter(|entry| entry["details"]["origin"] == "app")
        .collect();
    assert_eq!(app_rows.len(), 1, "{audited:#?}");
    assert_eq!(app_rows[0]["details"]["client_name"], probe["tool_call_id"]);
    assert!(
        app_rows[0]["target"].as_str().unwrap().ends_with("/note"),
        "{:#}",
        app_rows[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_reads_its_own_servers_resource_through_the_gate_and_reaches_no_other_server() {
    let ProbeShown {
        server,
        hostile,
        probe,
        conversation_id,
        ..
    } = probe_shown().await;
    let path = format!(
        "/chat/conversations/{conversation_id}/tool-calls/{}/app/resources/read",
        probe["tool_call_id"].as_str().unwrap()
    );
    let read = |uri: &'static str| {
        let client = server.client.clone();
        let url = server.url(&path);
        let token = server.alice.token.clone();
        tokio::spawn(async move {
            let response = client
                .post(url)
                .bearer_auth(token)
                .json(&json!({"uri": uri}))
                .send()
                .await
                .unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        })
    };

    // Someone who may not read the conversation: not found, nothing asked.
    let (status, _) = server
        .send(
            &server.bob,
            Method::POST,
            &path,
            Some(json!({"uri": "ui://hostile/probe.html"})),
        )
        .await;
    assert_eq!(status, 404);

    // Its own resource: asked of the person as the pseudo-tool `resources/read`, then read.
    let own = read("ui://hostile/probe.html");
    let approval = pending_approval(&server, &server.alice).await;
    assert_eq!(approval["tool"], "resources/read", "{approval:#}");
    assert_eq!(approval["app_of"], probe["tool_call_id"], "{approval:#}");
    assert!(
        approval.to_string().contains("ui://hostile/probe.html"),
        "{approval:#}"
    );
    let (status, body) = server
        .decide(&server.alice, &approval["id"], "approve", "always")
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = tokio::time::timeout(Duration::from_secs(20), own)
        .await
        .expect("the read ends once approved")
        .unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["contents"][0]["uri"],
        "ui://hostile/probe.html"
    );
    assert!(
        body["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Hostile probe")
    );

    // A resource of another server (everything's) goes to the app's own server only, which
    // has no such thing; remembered "always" means no second question.
    let (status, body) = tokio::time::timeout(
        Duration::from_secs(20),
        read("demo://resource/static/document/architecture.md"),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(status, 502, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no such resource"),
        "{body}"
    );

    // Both audited with origin `app`, as reads of the app's own server.
    let audited = server.audit("action=tool_call.").await;
    let reads: Vec<&Value> = audited
        .iter()
        .filter(|entry| entry["details"]["origin"] == "app")
        .collect();
    assert_eq!(reads.len(), 2, "{audited:#?}");
    for entry in reads {
        let target = entry["target"].as_str().unwrap();
        assert!(target.ends_with("/resources/read"), "{entry:#}");
        assert!(
            target.contains(hostile.as_str()) || target.contains("hostile-app"),
            "{entry:#}"
        );
        assert_eq!(entry["details"]["client_name"], probe["tool_call_id"]);
    }
}
