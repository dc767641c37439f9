//! "Try a tool" respects the tool's switch: a switched-off tool is refused with 409 naming
//! `is_enabled`, unless an admin asks for it with `force: true` (403 for anyone else).

use crate::support::error_of;
use crate::support::{json_of, send, start_with_registry, test_config};
use serde_json::json;
use std::time::{Duration, Instant};
use switchboard_test_support::interop::everything_js;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switched_off_tool_is_tried_only_when_an_admin_forces_it() {
    let server = start_with_registry(test_config()).await;
    let admin = server.owner_token.clone();
    let created = json_of(
        send(
            &server,
            "POST",
            "/api/mcp/servers",
            &admin,
            Some(
                json!({"name": "everything", "transport": "stdio", "command": "node",
                        "args": [everything_js(), "stdio"]}),
            ),
        )
        .await,
        201,
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let view = json_of(
            send(
                &server,
                "GET",
                &format!("/api/mcp/servers/{id}"),
                &admin,
                None,
            )
            .await,
            200,
        )
        .await;
        if view["sync_status"] == "synced" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let switched = json_of(
        send(
            &server,
            "PATCH",
            &format!("/api/mcp/servers/{id}/tools/get-sum"),
            &admin,
            Some(json!({"is_enabled": false})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(switched["is_enabled"], false);
    let call_path = format!("/api/mcp/servers/{id}/tools/get-sum/call");
    let arguments = json!({"a": 20, "b": 22});

    let refused = send(
        &server,
        "POST",
        &call_path,
        &admin,
        Some(json!({"arguments": arguments})),
    )
    .await;
    assert_eq!(refused.status(), 409);
    let (code, message) = error_of(refused).await;
    assert_eq!(code, "conflict");
    assert!(message.contains("is_enabled"), "{message}");
    assert!(message.contains("get-sum"), "{message}");

    let created_token = json_of(
        send(
            &server,
            "POST",
            "/api/tokens",
            &admin,
            Some(json!({"name": "operator", "scopes": ["servers:read", "servers:write"]})),
        )
        .await,
        201,
    )
    .await;
    let operator = created_token["plaintext"].as_str().unwrap().to_owned();
    let forbidden = send(
        &server,
        "POST",
        &call_path,
        &operator,
        Some(json!({"arguments": arguments, "force": true})),
    )
    .await;
    assert_eq!(forbidden.status(), 403);
    let not_forced = send(
        &server,
        "POST",
        &call_path,
        &operator,
        Some(json!({"arguments": arguments})),
    )
    .await;
    assert_eq!(not_forced.status(), 409);

    let forced = json_of(
        send(
            &server,
            "POST",
            &call_path,
            &admin,
            Some(json!({"arguments": arguments, "force": true})),
        )
        .await,
        200,
    )
    .await;
    let text = forced["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("42"), "{forced}");
}
