//! The WebSocket transport against a WebSocket MCP server written here (rmcp's server over
//! tokio-tungstenite, answering with no subprotocol): the 2026-07-28 `server/discover` path,
//! paginated tools, the API key header, refused credentials, an oversized answer, and `wss://`
//! through a TLS front (tests/fixtures/tls_proxy.py) whose certificate is verified; and the
//! Python SDK's own WebSocket server (tests/fixtures/websocket_server.py, subprotocol `mcp`).

use crate::support::{
    Peer, caller, context, fixture, free_port, init_tracing, python, quick_config, remote_server,
};
use futures::{SinkExt, StreamExt};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::json;
use switchboard_core::TransportKind;
use switchboard_mcp_client::{
    McpClient, McpClientConfig, RemoteEndpoint, UpstreamEndpoint, UpstreamError,
};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

const TOKEN: &str = "ws-secret";
const TOOL_COUNT: usize = 7;

#[derive(Clone)]
struct WebSocketFixture;

impl ServerHandler for WebSocketFixture {
    fn get_info(&self) -> ServerConfig {
        serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "websocket-fixture", "version": "1.0.0"}
        }))
        .unwrap()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start: usize = request
            .and_then(|request| request.cursor)
            .map(|cursor| cursor.parse().unwrap())
            .unwrap_or(0);
        let end = (start + 3).min(TOOL_COUNT);
        let tools: Vec<Tool> = (start..end)
            .map(|index| {
                let name = if index == 0 { "echo".to_owned() } else if index == 1 { "huge".to_owned() } else { format!("tool_{index}") };
                serde_json::from_value(json!({
                    "name": name,
                    "description": format!("fixture tool {index}"),
                    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}, "size": {"type": "integer"}}}
                }))
                .unwrap()
            })
            .collect();
        let next_cursor = (end < TOOL_COUNT).then(|| end.to_string());
        Ok(serde_json::from_value(json!({"tools": tools, "nextCursor": next_cursor})).unwrap())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let text = match request.name.as_ref() {
            "echo" => arguments
                .get("text")
                .and_then(|text| text.as_str())
                .unwrap_or_default()
                .to_owned(),
            "huge" => "z".repeat(
                arguments
                    .get("size")
                    .and_then(|size| size.as_u64())
                    .unwrap_or(0) as usize,
            ),
            other => format!("called {other}"),
        };
        let result: CallToolResult =
            serde_json::from_value(json!({"content": [{"type": "text", "text": text}]})).unwrap();
        Ok(CallToolResponse::Complete(result))
    }
}

/// Serves the fixture on a loopback port; the upgrade requires `Authorization: Bearer TOKEN`.
async fn start_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                // The handshake callback's signature is tungstenite's, large error and all.
                #[allow(clippy::result_large_err)]
                let check =
                    |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
                        let authorized = request
                            .headers()
                            .get("authorization")
                            .is_some_and(|value| value == format!("Bearer {TOKEN}").as_str());
                        if authorized {
                            Ok(response)
                        } else {
                            let mut refusal = ErrorResponse::new(Some("missing token".into()));
                            *refusal.status_mut() = http::StatusCode::UNAUTHORIZED;
                            Err(refusal)
                        }
                    };
                let Ok(socket) = tokio_tungstenite::accept_hdr_async(tcp, check).await else {
                    return;
                };
                let (sink, stream) = socket.split();
                let stream = stream.filter_map(|frame| async move {
                    match frame {
                        Ok(Message::Text(text)) => {
                            serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(text.as_str()).ok()
                        }
                        _ => None,
                    }
                });
                let sink = sink.with(|message: TxJsonRpcMessage<RoleServer>| async move {
                    Ok::<_, WsError>(Message::text(serde_json::to_string(&message).unwrap()))
                });
                if let Ok(running) = WebSocketFixture
                    .serve((Box::pin(sink), Box::pin(stream)))
                    .await
                {
                    let _ = running.waiting().await;
                }
            });
        }
    });
    port
}

