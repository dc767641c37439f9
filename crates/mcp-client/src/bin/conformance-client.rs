//! A client for the official MCP conformance suite (`conformance client --command …`), built on
//! this crate's public stack (`McpClient` over Streamable HTTP). The suite starts a mock server
//! per scenario, runs this program with the server URL as the last argument, and names the
//! scenario in `MCP_CONFORMANCE_SCENARIO`.
//!
//! Every scenario connects and lists tools; some then call a fixture tool:
//! `tools_call` → `add_numbers`, `elicitation-sep1034-client-defaults` →
//! `test_client_elicitation_defaults` (answered with the schema defaults), `sse-retry` →
//! `test_reconnection` (the answer arrives on a resumed stream).

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use switchboard_core::{ServerId, SessionScope, TransportKind, UserId, WorkspaceId};
use switchboard_mcp_client::{
    AcceptSchemaDefaults, CallContext, Caller, McpClient, McpClientConfig, RemoteEndpoint,
    UpstreamEndpoint, UpstreamServer,
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    tracing_subscriber_init();
    let Some(url) = std::env::args()
        .next_back()
        .filter(|argument| argument.starts_with("http"))
    else {
        eprintln!("usage: conformance-client <server-url>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&url, &scenario).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("scenario '{scenario}' failed: {error}");
            ExitCode::FAILURE
        }
    }
}

fn tracing_subscriber_init() {
    // Logs go to stderr only when asked for; the suite reads the exit code.
    if std::env::var_os("RUST_LOG").is_some() {
        eprintln!("RUST_LOG is set; this client does not install a log subscriber");
    }
}

async fn run(url: &str, scenario: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = McpClient::builder(McpClientConfig::default())
        .elicitation(Arc::new(AcceptSchemaDefaults))
        .build()?;
    let server = UpstreamServer {
        id: ServerId::from("conformance"),
        workspace_id: WorkspaceId::from("conformance"),
        name: "conformance".to_owned(),
        endpoint: UpstreamEndpoint::Remote(RemoteEndpoint {
            transport: TransportKind::StreamableHttp,
            url: url.parse()?,
            headers: BTreeMap::new(),
            api_key: None,
        }),
        session_scope: SessionScope::Shared,
        timeout_ms: None,
        init_timeout_ms: None,
        origin: switchboard_mcp_client::ServerOrigin::Registered,
    };
    let caller = Caller {
        user_id: UserId::from("conformance"),
        conversation_id: None,
    };
    let capabilities = client.fetch_capabilities(&server, &caller).await?;
    let call = |tool_name: &'static str, arguments: Value| {
        let client = client.clone();
        let server = server.clone();
        let caller = caller.clone();
        let tool = capabilities
            .tools
            .iter()
            .find(|tool| tool.name == tool_name)
            .cloned();
        async move {
            let tool = tool.ok_or_else(|| format!("the server lists no tool '{tool_name}'"))?;
            let result = client
                .call_tool(&server, &tool, arguments, &CallContext::new(caller))
                .await?;
            println!("{tool_name}: {}", result.text_for_model());
            Ok::<_, Box<dyn std::error::Error>>(())
        }
    };
    match scenario {
        "tools_call" => call("add_numbers", json!({"a": 5, "b": 3})).await?,
        "elicitation-sep1034-client-defaults" => {
            call("test_client_elicitation_defaults", json!({})).await?
        }
        "sse-retry" => call("test_reconnection", json!({})).await?,
        _ => {}
    }
    client.shutdown().await;
    Ok(())
}
