//! `@modelcontextprotocol/server-everything` over stdio, Streamable HTTP and legacy SSE: sync,
//! calls answering text, images, embedded resources, resource links, structured content and
//! isError, argument validation, progress, resources and prompts.

use crate::support::{
    caller, client, context, everything_http, everything_sse, everything_stdio, remote_server,
};
use serde_json::json;
use switchboard_core::{ToolDefinition, TransportKind};
use switchboard_mcp_client::{
    CallEvent, CapabilitySnapshot, McpClient, ToolContent, UpstreamError, UpstreamServer,
};
use tokio::sync::mpsc;

fn tool<'a>(snapshot: &'a CapabilitySnapshot, name: &str) -> &'a ToolDefinition {
    snapshot
        .tools
        .iter()
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no tool {name} in {:?}",
                snapshot
                    .tools
                    .iter()
                    .map(|tool| &tool.name)
                    .collect::<Vec<_>>()
            )
        })
}

async fn exercise(client: &McpClient, server: &UpstreamServer) {
    let snapshot = client
        .fetch_capabilities(server, &caller("alice"))
        .await
        .unwrap();
    assert_eq!(
        snapshot.server.name.as_deref(),
        Some("mcp-servers/everything")
    );
    assert!(
        snapshot.server.offers_tools
            && snapshot.server.offers_prompts
            && snapshot.server.offers_resources
    );
    assert!(snapshot.tools.len() >= 10, "{} tools", snapshot.tools.len());

    let echo = client
        .call_tool(
            server,
            tool(&snapshot, "echo"),
            json!({"message": "hello switchboard"}),
            &context("alice"),
        )
        .await
        .unwrap();
    assert!(!echo.is_error);
    assert!(
        echo.text_for_model().contains("hello switchboard"),
        "{echo:?}"
    );

    let sum = client
        .call_tool(
            server,
            tool(&snapshot, "get-sum"),
            json!({"a": 2, "b": 40}),
            &context("alice"),
        )
        .await
        .unwrap();
    assert!(sum.text_for_model().contains("42"), "{sum:?}");

    let invalid = client
        .call_tool(
            server,
            tool(&snapshot, "get-sum"),
            json!({"a": "two"}),
            &context("alice"),
        )
        .await
        .unwrap_err();
    let UpstreamError::InvalidArguments { details, .. } = &invalid else {
        panic!("{invalid:?}")
    };
    assert!(
        details.iter().any(|detail| detail.contains("/a")),
        "{details:?}"
    );

    let image = client
        .call_tool(
            server,
            tool(&snapshot, "get-tiny-image"),
            json!({}),
            &context("alice"),
        )
        .await
        .unwrap();
    assert!(image.content.iter().any(
        |block| matches!(block, ToolContent::Image { mime_type, .. } if mime_type == "image/png")
    ));

    let structured = client
        .call_tool(
            server,
            tool(&snapshot, "get-structured-content"),
            json!({"location": "Chicago"}),
            &context("alice"),
        )
        .await
        .unwrap();
    assert!(
        structured
            .structured_content
            .as_ref()
            .is_some_and(|value| value.get("temperature").is_some()),
        "{structured:?}"
    );

    let links = client
        .call_tool(
            server,
            tool(&snapshot, "get-resource-links"),
            json!({"count": 2}),
            &context("alice"),
        )
        .await
        .unwrap();
    assert!(
        links
            .content
            .iter()
            .any(|block| matches!(block, ToolContent::ResourceLink { .. })),
        "{links:?}"
    );

    let embedded = client
        .call_tool(
            server,
            tool(&snapshot, "get-resource-reference"),
            json!({"resourceType": "Blob", "resourceId": 3}),
            &context("alice"),
        )
        .await
        .unwrap();
    assert!(
        embedded.content.iter().any(|block| matches!(
            block,
            ToolContent::Resource { resource } if resource.uri.ends_with("/3") && resource.blob.is_some()
        )),
        "{embedded:?}"
    );
    // A tool that throws answers with isError: a result, not a failed call.
    let refused = client
        .call_tool(
            server,
            tool(&snapshot, "get-resource-reference"),
            json!({"resourceType": "Text", "resourceId": 0}),
            &context("alice"),
        )
        .await
        .unwrap();
    assert!(refused.is_error, "{refused:?}");
    assert!(
        refused.text_for_model().contains("Invalid resourceId"),
        "{refused:?}"
    );

    let (events, mut received) = mpsc::channel(32);
    let mut progress_context = context("alice");
    progress_context.events = Some(events);
    let long = client
        .call_tool(
            server,
            tool(&snapshot, "trigger-long-running-operation"),
            json!({"duration": 1, "steps": 4}),
            &progress_context,
        )
        .await
        .unwrap();
    assert!(long.text_for_model().contains("completed"), "{long:?}");
    let mut progress = Vec::new();
    // Notifications are dispatched concurrently with the answer: give stragglers a moment.
    while let Ok(Some(event)) =
        tokio::time::timeout(std::time::Duration::from_millis(300), received.recv()).await
    {
        if let CallEvent::Progress {
            progress: value,
            total,
            ..
        } = event
        {
            assert_eq!(total, Some(4.0));
            progress.push(value);
        }
    }
    assert_eq!(progress, vec![1.0, 2.0, 3.0, 4.0]);

    assert!(!snapshot.resources.is_empty());
    let first = &snapshot.resources[0];
    let contents = client
        .read_resource(server, &first.uri, &context("alice"))
        .await
        .unwrap();
    assert_eq!(contents[0].uri, first.uri);
    assert!(contents[0].text.is_some() || contents[0].blob.is_some());

    let prompt = client
        .get_prompt(
            server,
            "args-prompt",
            json!({"city": "Paris"}).as_object().unwrap().clone(),
            &context("alice"),
        )
        .await
        .unwrap();
    assert!(
        matches!(&prompt.messages[0].content, ToolContent::Text { text } if text.contains("Paris")),
        "{prompt:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio() {
    let client = client();
    let server = everything_stdio("everything");
    exercise(&client, &server).await;
    let statuses = client.session_statuses(&server.id);
    assert_eq!(statuses.len(), 1, "one shared session for every call");
    assert!(statuses[0].process_id.is_some());
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http() {
    let peer = everything_http();
    let client = client();
    let server = remote_server(
        "everything",
        TransportKind::StreamableHttp,
        &format!("http://127.0.0.1:{}/mcp", peer.port),
    );
    exercise(&client, &server).await;
    assert!(client.remembered_protocol_version(&server).is_some());
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_legacy_sse() {
    let peer = everything_sse();
    let client = client();
    let server = remote_server(
        "everything",
        TransportKind::Sse,
        &format!("http://127.0.0.1:{}/sse", peer.port),
    );
    exercise(&client, &server).await;
    assert_eq!(
        client.session_statuses(&server.id)[0]
            .protocol_version
            .as_deref(),
        Some("2025-11-25")
    );
    client.shutdown().await;
}

/// Records elicitation requests and accepts them with the schema's defaults.
#[derive(Debug, Default)]
struct RecordingResponder {
    seen: std::sync::Mutex<Vec<switchboard_mcp_client::ElicitationRequest>>,
}

impl switchboard_mcp_client::ElicitationResponder for RecordingResponder {
    fn respond(
        &self,
        request: switchboard_mcp_client::ElicitationRequest,
    ) -> futures::future::BoxFuture<'static, switchboard_mcp_client::ElicitationResponse> {
        self.seen.lock().unwrap().push(request.clone());
        switchboard_mcp_client::AcceptSchemaDefaults.respond(request)
    }
}

async fn elicitation_names_the_conversation(server: UpstreamServer) {
    let responder = std::sync::Arc::new(RecordingResponder::default());
    let client = McpClient::builder(crate::support::quick_config())
        .elicitation(responder.clone())
        .build()
        .unwrap();
    let snapshot = client
        .fetch_capabilities(&server, &caller("alice"))
        .await
        .unwrap();
    let mut call_context = context("alice");
    call_context.caller.conversation_id = Some("conversation-9".into());
    let result = client
        .call_tool(
            &server,
            tool(&snapshot, "trigger-elicitation-request"),
            json!({}),
            &call_context,
        )
        .await
        .unwrap();
    assert!(!result.is_error, "{result:?}");
    let seen = responder.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].server_name, "everything");
    assert_eq!(
        seen[0].conversation_id.as_ref().map(|id| id.as_str()),
        Some("conversation-9")
    );
    assert!(seen[0].requested_schema["properties"].is_object());
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_requests_name_the_conversation_over_stdio_and_http() {
    elicitation_names_the_conversation(everything_stdio("everything")).await;
    let peer = everything_http();
    let server = remote_server(
        "everything",
        TransportKind::StreamableHttp,
        &format!("http://127.0.0.1:{}/mcp", peer.port),
    );
    elicitation_names_the_conversation(server).await;
}
