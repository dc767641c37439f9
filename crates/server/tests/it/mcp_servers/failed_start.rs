//! A stdio server that exits at once: `/api/mcp/servers` says ERROR, sync failed and why as
//! soon as a start has failed — also while the background sync of the add still retries —
//! and shows a new attempt (Sync tools) as INITIALIZING / syncing again.

use crate::support::TestServer;
use crate::support::{json_of, send, start_with_registry, test_config};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Whether the failure is told as `connect_failed` or `init_failed`, and with the stderr line
/// or not, depends on how far the child got before it exited; the exit status is always told.
const EXIT_MESSAGE: &str = "exited with status 3";

async fn listed(server: &TestServer, token: &str) -> Value {
    let listed = json_of(
        send(server, "GET", "/api/mcp/servers", token, None).await,
        200,
    )
    .await;
    listed["servers"][0].clone()
}

/// Every view that knows of an error (stored or in a session) must say ERROR and a failed
/// sync, with the error.
fn assert_consistent(view: &Value) {
    let session_failed = view["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|session| session["state"] == "ERROR");
    if view["last_error"].is_null() && !session_failed {
        return;
    }
    assert_eq!(
        (&view["status"], &view["sync_status"]),
        (&json!("ERROR"), &json!("error")),
        "{view}"
    );
    assert!(
        view["last_error"].as_str().unwrap().contains(EXIT_MESSAGE),
        "{view}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_start_is_shown_as_error_at_once_and_a_new_attempt_as_starting() {
    let server = start_with_registry(test_config()).await;
    let token = server.owner_token.clone();
    let created = json_of(
        send(
            &server,
            "POST",
            "/api/mcp/servers",
            &token,
            Some(json!({
                "name": "broken", "transport": "stdio", "command": "sh",
                "args": ["-c", "echo no config file found >&2; exit 3"]
            })),
        )
        .await,
        201,
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    // The add starts the background sync, which retries the start with backoff.
    assert_eq!(created["sync_status"], "syncing", "{created}");

    // What the web UI does after an add: test the connection. It fails at once.
    let tested = json_of(
        send(
            &server,
            "POST",
            &format!("/api/mcp/servers/{id}/test"),
            &token,
            Some(json!({})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        (&tested["ok"], &tested["status"]),
        (&json!(false), &json!("ERROR")),
        "{tested}"
    );
    assert!(
        ["init_failed", "connect_failed"].contains(&tested["error"]["code"].as_str().unwrap()),
        "{tested}"
    );

    // Right after it (the background sync is still retrying its start), and until it ends.
    let view = listed(&server, &token).await;
    assert_eq!(view["status"], "ERROR", "{view}");
    assert_eq!(view["sync_status"], "error", "{view}");
    assert!(
        view["last_error"].as_str().unwrap().contains(EXIT_MESSAGE),
        "{view}"
    );
    let single = json_of(
        send(
            &server,
            "GET",
            &format!("/api/mcp/servers/{id}"),
            &token,
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        (&single["status"], &single["sync_status"]),
        (&json!("ERROR"), &json!("error")),
        "{single}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let view = listed(&server, &token).await;
        assert_consistent(&view);
        let sync_over = view["sessions"][0]["state"] == "ERROR";
        if sync_over || Instant::now() > deadline {
            assert!(sync_over, "the background sync never ended: {view}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    // A moment later everything has been recorded: still the same answer.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_consistent(&listed(&server, &token).await);

    // "Sync tools" starts afresh: shown as a new start while it runs, then ERROR again.
    let sync = {
        let client = server.client.clone();
        let url = server.url(&format!("/api/mcp/servers/{id}/sync"));
        let token = token.clone();
        tokio::spawn(async move {
            client
                .post(url)
                .bearer_auth(token)
                .json(&json!({}))
                .send()
                .await
                .unwrap()
        })
    };
    let mut seen_starting = false;
    while !sync.is_finished() {
        let view = listed(&server, &token).await;
        if view["status"] == "ERROR" {
            assert_consistent(&view);
        } else {
            // The errors were reset (IDLE) and the start begins again; the last error stays
            // in view as the previous outcome.
            assert_eq!(view["sync_status"], "syncing", "{view}");
            seen_starting |= view["status"] == "INITIALIZING";
        }
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    assert!(
        seen_starting,
        "the new start was never shown as INITIALIZING"
    );
    let response = sync.await.unwrap();
    assert_eq!(response.status(), 502);
    let view = listed(&server, &token).await;
    assert_consistent(&view);
    assert_eq!(view["status"], "ERROR", "{view}");
}
