//! Gateway figures (a bench binary printing numbers, not a timed test): `tools/call` through
//! `/gateway/mcp` against the same call made directly and through a dumb L7 proxy
//! ([`proxy`]), same process, same run.
//!
//! The real HTTP server on loopback (SQLite with `synchronous=FULL` in a temp dir) serves both
//! our own knowledge-graph endpoint `/mcp` and the gateway; `kg` (that endpoint) is the
//! gateway's one upstream and its `schema_version` tool is `ALWAYS_ALLOW`, so no person is
//! asked. rmcp clients (Streamable HTTP) call `schema_version` on `/mcp` directly, the same
//! through the proxy, and `kg__schema_version` on `/gateway/mcp`. A gateway call is everything
//! the chat does for a call besides the model: the offer (cached), the call recorded
//! `proposed`, the approval gate (rule lookups, pins), `approved`+`dispatched` committed before
//! it leaves, the upstream call over the shared session, the final state with its audit row.
//!
//! Printed: latency percentiles of one client's sequential calls (and the p50 added to the
//! direct call), calls per second of 16 clients at once (each its own session), the new TCP
//! connections to `/mcp` per call (counted by peer port at the server), and the server's
//! memory per idle session. With `--contextforge`, IBM ContextForge is the fourth column:
//! `interop/contextforge/run.sh` installs it from PyPI (pinned) and starts it in front of the
//! same `/mcp` ([`contextforge`]).
//!
//! Run: `cargo bench -p switchboard --bench gateway_figures` (`-- --calls 500 --clients 16
//! --sessions 200 --synchronous normal --contextforge`; `--only gateway` measures that endpoint
//! alone, for a profiler).

mod contextforge;
mod load;
mod proxy;
mod sessions;
#[path = "../support/mod.rs"]
mod support;

use load::{Endpoint, calls_per_second, connect, time_calls};
use support::{Gate, Stack, start_on};
use switchboard_core::ApprovalPolicy;
use switchboard_store::{DatabaseConfig, SqliteSynchronousMode};
use switchboard_test_support::figures::{flag_value, percentiles};

/// The stack with `kg`'s `schema_version` `ALWAYS_ALLOW`, so no person is asked; SQLite's
/// `synchronous` as `--synchronous normal` asks (default `full`).
async fn start_with_allowed_tool() -> Stack {
    let normal = std::env::args()
        .skip_while(|argument| argument != "--synchronous")
        .nth(1)
        .is_some_and(|value| value == "normal");
    let database = DatabaseConfig {
        sqlite_synchronous: if normal {
            SqliteSynchronousMode::Normal
        } else {
            SqliteSynchronousMode::Full
        },
        ..DatabaseConfig::default()
    };
    println!(
        "SQLite synchronous={}",
        if normal { "NORMAL" } else { "FULL" }
    );
    let stack = start_on(None, Gate::Approvals, &database).await;
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

fn p50_us(samples_us: &[u128]) -> u128 {
    let mut sorted = samples_us.to_vec();
    sorted.sort_unstable();
    sorted[sorted.len() / 2]
}

/// One client's sequential calls: percentiles, and the `/mcp` connections they opened.
async fn sequential(stack: &Stack, endpoint: &Endpoint, calls: usize) -> (Vec<u128>, usize) {
    let client = connect(endpoint).await;
    time_calls(&client, &endpoint.tool, 20).await;
    let connections_before = stack.mcp_peers.count();
    let samples = time_calls(&client, &endpoint.tool, calls).await;
    let opened = stack.mcp_peers.count() - connections_before;
    client.cancel().await.unwrap();
    (samples, opened)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let calls = flag_value("--calls", 300);
    let clients = flag_value("--clients", 16);
    let idle_sessions = flag_value("--sessions", 200);
    let stack = start_with_allowed_tool().await;
    let proxy = proxy::start_proxy(stack.base.clone()).await;
    let mut endpoints = vec![
        ("direct", format!("{}/mcp", stack.base), "schema_version"),
        ("dumb proxy", format!("{proxy}/mcp"), "schema_version"),
        (
            "gateway",
            format!("{}/gateway/mcp", stack.base),
            "kg__schema_version",
        ),
    ]
    .into_iter()
    .map(|(label, url, tool)| Endpoint {
        label,
        url,
        token: stack.token.clone(),
        tool: tool.to_owned(),
    })
    .collect::<Vec<_>>();
    let contextforge = std::env::args()
        .any(|argument| argument == "--contextforge")
        .then(|| contextforge::start(&format!("{}/mcp", stack.base), &stack.token))
        .flatten();
    // `--only LABEL` (e.g. `--only gateway`, for a profiler): that endpoint alone.
    if let Some(only) = std::env::args()
        .skip_while(|argument| argument != "--only")
        .nth(1)
    {
        endpoints.retain(|endpoint| endpoint.label == only);
    }
    if let Some(running) = &contextforge {
        endpoints.push(Endpoint {
            label: "contextforge",
            url: running.url.clone(),
            token: running.token.clone(),
            tool: running.tool.clone(),
        });
    }
    println!(
        "tools/call, {calls} sequential calls of one client (own session), then {clients} clients at once:"
    );
    let mut direct_p50 = None;
    for endpoint in &endpoints {
        let (samples, opened) = sequential(&stack, endpoint, calls).await;
        let p50 = p50_us(&samples);
        let added = direct_p50.map_or(0, |direct| p50.saturating_sub(direct));
        direct_p50.get_or_insert(p50);
        let throughput = calls_per_second(endpoint, clients, calls.div_ceil(4)).await;
        println!(
            "  {:<12} {}  added p50 {:>6.2} ms  {:>7.0} calls/s at {clients}  new /mcp connections per call {:.3}",
            endpoint.label,
            percentiles(samples, &[0.5, 0.99]),
            added as f64 / 1000.0,
            throughput,
            opened as f64 / calls as f64,
        );
    }
    println!(
        "  (direct: the client's own connection to /mcp counts; proxy, gateway and contextforge: their upstream's)"
    );
    drop(contextforge);
    println!("memory per idle session ({idle_sessions} sessions open, initialize only):");
    let measured = ["direct", "gateway"];
    for endpoint in endpoints
        .iter()
        .filter(|endpoint| measured.contains(&endpoint.label))
    {
        let kib = sessions::kib_per_idle_session(&stack, &endpoint.url, idle_sessions).await;
        println!("  {:<10} {kib:>6.1} KiB", endpoint.label);
    }
    stack.shutdown.cancel();
}
