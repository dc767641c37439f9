//! `cargo bench -p switchboard-mcp-server --bench mcp_throughput`: tools/call throughput and
//! p50/p99 latency on loopback at 16 concurrent clients, for our knowledge-graph endpoint
//! (`schema_version`, `traverse`) against a bare rmcp echo server (the ceiling of the stack),
//! `@modelcontextprotocol/server-everything` (Streamable HTTP) and a Python FastMCP server —
//! every server in its own process, measured in the same run, reported as ratios to rmcp echo.
//!
//! Target: `schema_version` ≥ 0.9× the rmcp echo server's calls/s in the same mode.
//! Settings: `BENCH_CLIENTS` (16), `BENCH_SECONDS` per workload (5), `BENCH_WARMUP_SECONDS` (1),
//! `BENCH_ROUNDS` (3: every workload runs once per round, rounds interleave, medians are reported).
//! Needs `bash interop/install.sh` for the Node and Python peers.

mod load;
mod servers;

use load::{Measurement, Mode, Workload};
use serde_json::{Value, json};
use std::time::Duration;

const TARGET_RATIO: f64 = 0.9;

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

struct Row {
    server: &'static str,
    tool: &'static str,
    mode: Mode,
    measurement: Measurement,
}

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, which, port, ..] = arguments.as_slice()
        && flag == "--serve"
    {
        servers::serve(which, port.parse().expect("port"));
        return;
    }
    servers::require_interop();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(benchmark());
}

async fn benchmark() {
    let clients = setting("BENCH_CLIENTS", 16) as usize;
    let duration = Duration::from_secs(setting("BENCH_SECONDS", 5));
    let warmup = Duration::from_secs(setting("BENCH_WARMUP_SECONDS", 1));
    let rounds = setting("BENCH_ROUNDS", 3).max(1) as usize;
    println!(
        "tools/call on 127.0.0.1, {clients} concurrent clients, {}s per workload after {}s warm-up, \
         {rounds} interleaved rounds (medians reported)",
        duration.as_secs(),
        warmup.as_secs()
    );
    let echo = servers::own("echo").await;
    let kg = servers::own("kg").await;
    let everything = servers::server_everything().await;
    let fastmcp = servers::fastmcp().await;
    let token = Some(servers::BENCH_TOKEN);
    let echo_arguments = json!({"message": "hello"});
    let traverse_arguments =
        json!({"start_id": "project-q4-planning", "direction": "both", "depth": 2});
    let workload = |url: &str, token, mode, tool, arguments: &Value| Workload {
        url: url.to_owned(),
        token,
        mode,
        tool,
        arguments: arguments.clone(),
        clients,
        warmup,
        duration,
    };
    let mut plan: Vec<(&'static str, Workload)> = Vec::new();
    for mode in [Mode::Stateless, Mode::Session] {
        plan.push((
            "rmcp echo",
            workload(&echo.url, None, mode, "echo", &echo_arguments),
        ));
        plan.push((
            "switchboard kg",
            workload(&kg.url, token, mode, "schema_version", &json!({})),
        ));
        plan.push((
            "switchboard kg",
            workload(&kg.url, token, mode, "traverse", &traverse_arguments),
        ));
    }
    plan.push((
        "server-everything",
        workload(
            &everything.url,
            None,
            Mode::Session,
            "echo",
            &echo_arguments,
        ),
    ));
    plan.push((
        "python fastmcp",
        workload(&fastmcp.url, None, Mode::Session, "echo", &echo_arguments),
    ));

    let mut results: Vec<Vec<Measurement>> = plan.iter().map(|_| Vec::new()).collect();
    for round in 1..=rounds {
        println!("round {round}/{rounds}");
        for (index, (server, workload)) in plan.iter().enumerate() {
            let measurement = load::run(workload).await;
            println!(
                "  {server:<18} {:<22} {:<15} {:>9.0} calls/s  p50 {:>6.2} ms  p99 {:>6.2} ms  failures {}",
                workload.mode.label(),
                workload.tool,
                measurement.calls_per_second(),
                measurement.latency_ms(0.50),
                measurement.latency_ms(0.99),
                measurement.failures
            );
            results[index].push(measurement);
        }
    }
    let rows: Vec<Row> = plan
        .iter()
        .zip(results)
        .map(|((server, workload), mut measurements)| {
            measurements.sort_by(|a, b| a.calls_per_second().total_cmp(&b.calls_per_second()));
            let median = measurements.swap_remove(measurements.len() / 2);
            Row {
                server,
                tool: workload.tool,
                mode: workload.mode,
                measurement: median,
            }
        })
        .collect();
    report(&rows);
}

fn report(rows: &[Row]) {
    let ceiling = |mode: Mode| {
        rows.iter()
            .find(|row| row.server == "rmcp echo" && row.mode == mode)
            .map(|row| row.measurement.calls_per_second())
            .unwrap_or(f64::NAN)
    };
    println!("\n| server | mode | tool | calls/s | p50 ms | p99 ms | × rmcp echo (same mode) |");
    println!("|---|---|---|---:|---:|---:|---:|");
    for row in rows {
        let rate = row.measurement.calls_per_second();
        println!(
            "| {} | {} | {} | {:.0} | {:.2} | {:.2} | {:.2} |",
            row.server,
            row.mode.label(),
            row.tool,
            rate,
            row.measurement.latency_ms(0.50),
            row.measurement.latency_ms(0.99),
            rate / ceiling(row.mode)
        );
    }
    println!();
    for mode in [Mode::Stateless, Mode::Session] {
        if let Some(row) = rows
            .iter()
            .find(|row| row.tool == "schema_version" && row.mode == mode)
        {
            let ratio = row.measurement.calls_per_second() / ceiling(mode);
            let verdict = if ratio >= TARGET_RATIO {
                "meets"
            } else {
                "MISSES"
            };
            println!(
                "schema_version, {}: {ratio:.2}× rmcp echo — {verdict} the {TARGET_RATIO}× target",
                mode.label()
            );
        }
    }
}
