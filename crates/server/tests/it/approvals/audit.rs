//! The audit log end to end: every call, decision, connection and configuration change leaves
//! a row an admin can filter and page — and no secret reaches it.

use crate::support::approvals::*;
use crate::support::json_body;
use reqwest::Method;
use serde_json::json;
use std::time::Duration;
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::fake_openai::{ScriptedReply, ScriptedToolCall};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_log_records_every_call_and_decision_without_secrets() {
    let (fake, server, everything) = start(ApprovalConfig {
        timeout_ms: Some(400),
        ..ApprovalConfig::default()
    })
    .await;
    let with_secret = |id: &str| {
        ScriptedToolCall::new(
            id,
            "everything__echo",
            json!({"message": "hi", "apiKey": SECRET, "auth": {"password": SECRET}, "token": SECRET}),
        )
    };
    // Approved once, denied, timed out.
    for (call, decision) in [
        ("call_ok", Some("approve")),
        ("call_no", Some("deny")),
        ("call_late", None),
    ] {
        fake.enqueue(ScriptedReply::tool_calls(&[with_secret(call)]));
        fake.enqueue(ScriptedReply::text(&["next"]));
        let mut stream = server.ask(&server.alice, "echo").await;
        let (asked, _) = until_approval(&mut stream).await;
        assert_eq!(
            asked["arguments"]["apiKey"], SECRET,
            "the person deciding sees the arguments"
        );
        if let Some(decision) = decision {
            server
                .decide(&server.alice, &asked["approval_id"], decision, "once")
                .await;
        }
        stream.until_done().await;
    }
    // Always allow, always deny.
    server.set_policy(&everything, "echo", "ALWAYS_ALLOW").await;
    fake.enqueue(ScriptedReply::tool_calls(&[with_secret("call_policy_ok")]));
    fake.enqueue(ScriptedReply::text(&["next"]));
    server.ask(&server.alice, "echo").await.until_done().await;
    server.set_policy(&everything, "echo", "ALWAYS_DENY").await;
    fake.enqueue(ScriptedReply::tool_calls(&[with_secret("call_policy_no")]));
    fake.enqueue(ScriptedReply::text(&["next"]));
    server.ask(&server.alice, "echo").await.until_done().await;
    // The call rows are written when the calls finish; give the last one a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;

    let calls = server.audit("action=tool_call.&limit=50").await;
    let by_decider: Vec<(String, String, String)> = calls
        .iter()
        .rev()
        .map(|entry| {
            (
                entry["status"].as_str().unwrap().to_owned(),
                entry["decision"].as_str().unwrap().to_owned(),
                entry["decided_by"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let alice = server.alice.id.as_str().to_owned();
    assert_eq!(
        by_decider,
        vec![
            ("completed".into(), "approved".into(), alice.clone()),
            ("denied".into(), "denied".into(), alice.clone()),
            ("denied".into(), "denied".into(), "timeout".into()),
            (
                "completed".into(),
                "approved".into(),
                "policy:workspace".into()
            ),
            ("denied".into(), "denied".into(), "policy:workspace".into()),
        ]
    );
    for entry in &calls {
        assert_eq!(entry["server_name"], "everything");
        assert_eq!(entry["tool_name"], "echo");
        assert_eq!(entry["user_id"], alice.as_str());
        assert!(entry["conversation_id"].is_string());
        assert_eq!(entry["details"]["arguments"]["message"], "hi");
        assert_eq!(entry["details"]["arguments"]["apiKey"], "[REDACTED]");
    }
    let completed = &calls[1];
    assert!(completed["duration_ms"].is_i64(), "{completed}");
    assert!(completed["details"]["result_bytes"].as_u64().unwrap() > 0);

    // Filters: by status, user, tool, server, time.
    assert_eq!(
        server
            .audit("action=tool_call.&status=completed")
            .await
            .len(),
        2
    );
    assert_eq!(
        server
            .audit(&format!("action=tool_call.&status=denied&user={alice}"))
            .await
            .len(),
        3
    );
    assert!(server.audit("tool=nope").await.is_empty());
    assert!(server.audit("server=everything&status=expired").await.len() == 1);
    let future = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
    assert!(
        server
            .audit(&format!("from={}", urlencode(&future)))
            .await
            .is_empty()
    );
    // Paging: one entry at a time follows the cursor to the same rows.
    let (_, first) = server
        .send(
            &server.admin,
            Method::GET,
            "/api/audit?action=tool_call.&limit=2",
            None,
        )
        .await;
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let (_, second) = server
        .send(
            &server.admin,
            Method::GET,
            &format!("/api/audit?action=tool_call.&limit=2&cursor={cursor}"),
            None,
        )
        .await;
    assert_eq!(second["entries"][0]["id"], calls[2]["id"]);
    // The session to the upstream was audited when it connected.
    let connected = server
        .audit("action=server.connect&server=everything")
        .await;
    assert!(!connected.is_empty());
    assert!(connected[0]["details"]["protocol_version"].is_string());
    // Approvals and the policy changes are there too; only admins read the log.
    assert_eq!(server.audit("action=approval.approved").await.len(), 1);
    assert_eq!(server.audit("action=policy.set").await.len(), 2);
    let (status, _) = server
        .send(&server.alice, Method::GET, "/api/audit", None)
        .await;
    assert_eq!(status, 403);

    // No secret anywhere in the log.
    let (_, everything_logged) = server
        .send(&server.admin, Method::GET, "/api/audit?limit=500", None)
        .await;
    let text = everything_logged.to_string();
    assert!(text.contains("[REDACTED]"));
    assert!(
        !text.contains(SECRET),
        "a secret reached the audit log: {text}"
    );
}

fn urlencode(text: &str) -> String {
    text.replace('+', "%2B").replace(':', "%3A")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_changes_are_audited_without_their_secrets() {
    let (_fake, server, everything) = start(ApprovalConfig::default()).await;
    let admin = &server.admin;
    // A server with credentials: names are recorded, values never.
    let (status, created) = server
        .send(
            admin,
            Method::POST,
            "/api/mcp/servers",
            Some(json!({
                "name": "remote",
                "transport": "streamable_http",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"X-Upstream-Auth": SECRET},
                "api_key": SECRET,
            })),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let remote = created["id"].as_str().unwrap().to_owned();
    let (status, body) = server
        .send(
            admin,
            Method::PATCH,
            &format!("/api/mcp/servers/{remote}"),
            Some(json!({"version": created["version"], "is_active": false})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = server
        .send(
            admin,
            Method::DELETE,
            &format!("/api/mcp/servers/{remote}"),
            None,
        )
        .await;
    assert_eq!(status, 204);
    // A tool switched off, a token issued and revoked, a bud created and deleted.
    let (status, body) = server
        .send(
            admin,
            Method::POST,
            &format!("/api/mcp/servers/{everything}/sync"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = server
        .send(
            admin,
            Method::PATCH,
            &format!("/api/mcp/servers/{everything}/tools/echo"),
            Some(json!({"is_enabled": false})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, token) = server
        .send(
            admin,
            Method::POST,
            "/api/tokens",
            Some(json!({"name": "ci", "scopes": ["chat:use"]})),
        )
        .await;
    assert_eq!(status, 201, "{token}");
    let plaintext = token["plaintext"].as_str().unwrap().to_owned();
    let (status, _) = server
        .send(
            admin,
            Method::DELETE,
            &format!("/api/tokens/{}", token["token"]["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(status, 200);
    let (status, bud) = server
        .send(
            admin,
            Method::POST,
            "/api/buds",
            Some(json!({"name": "Researcher", "system_prompt": "Be brief."})),
        )
        .await;
    assert_eq!(status, 201, "{bud}");
    let (status, _) = server
        .send(
            admin,
            Method::DELETE,
            &format!("/api/buds/{}", bud["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(status, 204);

    let changes: Vec<String> = server
        .audit("status=changed&limit=100")
        .await
        .iter()
        .rev()
        .map(|entry| entry["action"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        changes,
        vec![
            "server.created",
            "server.updated",
            "server.deleted",
            "tool.disabled",
            "token.created",
            "token.revoked",
            "bud.created",
            "bud.deleted",
        ]
    );
    let created = &server.audit("action=server.created").await[0];
    assert_eq!(created["actor"], server.admin.id.as_str());
    assert_eq!(created["server_name"], "remote");
    assert_eq!(
        created["details"]["header_names"],
        json!(["X-Upstream-Auth"])
    );
    assert_eq!(created["details"]["bearer_key_configured"], true);
    let (_, everything_logged) = server
        .send(admin, Method::GET, "/api/audit?limit=500", None)
        .await;
    let text = everything_logged.to_string();
    assert!(
        !text.contains(SECRET),
        "a server secret reached the audit log"
    );
    assert!(!text.contains(&plaintext), "a token reached the audit log");
}

/// Following `next_cursor` ends on the last entry: a page that happens to be exactly full is
/// not followed by a cursor to an empty page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_paging_stops_at_the_last_entry() {
    let server = crate::support::TestServer::start().await;
    for name in ["one", "two", "three", "four"] {
        let created = server
            .client
            .post(server.url("/api/tokens"))
            .bearer_auth(&server.owner_token)
            .json(&json!({"name": name, "scopes": ["chat:use"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201);
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(cursor) => format!("/api/audit?action=token.created&limit=2&cursor={cursor}"),
            None => "/api/audit?action=token.created&limit=2".to_owned(),
        };
        let page: serde_json::Value = json_body(server.get(&path, &server.owner_token)).await;
        let entries = page["entries"].as_array().unwrap();
        assert!(!entries.is_empty(), "a cursor led to an empty page");
        seen.extend(entries.iter().map(|entry| entry["details"]["name"].clone()));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(
        seen,
        [json!("four"), json!("three"), json!("two"), json!("one")]
    );
}

/// Malformed filters are refused with a message naming the parameter and what it takes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_audit_filters_are_refused_naming_the_parameter() {
    let server = crate::support::TestServer::start().await;
    for (query, expected) in [
        ("from=2026-11-22", "`from`"),
        ("to=now", "`to`"),
        ("cursor=-5", "cursor"),
        ("cursor=abc", "cursor"),
    ] {
        let response = server
            .get(&format!("/api/audit?{query}"), &server.owner_token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 422, "{query}");
        let (code, message) = crate::support::error_of(response).await;
        assert_eq!(code, "invalid_request", "{query}");
        assert!(message.contains(expected), "{query}: {message}");
        if !query.starts_with("cursor") {
            assert!(message.contains("RFC 3339"), "{query}: {message}");
        }
    }
}
