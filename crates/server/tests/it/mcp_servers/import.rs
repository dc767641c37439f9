//! `POST /api/mcp/servers/import` end to end: configuration files as each client documents
//! them (Claude Desktop, Claude Code, Cursor, VS Code with inputs, Windsurf) and bad ones
//! (unknown transport, a repeated name, a metadata address, malformed JSON), through the real
//! HTTP API with a real store: dry runs store nothing, secrets are stored encrypted and never
//! returned, references become user fields or are reported, a member cannot add stdio.

use crate::support::{TestServer, error_of, json_of, send, start_with_registry, test_config};
use serde_json::{Value, json};
use switchboard_core::ServerId;
use switchboard_store::{DEFAULT_WORKSPACE_NAME, UserRole};

const CLAUDE_DESKTOP: &str = r#"{
  "mcpServers": {
    "filesystem": {
      "command": "mcp-import-test-absent-program",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop"]
    },
    "github": {
      "command": "mcp-import-test-absent-program",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_desktop_canary_secret"}
    },
    "remote-notes": {
      "url": "http://127.0.0.1:9/mcp",
      "type": "http",
      "headers": {"Authorization": "Bearer desktop-header-canary"}
    }
  }
}"#;

const CLAUDE_CODE: &str = r#"{
  "mcpServers": {
    "api-server": {
      "type": "http",
      "url": "http://127.0.0.1:9/mcp",
      "headers": {"Authorization": "Bearer ${API_KEY}"}
    },
    "airtable": {
      "type": "stdio",
      "command": "mcp-import-test-absent-program",
      "args": ["-y", "airtable-mcp-server"],
      "env": {"AIRTABLE_API_KEY": "${AIRTABLE_API_KEY:-none}"}
    },
    "events": {"type": "sse", "url": "http://127.0.0.1:9/events"}
  }
}"#;

const CURSOR: &str = r#"{
  "mcpServers": {
    "server-name": {
      "url": "http://127.0.0.1:9/sse",
      "headers": {"API_KEY": "${env:MY_SERVICE_KEY}"}
    },
    "local": {
      "command": "mcp-import-test-absent-program",
      "args": ["${workspaceFolder}/server.py"],
      "env": {"API_KEY": "value"}
    }
  }
}"#;

const VSCODE: &str = r#"{
  // 💡 Inputs are prompted on first server start, then stored securely by VS Code.
  "inputs": [
    {
      "type": "promptString",
      "id": "perplexity-key",
      "description": "Perplexity API Key",
      "password": true
    }
  ],
  "servers": {
    // https://github.com/ppl-ai/modelcontextprotocol/
    "Perplexity": {
      "type": "stdio",
      "command": "mcp-import-test-absent-program",
      "args": ["-y", "server-perplexity-ask"],
      "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"},
      "envFile": "${workspaceFolder}/.env",
    },
    "fetch": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
  }
}"#;

const WINDSURF: &str = r#"{
  "mcpServers": {
    "figma": {
      "serverUrl": "http://127.0.0.1:9/mcp",
      "headers": {"Authorization": "Bearer ${env:FIGMA_TOKEN}"}
    },
    "github": {
      "command": "mcp-import-test-absent-program",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_PERSONAL_ACCESS_TOKEN>"},
      "disabled": true,
      "alwaysAllow": []
    }
  }
}"#;

