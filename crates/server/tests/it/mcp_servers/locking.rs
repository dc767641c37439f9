//! Optimistic locking of `PATCH /api/mcp/servers/{id}` over HTTP: every change names the
//! version it was made against — without one it is refused (422), with a stale one it is
//! refused (409) — so two editors cannot silently overwrite each other.

use crate::support::error_of;
use crate::support::{json_of, send, start_with_registry, test_config};
use serde_json::json;

const VERSION_REQUIRED: &str = "version is required: send the version you read with GET";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_change_must_name_the_version_it_was_made_against() {
    let server = start_with_registry(test_config()).await;
    let token = server.owner_token.clone();
    // Inactive, so no background sync touches the row while the test edits it.
    let created = json_of(
        send(
            &server,
            "POST",
            "/api/mcp/servers",
            &token,
            Some(json!({
                "name": "remote",
                "transport": "streamable_http",
                "url": "https://mcp.example.com/mcp",
                "is_active": false,
            })),
        )
        .await,
        201,
    )
    .await;
    let path = format!("/api/mcp/servers/{}", created["id"].as_str().unwrap());
    let read_version = created["version"].as_i64().unwrap();

    // No version, or a null one: refused, nothing changes.
    for body in [
        json!({"timeout_ms": 5000}),
        json!({"version": null, "timeout_ms": 5000}),
    ] {
        let response = send(&server, "PATCH", &path, &token, Some(body.clone())).await;
        assert_eq!(response.status(), 422, "{body}");
        let (code, message) = error_of(response).await;
        assert_eq!(
            (code.as_str(), message.as_str()),
            ("invalid_request", VERSION_REQUIRED)
        );
    }
    // Even a change that would be refused for another reason first asks for the version.
    let response = send(
        &server,
        "PATCH",
        &path,
        &token,
        Some(json!({"name": "bad name"})),
    )
    .await;
    assert_eq!(error_of(response).await.1, VERSION_REQUIRED);
    let unchanged = json_of(send(&server, "GET", &path, &token, None).await, 200).await;
    assert_eq!(unchanged["version"].as_i64(), Some(read_version));
    assert_eq!(unchanged["timeout_ms"], created["timeout_ms"]);

    // Two editors read the same version; the first change wins, the second is told to reload.
    let first = json_of(
        send(
            &server,
            "PATCH",
            &path,
            &token,
            Some(json!({"version": read_version, "timeout_ms": 5000})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(first["version"].as_i64(), Some(read_version + 1));
    assert_eq!(first["timeout_ms"], 5000);
    let second = send(
        &server,
        "PATCH",
        &path,
        &token,
        Some(json!({"version": read_version, "timeout_ms": 9000})),
    )
    .await;
    assert_eq!(second.status(), 409);
    let (code, message) = error_of(second).await;
    assert_eq!(code, "conflict");
    assert!(
        message.contains(&format!("since version {read_version}"))
            && message.contains(&format!("at version {}", read_version + 1)),
        "{message}"
    );
    let after = json_of(send(&server, "GET", &path, &token, None).await, 200).await;
    assert_eq!(
        (after["version"].as_i64(), after["timeout_ms"].as_u64()),
        (Some(read_version + 1), Some(5000))
    );
}
