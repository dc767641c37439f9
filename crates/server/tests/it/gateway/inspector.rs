//! The official MCP Inspector (CLI mode, a client we did not write) lists and calls, through
//! `/gateway/mcp`, the tools of upstreams on every transport a team brings: `server-everything`
//! and `server-filesystem` over stdio, and the Python SDK's FastMCP server over Streamable HTTP
//! and over legacy HTTP+SSE. What it lists is exactly what rmcp's client lists, and each call's
//! answer comes from the right upstream.

use super::wire::{connect, listed_names};
use crate::support::approvals::*;
use crate::support::chat::remote_server;
use switchboard_approvals::ApprovalConfig;
use switchboard_core::TransportKind;
use switchboard_store::{NewServer, ServerConnectionConfig, ServerSecrets};
use switchboard_test_support::interop::{Peer, inspector_cli, interop};

/// `tools/call` of `tool` with `key=value` arguments; returns the result's first text.
async fn call(url: &str, token: &str, tool: &str, arguments: &[&str]) -> String {
    let mut command = vec!["--method", "tools/call", "--tool-name", tool];
    if !arguments.is_empty() {
        command.push("--tool-arg");
        command.extend_from_slice(arguments);
    }
    let result = inspector_cli(url, token, &command).await;
    assert_ne!(result["isError"], true, "{tool}: {result}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{tool} answered no text: {result}"))
        .to_owned()
}

fn stdio_server(name: &str, args: Vec<String>) -> NewServer {
    NewServer {
        name: name.to_owned(),
        transport: TransportKind::Stdio,
        url: None,
        command: Some("node".to_owned()),
        args,
        connection: ServerConnectionConfig::default(),
        secrets: ServerSecrets::default(),
        is_active: true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inspector_lists_and_calls_stdio_http_and_sse_upstreams_through_the_gateway() {
    // One page holds every tool: the Inspector's CLI lists the first page only.
    let (_fake, server, everything) = start_paged(ApprovalConfig::default(), 500).await;
    let files = tempfile::tempdir().unwrap();
    std::fs::write(files.path().join("notes.txt"), "written for the gateway").unwrap();
    let (http_peer, sse_peer) = (Peer::fastmcp("streamable-http"), Peer::fastmcp("sse"));
    let filesystem_js =
        interop("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let upstreams = [
        stdio_server(
            "files",
            vec![
                filesystem_js.to_string_lossy().into_owned(),
                files.path().to_string_lossy().into_owned(),
            ],
        ),
        remote_server("pyhttp", &http_peer.url()),
        NewServer {
            transport: TransportKind::Sse,
            ..remote_server("pysse", &format!("http://127.0.0.1:{}/sse", sse_peer.port))
        },
    ];
    let mut ids = vec![("everything", everything)];
    for upstream in upstreams {
        let name = upstream.name.clone();
        let record = server
            .store
            .create_server(&server.workspace_id, upstream)
            .await
            .unwrap();
        ids.push((if name == "files" { "files" } else { "py" }, record.id));
    }
    let allowed = [
        ("everything", "echo"),
        ("files", "read_text_file"),
        ("py", "add"),
    ];
    for (kind, id) in &ids {
        for (_, tool) in allowed.iter().filter(|(of, _)| of == kind) {
            server.set_policy(id, tool, "ALWAYS_ALLOW").await;
        }
    }
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    let url = server.url("/gateway/mcp");

    let listed = inspector_cli(&url, &carol.token, &["--method", "tools/list"]).await;
    let mut names: Vec<String> = listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {listed}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    let rmcp = connect(&server, "/gateway/mcp", &carol.token).await;
    let mut expected = listed_names(&rmcp).await;
    rmcp.cancel().await.unwrap();
    names.sort();
    expected.sort();
    assert_eq!(names, expected, "the Inspector lists what rmcp lists");
    for name in [
        "everything__echo",
        "files__read_text_file",
        "pyhttp__add",
        "pysse__add",
    ] {
        assert!(
            names.iter().any(|listed| listed == name),
            "{name}: {names:?}"
        );
    }

    let echoed = call(
        &url,
        &carol.token,
        "everything__echo",
        &["message=via stdio"],
    )
    .await;
    assert_eq!(echoed, "Echo: via stdio");
    let path = format!("path={}", files.path().join("notes.txt").display());
    let read = call(&url, &carol.token, "files__read_text_file", &[&path]).await;
    assert_eq!(read, "written for the gateway");
    for (tool, sum) in [("pyhttp__add", "5.0"), ("pysse__add", "5.0")] {
        assert_eq!(
            call(&url, &carol.token, tool, &["a=2", "b=3"]).await,
            sum,
            "{tool}"
        );
    }
}
