//! `GET /api/mcp/servers/export` end to end: each format holds every server with placeholders
//! instead of secrets, and a round trip (export, then an import dry run on a fresh instance)
//! shows every server as `create`.

use crate::support::{error_of, json_of, send, start_with_registry, test_config};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_leaves_secrets_out_and_imports_back_as_creates() {
    let source = start_with_registry(test_config()).await;
    let owner = source.owner_token.clone();
    let file = r#"{"mcpServers": {
        "github": {"command": "mcp-export-test-absent-program", "args": ["-y", "server-github"],
                   "env": {"GITHUB_TOKEN": "ghp_export_canary"}},
        "notes": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                  "headers": {"Authorization": "Bearer export-header-canary"}},
        "events": {"type": "sse", "url": "http://127.0.0.1:9/events"}
    }}"#;
    let imported = json_of(
        send(
            &source,
            "POST",
            "/api/mcp/servers/import",
            &owner,
            Some(json!({"content": file})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(imported["created"], 3, "{imported}");

    let target = start_with_registry(test_config()).await;
    for (format, placeholder) in [
        ("claude_desktop", "<GITHUB_TOKEN>"),
        ("claude_code", "${GITHUB_TOKEN}"),
        ("cursor", "${env:GITHUB_TOKEN}"),
        ("vscode", "${input:github-github_token}"),
    ] {
        let exported = json_of(
            send(
                &source,
                "GET",
                &format!("/api/mcp/servers/export?format={format}"),
                &owner,
                None,
            )
            .await,
            200,
        )
        .await;
        let text = exported.to_string();
        assert!(
            !text.contains("ghp_export_canary") && !text.contains("export-header-canary"),
            "{format}: a secret left: {text}"
        );
        let servers = if format == "vscode" {
            assert_eq!(exported["inputs"][0]["password"], true, "{exported}");
            &exported["servers"]
        } else {
            &exported["mcpServers"]
        };
        assert_eq!(
            servers["github"]["env"]["GITHUB_TOKEN"], placeholder,
            "{exported}"
        );
        assert_eq!(servers["github"]["args"], json!(["-y", "server-github"]));
        assert_eq!(servers["notes"]["url"], "http://127.0.0.1:9/mcp");
        assert_eq!(servers["events"]["type"], "sse");

        let report = json_of(
            send(
                &target,
                "POST",
                "/api/mcp/servers/import",
                &target.owner_token,
                Some(json!({"content": text, "dry_run": true})),
            )
            .await,
            200,
        )
        .await;
        assert_eq!(report["format"], format, "{report}");
        assert_eq!(
            (report["created"].clone(), report["skipped"].clone()),
            (json!(3), json!(0)),
            "{report}"
        );
        let notes = report["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|entry| entry["name"] == "notes")
            .unwrap();
        assert_eq!(notes["transport"], "streamable_http");
    }

    let response = send(
        &source,
        "GET",
        "/api/mcp/servers/export?format=zed",
        &owner,
        None,
    )
    .await;
    assert_eq!(response.status(), 400);
    let response = send(&source, "GET", "/api/mcp/servers/export", &owner, None).await;
    assert_eq!(response.status(), 400);
    let (code, _) = error_of(response).await;
    assert_eq!(code, "bad_request");
}
