//! Figure 3: SSE streams held open at once and the server's memory per stream. The streams
//! are opened by a child process (this binary with `--hold-streams`) so that only the
//! server's RSS is counted.

use crate::model::{InstantModel, Script};
use crate::support::{Gate, rss_kib, start};
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

/// Child mode: open `count` answer streams, report when every `meta` arrived, then hold them
/// until stdin closes.
pub async fn hold_streams(base: String, token: String, count: usize) {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut held = Vec::with_capacity(count);
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
        held.push(stream);
    }
    println!("HELD {count}");
    let mut line = String::new();
    let _ = tokio::task::spawn_blocking(move || std::io::stdin().read_line(&mut line)).await;
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
    let stdout = child.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
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
    drop(child.stdin.take());
    let _ = child.wait();
    running.shutdown.cancel();
}
