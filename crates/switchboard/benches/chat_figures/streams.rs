//! Figure 3: SSE streams held open at once, the server's memory per stream, and how late the
//! `: heartbeat` comments come (each one's distance from the event before it, minus
//! `chat.heartbeat_secs`). The streams are opened by a child process (this binary with
//! `--hold-streams`) so that only the server's RSS is counted; the child reads every stream
//! from the moment it is open, so heartbeats are timed as they arrive.

use crate::model::{InstantModel, Script};
use crate::support::{Gate, rss_kib, start};
use futures::StreamExt;
use serde_json::json;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_chat::ChatConfig;
use tokio_util::sync::CancellationToken;

/// How long the parent keeps the streams open once all are: two heartbeat intervals and a bit.
fn hold_for(heartbeat: Duration) -> Duration {
    heartbeat * 2 + Duration::from_secs(3)
}

/// Child mode: open `count` answer streams, each read by its own task that times the
/// heartbeats; report when every `meta` arrived, then hold them until stdin closes and print
/// the heartbeats' lateness.
pub async fn hold_streams(base: String, token: String, count: usize) {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let heartbeat = ChatConfig::default().heartbeat_interval();
    let lateness_ms = Arc::new(Mutex::new(Vec::<f64>::with_capacity(count * 2)));
    let stop = CancellationToken::new();
    let mut readers = Vec::with_capacity(count);
    for _ in 0..count {
        let response = client
            .post(format!("{base}/chat/stream"))
            .bearer_auth(&token)
            .json(&json!({"message": "wait"}))
            .send()
            .await
            .unwrap();
        let mut stream = response.bytes_stream();
        let first = stream.next().await.unwrap().unwrap();
        assert!(String::from_utf8_lossy(&first).contains("\"meta\""));
        let (lateness_ms, stop) = (lateness_ms.clone(), stop.clone());
        readers.push(tokio::spawn(async move {
            let mut last = Instant::now();
            let mut late = Vec::new();
            loop {
                let chunk = tokio::select! {
                    () = stop.cancelled() => break,
                    chunk = stream.next() => chunk,
                };
                let Some(Ok(bytes)) = chunk else { break };
                let now = Instant::now();
                if String::from_utf8_lossy(&bytes).contains(": heartbeat") {
                    let gap = now.duration_since(last).as_secs_f64() - heartbeat.as_secs_f64();
                    late.push(gap * 1000.0);
                }
                last = now;
            }
            lateness_ms.lock().unwrap().extend(late);
            stream
        }));
    }
    println!("HELD {count}");
    let mut line = String::new();
    let _ = tokio::task::spawn_blocking(move || std::io::stdin().read_line(&mut line)).await;
    stop.cancel();
    let mut held = Vec::with_capacity(count);
    for reader in readers {
        held.push(reader.await.unwrap());
    }
    let mut late = lateness_ms.lock().unwrap().clone();
    late.sort_by(f64::total_cmp);
    let at = |mark: f64| {
        late[((mark / 100.0 * late.len() as f64).ceil() as usize).clamp(1, late.len().max(1)) - 1]
    };
    if late.is_empty() {
        println!("HEARTBEATS 0");
    } else {
        println!(
            "HEARTBEATS {} {:.1} {:.1} {:.1} {:.1}",
            late.len(),
            at(50.0),
            at(99.0),
            late[late.len() - 1],
            late[0]
        );
    }
    drop(held);
}

pub async fn measure_open_streams(count: usize) {
    use std::io::{BufRead, BufReader};
    let model = Arc::new(InstantModel {
        script: Script::Silent,
        calls: AtomicUsize::new(0),
    });
    let running = start(Some(model), Gate::AllowEveryCall).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = rss_kib();
    let started = Instant::now();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--hold-streams",
            &running.base,
            &running.token,
            &count.to_string(),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let (line, mut stdout) = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        (line, stdout)
    })
    .await
    .unwrap();
    assert_eq!(line.trim(), format!("HELD {count}"));
    let opened_in = started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = rss_kib();
    println!(
        "\nSSE streams held open at once: {count} (each an answer in flight, opened in {:.1} s)",
        opened_in.as_secs_f64()
    );
    println!(
        "  server RSS {:.1} MiB before, {:.1} MiB with the streams open: {:.1} KiB per open stream",
        before as f64 / 1024.0,
        during as f64 / 1024.0,
        during.saturating_sub(before) as f64 / count as f64
    );
    let heartbeat = ChatConfig::default().heartbeat_interval();
    tokio::time::sleep(hold_for(heartbeat)).await;
    drop(child.stdin.take());
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    let figures: Vec<&str> = line.split_whitespace().skip(1).collect();
    match figures.as_slice() {
        [heard, p50, p99, max, min] => println!(
            "  heartbeats (every {} s) heard over the streams: {heard}; lateness p50 {p50} ms, \
             p99 {p99} ms, max {max} ms, min {min} ms",
            heartbeat.as_secs()
        ),
        _ => println!("  no heartbeat heard ({})", line.trim()),
    }
    let _ = child.wait();
    running.shutdown.cancel();
}
