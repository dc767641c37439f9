//! The official MCP Inspector (CLI mode, a client we did not write) lists our tools and calls
//! them with a bearer token over Streamable HTTP.
//!
//! Needs `bash interop/install.sh` (the test command runs it); a missing Inspector fails.

use crate::{DATA_READER, TestServer};
use serde_json::Value;
use switchboard_test_support::interop::inspector_cli;

async fn inspector(server: &TestServer, arguments: &[&str]) -> Value {
    inspector_cli(&server.url(), DATA_READER, arguments).await
}

#[tokio::test]
async fn the_inspector_lists_and_calls_our_tools() {
    let server = TestServer::start().await;
    let listed = inspector(&server, &["--method", "tools/list"]).await;
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    // A data reader is offered the 11 read tools, not the two that need data:write.
    assert_eq!(names.len(), 11, "{names:?}");
    assert!(!names.contains(&"create_object"));
    assert!(names.contains(&"traverse") && names.contains(&"schema_changelog"));

    let count = inspector(
        &server,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "count_objects",
            "--tool-arg",
            "type=Document",
            "group_by=status",
        ],
    )
    .await;
    assert_eq!(count["structuredContent"]["total"], 12, "{count}");
    assert_eq!(
        count["structuredContent"]["groups"][0],
        serde_json::json!({"value": "published", "count": 5})
    );

    let path = inspector(
        &server,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "find_path",
            "--tool-arg",
            "from_id=doc-q4-okrs",
            "to_id=team-platform",
        ],
    )
    .await;
    assert_eq!(
        path["structuredContent"]["summary"],
        "Q4 OKRs -belongs_to-> Q4 Planning -owned_by-> Platform"
    );
}
