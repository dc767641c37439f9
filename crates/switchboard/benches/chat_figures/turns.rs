//! Figures 1 and 2: sequential answers over `POST /chat/stream`, each timed at its SSE
//! milestones (first byte, `meta`, tool started and completed, `done`) and reported as
//! percentiles.

use crate::support::sse::SseEvents;
use crate::support::{Gate, Stack, start};
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;
use switchboard_llm::LlmProvider;

/// Milestones of one answer, in microseconds from sending the request.
#[derive(Debug, Default, Clone)]
struct Timeline {
    first_byte: u128,
    meta: u128,
    tool_started: Option<u128>,
    tool_completed: Option<u128>,
    done: u128,
}

async fn one_turn(running: &Stack, message: &str) -> Timeline {
    let started = Instant::now();
    let response = running
        .client
        .post(format!("{}/chat/stream", running.base))
        .bearer_auth(&running.token)
        .json(&json!({"message": message}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut timeline = Timeline::default();
    let mut stream = response.bytes_stream();
    let mut events = SseEvents::default();
    while let Some(chunk) = stream.next().await {
        if timeline.first_byte == 0 {
            timeline.first_byte = started.elapsed().as_micros();
        }
        for event in events.push(&chunk.unwrap()) {
            let at = started.elapsed().as_micros();
            match (event["type"].as_str().unwrap(), event["status"].as_str()) {
                ("meta", _) => timeline.meta = at,
                ("mcp_tool", Some("started")) => timeline.tool_started = Some(at),
                ("mcp_tool", Some(_)) => {
                    assert_eq!(event["status"], "completed", "{event}");
                    timeline.tool_completed = Some(at);
                }
                ("error", _) => panic!("the turn failed: {event}"),
                ("done", _) => {
                    timeline.done = at;
                    return timeline;
                }
                _ => {}
            }
        }
    }
    panic!("the stream ended without done");
}

/// p50, p90 and p99 of samples in microseconds.
fn percentiles(samples_us: Vec<u128>) -> String {
    switchboard_test_support::figures::percentiles(samples_us, &[0.5, 0.9, 0.99])
}

pub async fn measure_turns(
    label: &str,
    provider: Arc<dyn LlmProvider>,
    message: &str,
    turns: usize,
    with_tool: bool,
) {
    let running = start(Some(provider), Gate::AllowEveryCall).await;
    for _ in 0..10 {
        one_turn(&running, message).await; // warm-up: sessions, caches, pools
    }
    let mut timelines = Vec::with_capacity(turns);
    for _ in 0..turns {
        timelines.push(one_turn(&running, message).await);
    }
    println!("\n{label} ({turns} turns, sequential)");
    println!(
        "  first SSE byte             {}",
        percentiles(timelines.iter().map(|t| t.first_byte).collect())
    );
    println!(
        "  meta event                 {}",
        percentiles(timelines.iter().map(|t| t.meta).collect())
    );
    if with_tool {
        println!(
            "  detection (→ started)      {}",
            percentiles(timelines.iter().map(|t| t.tool_started.unwrap()).collect())
        );
        println!(
            "  tool invocation            {}",
            percentiles(
                timelines
                    .iter()
                    .map(|t| t.tool_completed.unwrap() - t.tool_started.unwrap())
                    .collect()
            )
        );
    }
    println!(
        "  total (→ done)             {}",
        percentiles(timelines.iter().map(|t| t.done).collect())
    );
    running.shutdown.cancel();
}
