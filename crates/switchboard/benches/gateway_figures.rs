//! Gateway figures (a bench binary printing numbers, not a timed test): the latency of one
//! `tools/call` through `/gateway/mcp` against the same call made directly, same process,
//! same run.
//!
//! The real HTTP server on loopback (SQLite with `synchronous=FULL` in a temp dir) serves both
//! our own knowledge-graph endpoint `/mcp` and the gateway; `kg` (that endpoint) is the
//! gateway's one upstream and its `schema_version` tool is `ALWAYS_ALLOW`, so no person is
//! asked. One rmcp client (Streamable HTTP, one session) calls `schema_version` on `/mcp`
//! directly, another `kg__schema_version` on `/gateway/mcp`, one call at a time, after a
//! warm-up. A gateway call is everything the chat does for a call besides the model: the
//! offer (cached), the call recorded `proposed`, the approval gate (rule lookups, pins),
//! `approved` and `dispatched` committed before it leaves, the upstream call over the shared
//! session, the final state, the audit row.
//!
//! Run: `cargo bench -p switchboard --bench gateway_figures` (`-- --calls 500`).

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::time::Instant;
use support::{Gate, Stack, start};
use switchboard_core::ApprovalPolicy;

#[path = "support/mod.rs"]
mod support;

type Client = RunningService<RoleClient, ClientConfig>;

/// The stack with `kg`'s `schema_version` `ALWAYS_ALLOW`, so no person is asked.
async fn start_with_allowed_tool() -> Stack {
    let stack = start(None, Gate::Approvals).await;
    stack
        .approvals()
        .set_tool_policy(
            &stack.principal,
            &stack.kg_server,
            "schema_version",
            ApprovalPolicy::AlwaysAllow,
        )
        .await
        .unwrap();
    stack
}

async fn connect(running: &Stack, path: &str) -> Client {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}{path}", running.base))
        .auth_header(running.token.clone());
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("gateway-figures", "1.0.0"),
    )
    .serve(StreamableHttpClientTransport::from_config(config))
    .await
    .unwrap()
}

/// `calls` sequential calls of `tool`, in microseconds each.
async fn time_calls(client: &Client, tool: &str, calls: usize) -> Vec<u128> {
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        let result = client
            .call_tool(CallToolRequestParams::new(tool.to_owned()))
            .await
            .unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
        samples.push(started.elapsed().as_micros());
    }
    samples
}

/// p50, p95, p99 and the maximum of samples in microseconds.
fn percentiles(samples_us: Vec<u128>) -> String {
    switchboard_test_support::figures::percentiles(samples_us, &[0.5, 0.95, 0.99, 1.0])
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let calls = switchboard_test_support::figures::flag_value("--calls", 300);
    let running = start_with_allowed_tool().await;
    let direct = connect(&running, "/mcp").await;
    let gateway = connect(&running, "/gateway/mcp").await;
    time_calls(&direct, "schema_version", 20).await;
    time_calls(&gateway, "kg__schema_version", 20).await;
    let direct_samples = time_calls(&direct, "schema_version", calls).await;
    let gateway_samples = time_calls(&gateway, "kg__schema_version", calls).await;
    println!("tools/call, {calls} sequential calls each, one session each:");
    println!("  direct  /mcp          {}", percentiles(direct_samples));
    println!("  gateway /gateway/mcp  {}", percentiles(gateway_samples));
    direct.cancel().await.unwrap();
    gateway.cancel().await.unwrap();
    running.shutdown.cancel();
}
