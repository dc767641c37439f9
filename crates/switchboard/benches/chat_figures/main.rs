//! Chat figures (a bench binary printing numbers, not a timed test), measured through the
//! real HTTP server on loopback with SQLite in a temp dir and our own kg endpoint at `/mcp`:
//!
//! 1. time to the first SSE byte of `POST /chat/stream` (and to the `meta` event);
//! 2. the per-turn overhead of a one-tool turn with the LLM excluded (an in-process provider
//!    that answers instantly: one `kg__schema_version` call, then one line of text), split
//!    into detection (request → `mcp_tool started`: question stored, catalog, LLM step, call
//!    recorded and gated), tool invocation (`started` → `completed`: the real MCP call over
//!    HTTP to `/mcp` plus the result rows) and total (request → `done`); the same with the
//!    offline planner as the LLM;
//! 3. SSE streams held open at once (answers waiting on a model that never speaks), and the
//!    server's memory per stream — the clients run in a child process so only the server's
//!    RSS is counted.
//!
//! 4. with `--relay` only: the lag of a live answer followed on another replica through
//!    PostgreSQL (`relay.rs`).
//!
//! Run: `cargo bench -p switchboard --bench chat_figures` (`-- --streams 2000`,
//! `-- --relay --answers 20`).

mod model;
mod relay;
mod streams;
#[path = "../support/mod.rs"]
mod support;
mod turns;

use model::{InstantModel, Script};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use streams::{hold_streams, measure_open_streams};
use switchboard_llm::{LlmProvider, OfflineProvider};
use switchboard_test_support::figures::flag_value;
use turns::measure_turns;

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if arguments.get(1).map(String::as_str) == Some("--hold-streams") {
        runtime.block_on(hold_streams(
            arguments[2].clone(),
            arguments[3].clone(),
            arguments[4].parse().unwrap(),
        ));
        return;
    }
    let turns = flag_value("--turns", 200);
    let streams = flag_value("--streams", 1000);
    runtime.block_on(async {
        println!("chat figures — loopback HTTP, SQLite (WAL, synchronous=FULL), kg endpoint over Streamable HTTP");
        if arguments.iter().any(|argument| argument == "--relay") {
            relay::measure_relay(flag_value("--answers", 20)).await;
            return;
        }
        if arguments.iter().any(|argument| argument == "--only-streams") {
            measure_open_streams(streams).await;
            return;
        }
        let instant = |script| -> Arc<dyn LlmProvider> { Arc::new(InstantModel { script, calls: AtomicUsize::new(0) }) };
        measure_turns("text-only turn, instant model", instant(Script::Text), "hello", turns, false).await;
        measure_turns("one-tool turn (kg schema_version), instant model = overhead without the LLM", instant(Script::OneTool), "version?", turns, true).await;
        measure_turns(
            "one-tool turn, offline planner as the model",
            Arc::new(OfflineProvider::default()),
            "What's the schema version?",
            turns,
            true,
        )
        .await;
        measure_open_streams(streams).await;
    });
}
