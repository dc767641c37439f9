//! The task fixture ([`switchboard_test_support::task_server`]: `slow_report`, built on
//! rmcp's server side and `TaskManager`) as a process, for tests that are not Rust (the
//! browser tests start it with node). It prints `task fixture at <url>` once it listens, then
//! one line per task a client cancelled (`cancelled <task id>`), and exits when its stdin
//! closes (its parent is gone) or it is killed. `--notify` turns on its
//! `notifications/tasks` mode.

use std::io::Write;
use std::time::Duration;
use switchboard_test_support::task_server::{TaskServer, TaskServerOptions};
use tokio::io::AsyncReadExt;

#[tokio::main]
async fn main() {
    let options = TaskServerOptions {
        notify: std::env::args().any(|argument| argument == "--notify"),
        ..TaskServerOptions::default()
    };
    let server = TaskServer::start_with(options).await;
    say(&format!("task fixture at {}", server.url()));
    let log = std::sync::Arc::clone(&server.log);
    tokio::spawn(async move {
        let mut told = 0;
        loop {
            let cancelled = log.cancelled();
            for task_id in cancelled.iter().skip(told) {
                say(&format!("cancelled {task_id}"));
            }
            told = cancelled.len();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let mut sink = Vec::new();
    let _ = tokio::io::stdin().read_to_end(&mut sink).await;
}

fn say(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}