fn ws_server(port: u16, token: Option<&str>) -> switchboard_mcp_client::UpstreamServer {
    let mut server = remote_server(
        "ws",
        TransportKind::Websocket,
        &format!("ws://127.0.0.1:{port}/mcp"),
    );
    if let UpstreamEndpoint::Remote(RemoteEndpoint { api_key, .. }) = &mut server.endpoint {
        *api_key = token.map(str::to_owned);
    }
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_transport_end_to_end() {
    init_tracing();
    let port = start_server().await;
    let config = McpClientConfig {
        max_tool_response_bytes: 64 * 1024,
        ..quick_config()
    };
    let client = McpClient::new(config).unwrap();
    let server = ws_server(port, Some(TOKEN));

    let snapshot = client
        .fetch_capabilities(&server, &caller("dave"))
        .await
        .unwrap();
    assert_eq!(snapshot.tools.len(), TOOL_COUNT, "all pages");
    assert_eq!(snapshot.server.name.as_deref(), Some("websocket-fixture"));
    // rmcp's server speaks 2026-07-28: the probe found it, and later connects reuse it.
    assert_eq!(snapshot.server.protocol_version, "2026-07-28");
    assert_eq!(
        client.remembered_protocol_version(&server).as_deref(),
        Some("2026-07-28")
    );
    let find = |name: &str| {
        snapshot
            .tools
            .iter()
            .find(|tool| tool.name == name)
            .unwrap()
            .clone()
    };

    let echo = client
        .call_tool(
            &server,
            &find("echo"),
            json!({"text": "over websocket"}),
            &context("dave"),
        )
        .await
        .unwrap();
    assert_eq!(echo.text_for_model(), "over websocket");

    let fits = client
        .call_tool(
            &server,
            &find("huge"),
            json!({"size": 1000}),
            &context("dave"),
        )
        .await
        .unwrap();
    assert_eq!(fits.text_for_model().len(), 1000);
    let refused = client
        .call_tool(
            &server,
            &find("huge"),
            json!({"size": 200_000}),
            &context("dave"),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(refused, UpstreamError::ResponseTooLarge { limit: 65536 }),
        "{refused:?}"
    );
    // The oversized frame ended that connection; the next call gets a new one.
    let again = client
        .call_tool(
            &server,
            &find("echo"),
            json!({"text": "still here"}),
            &context("dave"),
        )
        .await
        .unwrap();
    assert_eq!(again.text_for_model(), "still here");
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_refused_credentials_mean_needs_auth() {
    let port = start_server().await;
    let client = McpClient::new(quick_config()).unwrap();
    let error = client
        .fetch_capabilities(&ws_server(port, Some("wrong")), &caller("dave"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "needs_auth", "{error}");
    let report = client
        .test_connection(&ws_server(port, Some(TOKEN)))
        .await
        .unwrap();
    assert_eq!(report.tool_count, TOOL_COUNT);
}

/// Where the child run of [`wss_with_a_trusted_authority`] finds the TLS front.
const WSS_URL_VARIABLE: &str = "SWITCHBOARD_TEST_WSS_URL";

fn wss_server(url: &str) -> switchboard_mcp_client::UpstreamServer {
    let mut server = remote_server("wss", TransportKind::Websocket, url);
    if let UpstreamEndpoint::Remote(RemoteEndpoint { api_key, .. }) = &mut server.endpoint {
        *api_key = Some(TOKEN.to_owned());
    }
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_over_tls_verifies_the_server_certificate() {
    let ws_port = start_server().await;
    let dir = tempfile::tempdir().unwrap();
    let authority = dir.path().join("ca.pem");
    let tls_port = free_port();
    let mut command = std::process::Command::new(python());
    command
        .arg(fixture("tls_proxy.py"))
        .arg(tls_port.to_string())
        .arg(ws_port.to_string())
        .arg(&authority);
    let _front = Peer::start(command, tls_port);
    let url = format!("wss://127.0.0.1:{tls_port}/mcp");

    // Signed by an authority nobody trusts: refused, and said so.
    let client = McpClient::new(quick_config()).unwrap();
    let error = client
        .fetch_capabilities(&wss_server(&url), &caller("dave"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "connect_failed", "{error}");
    assert!(
        error.to_string().contains(&url) && error.to_string().contains("certificate"),
        "{error}"
    );

    // Trusting the authority: the platform verifier reads SSL_CERT_FILE, and this process's
    // environment is not ours to change, so a child run of this test binary does the calls.
    let output = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "websocket::wss_with_a_trusted_authority",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("SSL_CERT_FILE", &authority)
        .env(WSS_URL_VARIABLE, &url)
        .output()
        .await
        .unwrap();
    let transcript = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() && transcript.contains("1 passed"),
        "{transcript}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by websocket_over_tls_verifies_the_server_certificate in a child process"]
async fn wss_with_a_trusted_authority() {
    let url = std::env::var(WSS_URL_VARIABLE)
        .expect("run by websocket_over_tls_verifies_the_server_certificate");
    let client = McpClient::new(quick_config()).unwrap();
    let server = wss_server(&url);
    let snapshot = client
        .fetch_capabilities(&server, &caller("dave"))
        .await
        .unwrap();
    assert_eq!(snapshot.tools.len(), TOOL_COUNT, "all pages over TLS");
    let echo = snapshot
        .tools
        .iter()
        .find(|tool| tool.name == "echo")
        .unwrap();
    let answer = client
        .call_tool(&server, echo, json!({"text": "over tls"}), &context("dave"))
        .await
        .unwrap();
    assert_eq!(answer.text_for_model(), "over tls");
    client.shutdown().await;
}

/// The Python SDK's WebSocket server (tests/fixtures/websocket_server.py) answers the upgrade
/// with the subprotocol `mcp` and refuses a client that does not ask for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_to_the_python_sdk_server_asks_for_the_mcp_subprotocol() {
    init_tracing();
    let port = free_port();
    let mut command = std::process::Command::new(python());
    command
        .arg(fixture("websocket_server.py"))
        .arg(port.to_string());
    let _peer = Peer::start(command, port);
    let client = McpClient::new(quick_config()).unwrap();
    let server = remote_server(
        "pyws",
        TransportKind::Websocket,
        &format!("ws://127.0.0.1:{port}/ws"),
    );
    let snapshot = client
        .fetch_capabilities(&server, &caller("dave"))
        .await
        .unwrap();
    assert_eq!(
        snapshot.server.name.as_deref(),
        Some("python-websocket-fixture")
    );
    let add = snapshot
        .tools
        .iter()
        .find(|tool| tool.name == "add")
        .unwrap();
    let sum = client
        .call_tool(&server, add, json!({"a": 2, "b": 3.5}), &context("dave"))
        .await
        .unwrap();
    assert_eq!(sum.text_for_model(), "5.5");
    client.shutdown().await;
}

/// A server answering with a subprotocol nobody asked for is refused with what to change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_subprotocol_mismatch_says_what_to_change() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                #[allow(clippy::result_large_err)]
                let answer =
                    |_: &Request, mut response: Response| -> Result<Response, ErrorResponse> {
                        response.headers_mut().insert(
                            "sec-websocket-protocol",
                            http::HeaderValue::from_static("graphql-ws"),
                        );
                        Ok(response)
                    };
                let _ = tokio_tungstenite::accept_hdr_async(tcp, answer).await;
            });
        }
    });
    let client = McpClient::new(quick_config()).unwrap();
    let error = client
        .fetch_capabilities(&ws_server(port, None), &caller("dave"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "connect_failed", "{error}");
    let message = error.to_string();
    assert!(
        message.contains("subprotocol") && message.contains("'mcp'"),
        "{message}"
    );
}
