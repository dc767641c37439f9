//! Soak (issue 18, target 13): 100 concurrent chats over 20 upstream MCP servers of which 10%
//! are faulty (slow, crashing, garbage), through the real HTTP server and chat engine with an
//! instant in-process model (see `load`). Prints the answers' outcomes, the faults served,
//! and resident memory, open descriptors and live tokio tasks at the baseline (after the
//! warm-up), every sample and the end. The target: RSS growth under 10%, flat tasks and
//! descriptors, 0 panics.
//!
//! Run: `cargo bench -p switchboard --bench soak -- --secs 600 [--chats 100 --servers 20
//! --warm-up 30]`. The CI version is the `soak` test (a shorter run of the same code).

mod load;
mod model;
#[path = "../support/mod.rs"]
mod support;
mod upstreams;

use std::sync::atomic::Ordering;
use std::time::Duration;
use switchboard_test_support::figures::flag_value;

fn main() {
    let options = load::SoakOptions {
        chats: flag_value("--chats", 100),
        servers: flag_value("--servers", 20),
        warm_up: Duration::from_secs(flag_value("--warm-up", 30) as u64),
        duration: Duration::from_secs(flag_value("--secs", 600) as u64),
        sample_every: Duration::from_secs(60),
    };
    let (chats, servers, duration) = (options.chats, options.servers, options.duration);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let figures = runtime.block_on(load::soak(options));
    println!(
        "soak: {chats} chats over {servers} upstreams ({} faulty) for {duration:?}",
        (servers / 10).max(1)
    );
    for (label, tally) in [("warm-up", &figures.warm_up), ("soak", &figures.soak)] {
        println!(
            "  {label}: {} answers, {} ended with done, {} stuck; {} error events; final tool states {:?}",
            tally.turns, tally.done, tally.stuck, tally.error_events, tally.tool_states
        );
    }
    let faults = &figures.faults;
    println!(
        "  faulty upstreams served: {} slow, {} crashed, {} garbage",
        faults.slow.load(Ordering::Relaxed),
        faults.crashed.load(Ordering::Relaxed),
        faults.garbage.load(Ordering::Relaxed)
    );
    let show = |snapshot: &load::Snapshot| {
        format!(
            "RSS {} KiB, {} fds, {} tasks",
            snapshot.rss_kib, snapshot.fds, snapshot.tasks
        )
    };
    println!("  baseline: {}", show(&figures.baseline));
    for (at, snapshot) in &figures.samples {
        println!("  at {:>4} s: {}", at.as_secs(), show(snapshot));
    }
    println!("  end: {}", show(&figures.end));
    println!(
        "  RSS growth {:+.1}%; panics {}",
        figures.rss_growth() * 100.0,
        figures.panics
    );
}