async fn import(server: &TestServer, token: &str, body: Value) -> (u16, Value) {
    let response = send(server, "POST", "/api/mcp/servers/import", token, Some(body)).await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

async fn server_names(server: &TestServer) -> Vec<String> {
    let listed = json_of(
        send(server, "GET", "/api/mcp/servers", &server.owner_token, None).await,
        200,
    )
    .await;
    let mut names: Vec<String> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| server["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn entry<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["name"] == name)
        .unwrap_or_else(|| panic!("no entry {name} in {report}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_format_is_detected_and_a_dry_run_stores_nothing() {
    let server = start_with_registry(test_config()).await;
    let owner = server.owner_token.clone();
    let cases = [
        (CLAUDE_DESKTOP, "claude_desktop", 3),
        (CLAUDE_CODE, "claude_code", 3),
        (CURSOR, "cursor", 2),
        (VSCODE, "vscode", 2),
        (WINDSURF, "windsurf", 2),
    ];
    for (content, format, entries) in cases {
        let (status, report) = import(
            &server,
            &owner,
            json!({"content": content, "dry_run": true}),
        )
        .await;
        assert_eq!(status, 200, "{report}");
        assert_eq!(report["format"], format, "{report}");
        assert_eq!(report["format_detected"], true);
        assert_eq!(report["dry_run"], true);
        assert_eq!(report["created"], entries, "{report}");
        assert_eq!(report["skipped"], 0, "{report}");
        assert!(
            report["entries"]
                .as_array()
                .unwrap()
                .iter()
                .all(|entry| entry["server_id"].is_null())
        );
    }
    assert!(
        server_names(&server).await.is_empty(),
        "a dry run stores nothing"
    );

    // Transports, and references as the report shows them.
    let (_, code) = import(
        &server,
        &owner,
        json!({"content": CLAUDE_CODE, "dry_run": true}),
    )
    .await;
    assert_eq!(entry(&code, "api-server")["transport"], "streamable_http");
    assert_eq!(entry(&code, "events")["transport"], "sse");
    assert_eq!(
        entry(&code, "api-server")["user_fields"],
        json!(["API_KEY"])
    );
    let airtable = &entry(&code, "airtable")["references"][0];
    assert_eq!(airtable["outcome"], "user_field");
    assert!(
        airtable["note"].as_str().unwrap().contains("default"),
        "{airtable}"
    );
    let (_, cursor) = import(&server, &owner, json!({"content": CURSOR, "dry_run": true})).await;
    assert_eq!(entry(&cursor, "server-name")["transport"], "sse");
    let kept = &entry(&cursor, "local")["references"][0];
    assert_eq!(kept["location"], "args[0]");
    assert_eq!(kept["outcome"], "kept_as_text");
    let (_, vscode) = import(&server, &owner, json!({"content": VSCODE, "dry_run": true})).await;
    let perplexity = entry(&vscode, "Perplexity");
    assert_eq!(perplexity["user_fields"], json!(["PERPLEXITY_KEY"]));
    let outcomes: Vec<&Value> = perplexity["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|reference| &reference["outcome"])
        .collect();
    assert_eq!(
        outcomes,
        [&json!("user_field"), &json!("not_imported")],
        "{perplexity}"
    );
    let (_, windsurf) = import(
        &server,
        &owner,
        json!({"content": WINDSURF, "dry_run": true}),
    )
    .await;
    assert_eq!(
        entry(&windsurf, "github")["ignored_keys"],
        json!(["alwaysAllow"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_stores_secrets_encrypted_and_never_returns_them() {
    let server = start_with_registry(test_config()).await;
    let owner = server.owner_token.clone();
    let (status, report) = import(&server, &owner, json!({"content": CLAUDE_DESKTOP})).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["created"], 3, "{report}");
    let github = entry(&report, "github");
    assert_eq!(
        github["secrets"],
        json!(["env.GITHUB_PERSONAL_ACCESS_TOKEN"])
    );
    let id = ServerId::from(github["server_id"].as_str().unwrap().to_owned());
    assert_eq!(
        server_names(&server).await,
        ["filesystem", "github", "remote-notes"]
    );

    let listed = send(&server, "GET", "/api/mcp/servers", &owner, None)
        .await
        .text()
        .await
        .unwrap();
    for answer in [report.to_string(), listed.clone()] {
        assert!(
            !answer.contains("ghp_desktop_canary_secret")
                && !answer.contains("desktop-header-canary"),
            "a secret was returned: {answer}"
        );
    }
    assert!(listed.contains("GITHUB_PERSONAL_ACCESS_TOKEN"), "{listed}");
    let workspace = server
        .store
        .find_workspace_by_name(DEFAULT_WORKSPACE_NAME)
        .await
        .unwrap()
        .unwrap()
        .id;
    let secrets = server.store.server_secrets(&workspace, &id).await.unwrap();
    assert_eq!(
        secrets.env["GITHUB_PERSONAL_ACCESS_TOKEN"],
        "ghp_desktop_canary_secret"
    );

    // VS Code inputs become user fields each person fills in.
    let (status, report) = import(
        &server,
        &owner,
        json!({"content": VSCODE, "format": "vscode"}),
    )
    .await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["format_detected"], false);
    let id = entry(&report, "Perplexity")["server_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let view = json_of(
        send(
            &server,
            "GET",
            &format!("/api/mcp/servers/{id}"),
            &owner,
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        view["auth"]["user_fields"][0]["name"], "PERPLEXITY_KEY",
        "{view}"
    );
    assert_eq!(
        view["auth"]["user_fields"][0]["title"],
        "Perplexity API Key"
    );
    assert_eq!(view["auth"]["user_fields"][0]["secret"], true);
    let secrets = server
        .store
        .server_secrets(&workspace, &ServerId::from(id))
        .await
        .unwrap();
    assert_eq!(secrets.env["PERPLEXITY_API_KEY"], "{{user.PERPLEXITY_KEY}}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_entries_are_skipped_with_their_reason_and_replace_changes_on_request() {
    let server = start_with_registry(test_config()).await;
    let owner = server.owner_token.clone();
    let (status, _) = import(
        &server,
        &owner,
        json!({"content": r#"{"mcpServers": {"taken": {"url": "http://127.0.0.1:9/old"}}}"#}),
    )
    .await;
    assert_eq!(status, 200);
    let file = r#"{"mcpServers": {
        "grpc": {"type": "grpc", "url": "http://127.0.0.1:9/mcp"},
        "twice": {"url": "http://127.0.0.1:9/a"},
        "twice": {"url": "http://127.0.0.1:9/b"},
        "metadata": {"url": "http://169.254.169.254/latest/meta-data"},
        "taken": {"url": "http://127.0.0.1:9/new"},
        "bad env": {"command": "x", "env": {"LD_PRELOAD": "/tmp/evil.so"}},
        "good": {"url": "http://127.0.0.1:9/good"}
    }}"#;
    for dry_run in [true, false] {
        let (status, report) = import(
            &server,
            &owner,
            json!({"content": file, "dry_run": dry_run}),
        )
        .await;
        assert_eq!(status, 200, "{report}");
        let reason = |name: &str| entry(&report, name)["reason"].clone();
        assert_eq!(reason("grpc"), "unsupported_entry");
        assert!(
            entry(&report, "grpc")["message"]
                .as_str()
                .unwrap()
                .contains("grpc")
        );
        assert_eq!(report["entries"][1]["action"], "create");
        assert_eq!(report["entries"][2]["reason"], "duplicate_in_file");
        assert_eq!(reason("metadata"), "url_not_allowed");
        assert_eq!(reason("taken"), "name_conflict");
        assert_eq!(reason("bad-env"), "invalid");
        assert_eq!(entry(&report, "bad-env")["name_in_file"], "bad env");
        assert_eq!(entry(&report, "good")["action"], "create");
        assert_eq!(
            (report["created"].clone(), report["skipped"].clone()),
            (json!(2), json!(5))
        );
    }
    assert_eq!(server_names(&server).await, ["good", "taken", "twice"]);

    let (_, replaced) = import(
        &server,
        &owner,
        json!({
            "content": r#"{"mcpServers": {"taken": {"url": "http://127.0.0.1:9/new"}}}"#,
            "on_conflict": "replace",
        }),
    )
    .await;
    assert_eq!(entry(&replaced, "taken")["action"], "change", "{replaced}");
    let id = entry(&replaced, "taken")["server_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let view = json_of(
        send(
            &server,
            "GET",
            &format!("/api/mcp/servers/{id}"),
            &owner,
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(view["url"], "http://127.0.0.1:9/new");
    assert_eq!(view["version"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_cannot_import_a_stdio_server() {
    let server = start_with_registry(test_config()).await;
    let workspace = server
        .store
        .find_workspace_by_name(DEFAULT_WORKSPACE_NAME)
        .await
        .unwrap()
        .unwrap()
        .id;
    let (_, token) = crate::support::person_with_token(
        &server.store,
        &workspace,
        "member",
        UserRole::Member,
        "servers:read servers:write",
    )
    .await;
    let (status, report) = import(&server, &token, json!({"content": CLAUDE_DESKTOP})).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(entry(&report, "github")["reason"], "stdio_requires_admin");
    assert_eq!(
        entry(&report, "filesystem")["reason"],
        "stdio_requires_admin"
    );
    assert_eq!(entry(&report, "remote-notes")["action"], "create");
    assert_eq!(server_names(&server).await, ["remote-notes"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_files_are_a_precise_400() {
    let server = start_with_registry(test_config()).await;
    let owner = server.owner_token.clone();
    let cases = [
        (json!({"content": "{\"mcpServers\": {"}), "not JSON"),
        (json!({"content": "{\"tools\": {}}"}), "no server map"),
        (
            json!({"content": CLAUDE_DESKTOP, "format": "vscode"}),
            "`servers`",
        ),
    ];
    for (body, expected) in cases {
        let response = send(
            &server,
            "POST",
            "/api/mcp/servers/import",
            &owner,
            Some(body),
        )
        .await;
        assert_eq!(response.status(), 400);
        let (code, message) = error_of(response).await;
        assert_eq!(code, "bad_request");
        assert!(message.contains(expected), "{message}");
    }
    let response = send(
        &server,
        "POST",
        "/api/mcp/servers/import",
        &owner,
        Some(json!({"content": "{}", "format": "zed"})),
    )
    .await;
    assert!(
        matches!(response.status().as_u16(), 400 | 422),
        "{}",
        response.status()
    );
    assert!(server_names(&server).await.is_empty());
}
