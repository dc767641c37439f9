//! `switchboard servers …` against a running instance: register server-everything (stdio),
//! list, show, test, sync, switch a tool off, call a tool, read JSON, remove.

use crate::process::{ADMIN_TOKEN, Service, run_cli, stdout_of};
use serde_json::Value;
use std::path::Path;
use switchboard_test_support::interop::{everything_js, free_port};

fn servers(data_dir: &Path, service: &Service, args: &[&str]) -> std::process::Output {
    let mut full = vec![
        "servers",
        "--api-url",
        &service.base_url,
        "--token",
        ADMIN_TOKEN,
    ];
    full.extend_from_slice(args);
    run_cli(data_dir, &full)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_command_manages_a_running_instance() {
    let data_dir = tempfile::tempdir().unwrap();
    let service = Service::start(data_dir.path());
    let dir = data_dir.path();
    let script = everything_js();

    let added = stdout_of(&servers(
        dir,
        &service,
        &[
            "add",
            "everything",
            "--command",
            "node",
            "--init-timeout-ms",
            "20000",
            "--",
            &script,
            "stdio",
        ],
    ));
    assert!(
        added.contains("everything") && added.contains("stdio"),
        "{added}"
    );

    let tested = stdout_of(&servers(dir, &service, &["test", "everything"]));
    assert!(
        tested.starts_with("connected to mcp-servers/everything"),
        "{tested}"
    );
    let synced = stdout_of(&servers(dir, &service, &["sync", "everything"]));
    assert!(synced.starts_with("synced:"), "{synced}");

    let listed = stdout_of(&servers(dir, &service, &["list"]));
    let header = listed.lines().next().unwrap();
    assert!(
        header.starts_with("NAME") && header.contains("STATUS") && header.contains("TOOLS"),
        "{listed}"
    );
    assert!(
        listed
            .lines()
            .any(|line| line.starts_with("everything") && line.contains("synced")),
        "{listed}"
    );

    let tools = stdout_of(&servers(
        dir,
        &service,
        &["tools", "everything", "--disable", "echo"],
    ));
    assert!(
        tools
            .lines()
            .any(|line| line.starts_with("echo") && line.contains(" no ")),
        "{tools}"
    );

    let called = stdout_of(&servers(
        dir,
        &service,
        &[
            "call",
            "everything",
            "get-sum",
            "--args",
            r#"{"a": 40, "b": 2}"#,
        ],
    ));
    assert!(called.contains("42"), "{called}");
    let refused = servers(
        dir,
        &service,
        &[
            "call",
            "everything",
            "get-sum",
            "--args",
            r#"{"a": "forty"}"#,
        ],
    );
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(
        message.contains("invalid_arguments") && message.contains("/a"),
        "{message}"
    );

    let json: Value = serde_json::from_str(&stdout_of(&servers(
        dir,
        &service,
        &["show", "everything", "--json"],
    )))
    .unwrap();
    assert_eq!(json["name"], "everything");
    assert_eq!(json["sync_status"], "synced");
    assert_eq!(json["init_timeout_ms"], 20000);
    let shown = stdout_of(&servers(dir, &service, &["show", "everything"]));
    assert!(
        shown
            .lines()
            .any(|line| line.starts_with("init_ms") && line.ends_with("20000")),
        "{shown}"
    );

    // A failure reads as a sentence naming where and why, not as a Rust type.
    let unreachable = format!("http://127.0.0.1:{}/mcp", free_port());
    stdout_of(&servers(
        dir,
        &service,
        &["add", "gone", "--url", &unreachable],
    ));
    let failed = servers(dir, &service, &["test", "gone"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&failed.stdout),
        String::from_utf8_lossy(&failed.stderr)
    );
    assert!(
        said.contains(&format!(
            "could not connect to {unreachable}: connection refused"
        )),
        "{said}"
    );
    assert!(!said.contains("::") && !said.contains("rmcp"), "{said}");
    stdout_of(&servers(dir, &service, &["remove", "gone"]));

    stdout_of(&servers(dir, &service, &["remove", "everything"]));
    let listed = stdout_of(&servers(dir, &service, &["list"]));
    assert!(
        !listed.lines().any(|line| line.starts_with("everything")),
        "{listed}"
    );

    let missing = servers(dir, &service, &["show", "nope"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no server named 'nope'"));
    let unauthenticated = run_cli(dir, &["servers", "--api-url", &service.base_url, "list"]);
    assert!(String::from_utf8_lossy(&unauthenticated.stderr).contains("no API token"));
}

/// `servers import` with a Claude Desktop file naming server-everything: the dry run says what
/// would happen and stores nothing; the import registers it, it syncs and its tools answer; a
/// second import skips it as a name conflict; a file that is not JSON fails with the API's 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_import_command_registers_a_client_configuration_file() {
    let data_dir = tempfile::tempdir().unwrap();
    let service = Service::start(data_dir.path());
    let dir = data_dir.path();
    let file = dir.join("claude_desktop_config.json");
    let config = serde_json::json!({"mcpServers": {"everything": {
        "command": "node",
        "args": [everything_js(), "stdio"],
        "env": {"EVERYTHING_TOKEN": "cli-import-canary"},
    }}});
    std::fs::write(&file, config.to_string()).unwrap();
    let path = file.to_str().unwrap();

    let preview = stdout_of(&servers(dir, &service, &["import", path, "--dry-run"]));
    assert!(
        preview.lines().any(|line| line.starts_with("everything")
            && line.contains("create")
            && line.contains("stdio")),
        "{preview}"
    );
    assert!(
        preview.contains("claude_desktop (detected): would create 1, change 0, skip 0"),
        "{preview}"
    );
    let listed = stdout_of(&servers(dir, &service, &["list"]));
    assert!(!listed.contains("everything"), "{listed}");

    let imported = stdout_of(&servers(dir, &service, &["import", path]));
    assert!(
        imported.contains("created 1, change 0, skip 0"),
        "{imported}"
    );
    assert!(!imported.contains("cli-import-canary"), "{imported}");
    let synced = stdout_of(&servers(dir, &service, &["sync", "everything"]));
    assert!(synced.starts_with("synced:"), "{synced}");
    let called = stdout_of(&servers(
        dir,
        &service,
        &[
            "call",
            "everything",
            "get-sum",
            "--args",
            r#"{"a": 40, "b": 2}"#,
        ],
    ));
    assert!(called.contains("42"), "{called}");

    let again: Value = serde_json::from_str(&stdout_of(&servers(
        dir,
        &service,
        &["import", path, "--json"],
    )))
    .unwrap();
    assert_eq!(again["entries"][0]["reason"], "name_conflict", "{again}");

    let exported: Value = serde_json::from_str(&stdout_of(&servers(
        dir,
        &service,
        &["export", "--format", "cursor"],
    )))
    .unwrap();
    assert_eq!(
        exported["mcpServers"]["everything"]["env"]["EVERYTHING_TOKEN"], "${env:EVERYTHING_TOKEN}",
        "{exported}"
    );

    std::fs::write(&file, "{\"mcpServers\": ").unwrap();
    let refused = servers(dir, &service, &["import", path]);
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(
        message.contains("400") && message.contains("not JSON"),
        "{message}"
    );
}
