//! Figure 4: live answers across replicas (PostgreSQL). Two replicas share a fresh schema of
//! the database at `SWITCHBOARD_BENCH_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`; made and dropped with `psql`). Each answer runs
//! on replica A with a paced model (one token every 20 ms); A's own client and a follower on
//! replica B (`GET /chat/{id}/stream`) read it at once. The lag of an event is when B's
//! follower got it minus when A's client got it (same process, same clock), over every token
//! of every answer; B must get the same events in the same order.

use crate::model::{InstantModel, Script};
use crate::support::{Gate, Stack, start_on};
use futures::StreamExt;
use serde_json::{Value, json};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};
use switchboard_store::DatabaseConfig;

const TOKENS: usize = 50;
const EVERY_MS: u64 = 20;

pub async fn measure_relay(answers: usize) {
    let base = std::env::var("SWITCHBOARD_BENCH_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let schema = format!("relay_bench_{}", std::process::id());
    psql(&base, &format!("CREATE SCHEMA \"{schema}\""));
    let database = DatabaseConfig {
        url: Some(format!("{base}?options[search_path]={schema}")),
        ..DatabaseConfig::default()
    };
    let model = || -> Option<Arc<dyn switchboard_llm::LlmProvider>> {
        Some(Arc::new(InstantModel {
            script: Script::Paced {
                tokens: TOKENS,
                every_ms: EVERY_MS,
            },
            calls: AtomicUsize::new(0),
        }))
    };
    let a = start_on(model(), Gate::AllowEveryCall, &database).await;
    let b = a.replica(model(), &database).await;
    let mut lags = Vec::new();
    for _ in 0..answers {
        lags.extend(one_answer(&a, &b).await);
    }
    println!(
        "\nlive answer followed on another replica (PostgreSQL LISTEN/NOTIFY + stream rows): \
         {answers} answers × {TOKENS} tokens, one every {EVERY_MS} ms"
    );
    println!(
        "  lag A's client → B's follower per event: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} events)",
        percentile(&lags, 50.0),
        percentile(&lags, 99.0),
        lags.iter().cloned().fold(0.0, f64::max),
        lags.len()
    );
    a.shutdown.cancel();
    b.shutdown.cancel();
    psql(&base, &format!("DROP SCHEMA \"{schema}\" CASCADE"));
}

/// One answer asked on A and followed on B; the lag of each event (ms).
async fn one_answer(a: &Stack, b: &Stack) -> Vec<f64> {
    let response = a
        .client
        .post(format!("{}/chat/stream", a.base))
        .bearer_auth(&a.token)
        .json(&json!({"message": "slowly"}))
        .send()
        .await
        .unwrap();
    let conversation_id = response.headers()["x-conversation-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let asked = tokio::spawn(timed_events(response));
    let followed = b
        .client
        .get(format!("{}/chat/{conversation_id}/stream", b.base))
        .bearer_auth(&b.token)
        .send()
        .await
        .unwrap();
    assert_eq!(followed.headers()["x-answer-source"], "live");
    let followed = timed_events(followed).await;
    let asked = asked.await.unwrap();
    assert_eq!(
        asked.iter().map(|(_, event)| event).collect::<Vec<_>>(),
        followed.iter().map(|(_, event)| event).collect::<Vec<_>>(),
        "B gets A's events in A's order"
    );
    asked
        .iter()
        .zip(&followed)
        .filter(|((_, event), _)| event["type"] == "token")
        .map(|((at_a, _), (at_b, _))| at_b.saturating_duration_since(*at_a).as_secs_f64() * 1000.0)
        .collect()
}

/// Every event of an SSE answer with when it arrived, up to `done`.
async fn timed_events(response: reqwest::Response) -> Vec<(Instant, Value)> {
    let mut stream = response.bytes_stream();
    let (mut buffer, mut events) = (String::new(), Vec::new());
    while let Ok(Some(chunk)) = tokio::time::timeout(Duration::from_secs(30), stream.next()).await {
        let at = Instant::now();
        buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            if let Some(data) = block.lines().find_map(|line| line.strip_prefix("data:")) {
                let event: Value = serde_json::from_str(data.trim()).unwrap();
                let done = event["type"] == "done";
                events.push((at, event));
                if done {
                    return events;
                }
            }
        }
    }
    panic!("the answer ended without `done`");
}

fn psql(base: &str, sql: &str) {
    let status = Command::new("psql")
        .args([base, "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .status()
        .expect("psql");
    assert!(status.success(), "psql {sql}");
}

/// The `mark`th percentile (nearest rank) of `samples`.
fn percentile(samples: &[f64], mark: f64) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((mark / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.saturating_sub(1)).copied().unwrap_or(0.0)
}
