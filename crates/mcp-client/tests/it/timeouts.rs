//! Per-server timeouts and the call clock: a server's own `init_timeout_ms` (shorter or longer
//! than the configured default) bounds its session start; a call waiting on a person (the
//! upstream's `elicitation/create`) does not lose its timeout to a slow answer, while the hard
//! maximum still ends it.

use crate::faults::{misbehaving, tool};
use crate::support::{caller, context, everything_stdio, quick_config};
use futures::future::BoxFuture;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_mcp_client::{
    AcceptSchemaDefaults, ElicitationRequest, ElicitationResponder, ElicitationResponse, McpClient,
    McpClientConfig, UpstreamEndpoint, UpstreamError,
};

/// Answers every form with its defaults, after thinking for `delay` (a slow person).
#[derive(Debug)]
struct SlowPerson {
    delay: Duration,
}

impl ElicitationResponder for SlowPerson {
    fn respond(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationResponse> {
        let delay = self.delay;
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            AcceptSchemaDefaults.respond(request).await
        })
    }
}

fn named<'a>(
    snapshot: &'a switchboard_mcp_client::CapabilitySnapshot,
    name: &str,
) -> &'a switchboard_core::ToolDefinition {
    snapshot
        .tools
        .iter()
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

fn slow_init(
    name: &str,
    seconds: &str,
    init_timeout_ms: u64,
) -> switchboard_mcp_client::UpstreamServer {
    let mut server = misbehaving(name, "slow_init", &[]);
    if let UpstreamEndpoint::Stdio(command) = &mut server.endpoint {
        command.env.insert("SLOW_INIT_SECS".into(), seconds.into());
    }
    server.init_timeout_ms = Some(init_timeout_ms);
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_own_init_timeout_replaces_the_default() {
    // Default 15 s; this server allows 500 ms and answers initialize after 2 s.
    let client = McpClient::new(McpClientConfig {
        session_init_retries: 0,
        ..quick_config()
    })
    .unwrap();
    let impatient = slow_init("impatient", "2", 500);
    let started = Instant::now();
    let error = client
        .call_tool(&impatient, &tool("work"), json!({}), &context("ida"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, UpstreamError::InitTimeout { after, .. } if after == Duration::from_millis(500)),
        "{error:?}"
    );
    assert!(error.to_string().contains("within 500 ms"), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    client.shutdown().await;

    // Default 1 s; this server allows 6 s and answers after 1.5 s.
    let client = McpClient::new(McpClientConfig {
        session_init_timeout_secs: 1,
        session_init_retries: 0,
        ..quick_config()
    })
    .unwrap();
    let patient = slow_init("patient", "1.5", 6_000);
    let result = client
        .call_tool(&patient, &tool("work"), json!({}), &context("ida"))
        .await
        .unwrap();
    assert!(!result.is_error);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_person_does_not_cost_the_call_its_timeout() {
    let client = McpClient::builder(quick_config())
        .elicitation(Arc::new(SlowPerson {
            delay: Duration::from_millis(2_500),
        }))
        .build()
        .unwrap();
    let mut server = everything_stdio("everything");
    server.timeout_ms = Some(800);
    let snapshot = client
        .fetch_capabilities(&server, &caller("ida"))
        .await
        .unwrap();
    let elicit = named(&snapshot, "trigger-elicitation-request");
    let started = Instant::now();
    let result = client
        .call_tool(&server, elicit, json!({}), &context("ida"))
        .await
        .unwrap();
    assert!(!result.is_error, "{}", result.text_for_model());
    assert!(started.elapsed() >= Duration::from_millis(2_500));
    // The person's 2.5 s are not the server's: the call's latency leaves them out.
    let figures = client.latency(&server.id);
    assert!(
        figures.recent_max_ms.unwrap() < 2_000,
        "the form's wait counted as the server's: {figures:?}"
    );
    // The clock runs again after the answer: a hanging call still times out.
    let error = client
        .call_tool(
            &server,
            named(&snapshot, "trigger-long-running-operation"),
            json!({"duration": 5, "steps": 1}),
            &context("ida"),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, UpstreamError::Timeout(_)), "{error:?}");
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hard_maximum_still_ends_a_call_waiting_on_a_person() {
    let client = McpClient::builder(McpClientConfig {
        tool_call_timeout_secs: 1,
        tool_call_max_timeout_secs: 2,
        ..quick_config()
    })
    .elicitation(Arc::new(SlowPerson {
        delay: Duration::from_secs(30),
    }))
    .build()
    .unwrap();
    let server = everything_stdio("everything");
    let snapshot = client
        .fetch_capabilities(&server, &caller("ida"))
        .await
        .unwrap();
    let elicit = named(&snapshot, "trigger-elicitation-request");
    let started = Instant::now();
    let error = client
        .call_tool(&server, elicit, json!({}), &context("ida"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, UpstreamError::Timeout(limit) if limit == Duration::from_secs(2)),
        "{error:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    client.shutdown().await;
}
