//! The official TypeScript and Python SDK clients (`interop/clients/gateway_client.*`, run as
//! processes of their own) through `/gateway/mcp` of a running Switchboard fronting
//! `server-everything`: each pages through the tools (pages of 4 here), calls
//! `everything__echo` (allowed by rule) and reads a resource by the URI the gateway listed.
//! What they list is what rmcp's client lists. The TypeScript client declaring elicitation
//! answers the approval form itself and hears the upstream's progress.

use super::wire::{connect, listed_names};
use crate::support::approvals::*;
use serde_json::Value;
use std::time::Duration;
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::interop::interop;

/// Runs one SDK client and returns the JSON line it printed.
async fn run_client(program: &str, script: &str, url: &str, token: &str, message: &str) -> Value {
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(program)
            .arg(interop(script))
            .args([url, token, message])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("{script} did not finish within 60 s"))
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{script} failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|error| panic!("{script} printed no JSON ({error}): {stdout}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_and_python_sdk_clients_list_call_and_read_through_the_gateway() {
    let (_fake, server, everything) = start_paged(ApprovalConfig::default(), 4).await;
    server.set_policy(&everything, "echo", "ALWAYS_ALLOW").await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    let rmcp = connect(&server, "/gateway/mcp", &carol.token).await;
    let expected = listed_names(&rmcp).await;
    assert!(expected.len() > 4, "several pages: {expected:?}");
    rmcp.cancel().await.unwrap();
    let url = server.url("/gateway/mcp");
    let python = interop(".venv/bin/python").to_string_lossy().into_owned();

    for (program, script, message) in [
        ("node", "clients/gateway_client.mjs", "from typescript"),
        (python.as_str(), "clients/gateway_client.py", "from python"),
    ] {
        let got = run_client(program, script, &url, &carol.token, message).await;
        assert_eq!(got["server"], "switchboard-gateway", "{script}: {got}");
        let tools: Vec<&str> = got["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|name| name.as_str().unwrap())
            .collect();
        assert_eq!(tools, expected, "{script}");
        assert_eq!(got["echoed"], format!("Echo: {message}"), "{script}");
        let first = got["resources"][0].as_str().unwrap();
        assert!(
            first.starts_with("switchboard://everything/demo://"),
            "{script}: {got}"
        );
        assert_eq!(got["read_uri"], first, "{script}: the URI round-trips");
    }
    let audited = server.audit("action=tool_call.").await;
    let clients: Vec<&str> = audited
        .iter()
        .filter(|entry| entry["details"]["origin"] == "gateway")
        .filter_map(|entry| entry["details"]["client_name"].as_str())
        .collect();
    for client in ["ts-sdk-gateway-client", "python-sdk-gateway-client"] {
        assert!(clients.contains(&client), "{clients:?}");
    }
}

/// The TypeScript SDK's client declaring elicitation: the gateway's approval form passes its
/// checks, its answer decides the call, and the upstream's progress reaches its callback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_clients_user_answers_the_approval_form() {
    let (_fake, server, _) = start(ApprovalConfig::default()).await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    let url = server.url("/gateway/mcp");
    let script = "clients/gateway_elicit_client.mjs";

    let got = run_client("node", script, &url, &carol.token, "approve").await;
    let asked = got["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "both calls are ASK_USER: {got}");
    assert_eq!(asked[0]["choices"], serde_json::json!(["approve", "deny"]));
    let message = asked[0]["message"].as_str().unwrap();
    assert!(
        message.contains("\"echo\"") && message.contains("\"asked\""),
        "{message}"
    );
    assert_eq!(got["echoed"], "Echo: asked", "{got}");
    assert_eq!(
        got["progress"],
        serde_json::json!([[1, 3], [2, 3], [3, 3]]),
        "{got}"
    );

    let got = run_client("node", script, &url, &carol.token, "deny").await;
    assert_eq!(got["echo_is_error"], true, "{got}");
    assert!(
        got["echoed"]
            .as_str()
            .is_some_and(|text| text.contains("denied this call in ts-sdk-eliciting-client")),
        "{got}"
    );
    assert_eq!(
        got["progress"],
        serde_json::json!([]),
        "refused, never run: {got}"
    );
}
