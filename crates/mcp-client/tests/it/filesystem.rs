//! `@modelcontextprotocol/server-filesystem` over stdio: reading, writing and listing inside an
//! allowed directory, and a refused path outside it coming back as a tool error.

use crate::support::{caller, client, context, filesystem_js, node, stdio_server};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_server_over_stdio() {
    let allowed = tempfile::tempdir().unwrap();
    let root = allowed.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "first line\nsecond line\n").unwrap();
    let client = client();
    let server = stdio_server(
        "files",
        &node(),
        &[filesystem_js().to_str().unwrap(), root.to_str().unwrap()],
    );

    let snapshot = client
        .fetch_capabilities(&server, &caller("carol"))
        .await
        .unwrap();
    let find = |name: &str| {
        snapshot
            .tools
            .iter()
            .find(|tool| tool.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .clone()
    };
    assert_eq!(
        snapshot.server.name.as_deref(),
        Some("secure-filesystem-server")
    );

    let read = client
        .call_tool(
            &server,
            &find("read_text_file"),
            json!({"path": root.join("notes.txt")}),
            &context("carol"),
        )
        .await
        .unwrap();
    assert!(!read.is_error);
    assert!(read.text_for_model().contains("second line"), "{read:?}");

    let written = client
        .call_tool(
            &server,
            &find("write_file"),
            json!({"path": root.join("out.txt"), "content": "written by switchboard"}),
            &context("carol"),
        )
        .await
        .unwrap();
    assert!(!written.is_error, "{written:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("out.txt")).unwrap(),
        "written by switchboard"
    );

    let listing = client
        .call_tool(
            &server,
            &find("list_directory"),
            json!({"path": root}),
            &context("carol"),
        )
        .await
        .unwrap();
    let text = listing.text_for_model();
    assert!(
        text.contains("notes.txt") && text.contains("out.txt"),
        "{text}"
    );

    let outside = client
        .call_tool(
            &server,
            &find("read_text_file"),
            json!({"path": "/etc/hostname"}),
            &context("carol"),
        )
        .await
        .unwrap();
    assert!(
        outside.is_error,
        "reading outside the allowed directory must fail: {outside:?}"
    );
    assert!(
        outside
            .text_for_model()
            .to_lowercase()
            .contains("access denied"),
        "{outside:?}"
    );
    client.shutdown().await;
}
