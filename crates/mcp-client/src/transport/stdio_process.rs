//! The life of one stdio server's process group: spawning it safely (argv only, allowlisted
//! environment, its own process group), pumping its stderr into the logs under a budget while
//! keeping a tail to explain failures, and stopping it without leaving orphans — stdin closed,
//! then SIGTERM, then SIGKILL, always to the whole group.

use crate::config::StdioConfig;
use crate::server::StdioCommand;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use super::framing::{BoundedLineReader, Frame};

/// A spawned child with its pipes taken out.
pub(crate) struct SpawnedChild {
    pub group: Arc<ProcessGroup>,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
}

/// Handle on a child's process group; the child is its leader.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    process_group_id: i32,
    server_name: String,
    exit_status: watch::Receiver<Option<ExitStatus>>,
    stderr_tail: Arc<Mutex<StderrTail>>,
    graceful_exit: Duration,
    stopped: AtomicBool,
}

pub(crate) fn spawn(
    server_name: &str,
    command: &StdioCommand,
    config: &StdioConfig,
) -> std::io::Result<SpawnedChild> {
    let mut process = Command::new(&command.command);
    process
        .args(&command.args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for name in &config.env_allowlist {
        if let Some(value) = std::env::var_os(name) {
            process.env(name, value);
        }
    }
    process.envs(&command.env);
    if let Some(dir) = &command.working_dir {
        process.current_dir(dir);
    }
    let mut child = process.spawn()?;
    let process_group_id = child
        .id()
        .ok_or_else(|| std::io::Error::other("the child exited before its id was read"))?
        as i32;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("no stdin pipe"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no stdout pipe"))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| std::io::Error::other("no stderr pipe"))?;

    let (exit_sender, exit_status) = watch::channel(None);
    let server_label = server_name.to_owned();
    tokio::spawn(async move {
        let status = child.wait().await;
        match &status {
            Ok(status) => tracing::debug!(server = %server_label, %status, "stdio server exited"),
            Err(error) => {
                tracing::warn!(server = %server_label, %error, "waiting for stdio server failed")
            }
        }
        let _ = exit_sender.send(Some(status.unwrap_or_else(|_| failed_wait_status())));
    });

    let stderr_tail = Arc::new(Mutex::new(StderrTail::new(config.stderr_tail_bytes)));
    tokio::spawn(pump_stderr(
        server_name.to_owned(),
        stderr,
        stderr_tail.clone(),
        config.stderr_line_bytes,
        config.stderr_log_budget_bytes,
    ));

    Ok(SpawnedChild {
        group: Arc::new(ProcessGroup {
            process_group_id,
            server_name: server_name.to_owned(),
            exit_status,
            stderr_tail,
            graceful_exit: Duration::from_secs(config.graceful_exit_secs),
            stopped: AtomicBool::new(false),
        }),
        stdin,
        stdout,
    })
}

#[cfg(unix)]
fn failed_wait_status() -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    ExitStatus::from_raw(0x7f00)
}

impl ProcessGroup {
    pub fn process_group_id(&self) -> i32 {
        self.process_group_id
    }

    /// Closes stdin (dropping the writer), waits, SIGTERMs the group, waits, SIGKILLs it; then
    /// SIGKILLs the group once more so no descendant outlives the leader.
    /// If this future is dropped half-way, `kill_now` (from the transport's `Drop`) still
    /// kills the group, because `stopped` is only set once the group is gone.
    pub async fn shutdown(&self, stdin: &tokio::sync::Mutex<Option<ChildStdin>>) {
        if self.stopped.load(Ordering::SeqCst) {
            return;
        }
        if let Some(mut writer) = stdin.lock().await.take() {
            let _ = writer.shutdown().await;
        }
        if !self.wait_for_exit(self.graceful_exit).await {
            tracing::info!(server = %self.server_name, "stdio server ignored stdin close; sending SIGTERM");
            self.signal_group(Signal::SIGTERM);
            if !self.wait_for_exit(self.graceful_exit).await {
                tracing::warn!(server = %self.server_name, "stdio server ignored SIGTERM; sending SIGKILL");
                self.signal_group(Signal::SIGKILL);
                self.wait_for_exit(self.graceful_exit).await;
            }
        }
        // Descendants that outlived the leader (daemonized helpers, `npx` children).
        self.signal_group(Signal::SIGKILL);
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// Synchronous last resort (used from `Drop`).
    pub fn kill_now(&self) {
        if !self.stopped.swap(true, Ordering::SeqCst) {
            self.signal_group(Signal::SIGKILL);
        }
    }

    fn signal_group(&self, signal: Signal) {
        match killpg(Pid::from_raw(self.process_group_id), signal) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
            Err(error) => {
                tracing::warn!(server = %self.server_name, %error, ?signal, "signalling the process group failed")
            }
        }
    }

    async fn wait_for_exit(&self, limit: Duration) -> bool {
        let mut status = self.exit_status.clone();
        tokio::time::timeout(limit, status.wait_for(|status| status.is_some()))
            .await
            .is_ok()
    }

    /// Like [`Self::describe`], after giving a dying child a moment to be reaped (its stdout
    /// closes just before its exit status is known).
    pub async fn describe_settled(&self) -> Option<ProcessReport> {
        self.wait_for_exit(std::time::Duration::from_millis(500))
            .await;
        self.describe()
    }

    /// "it exited with status 3; its last stderr line: …" when the child is gone or wrote to
    /// stderr.
    pub fn describe(&self) -> Option<ProcessReport> {
        let exit = (*self.exit_status.borrow()).map(|status| format!("it {}", exit_words(status)));
        let exited = exit.is_some();
        let last_line = self
            .stderr_tail
            .lock()
            .ok()
            .and_then(|tail| tail.last_line())
            .map(|line| format!("its last stderr line: {line}"));
        let text = match (exit, last_line) {
            (None, None) => return None,
            (Some(exit), None) => exit,
            (None, Some(line)) => line,
            (Some(exit), Some(line)) => format!("{exit}; {line}"),
        };
        Some(ProcessReport { exited, text })
    }
}

/// How a child ended and what it said last, in words for a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProcessReport {
    /// The child is gone (else it only wrote to stderr).
    pub exited: bool,
    /// "it exited with status 3; its last stderr line: …"
    pub text: String,
}

/// "exited with status 3", "was killed by signal 9 (SIGKILL)".
fn exit_words(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    match status.signal() {
        Some(number) => match Signal::try_from(number) {
            Ok(signal) => format!("was killed by signal {number} ({})", signal.as_str()),
            Err(_) => format!("was killed by signal {number}"),
        },
        None => "exited".to_owned(),
    }
}

/// Forwards stderr lines to `tracing` (each cut to `line_bytes`, all within `budget_bytes`) and
/// keeps the latest output for error messages. Reading continues past the budget so the child
/// never blocks on a full pipe.
async fn pump_stderr(
    server_name: String,
    stderr: ChildStderr,
    tail: Arc<Mutex<StderrTail>>,
    line_bytes: usize,
    budget_bytes: usize,
) {
    let mut reader = BoundedLineReader::new(BufReader::new(stderr), line_bytes);
    let mut logged_bytes = 0usize;
    let mut dropped_bytes = 0usize;
    loop {
        let line = match reader.next_frame().await {
            Ok(Some(Frame::Line(line))) => line,
            Ok(Some(Frame::Oversized { mut prefix })) => {
                prefix.extend_from_slice(" [line cut]".as_bytes());
                prefix
            }
            Ok(None) | Err(_) => break,
        };
        let text = String::from_utf8_lossy(&line[..line.len().min(line_bytes + 16)]).into_owned();
        if let Ok(mut tail) = tail.lock() {
            tail.push(&text);
        }
        if logged_bytes + text.len() <= budget_bytes {
            logged_bytes += text.len();
            tracing::info!(target: "switchboard_mcp_client::stderr", server = %server_name, "{text}");
        } else {
            if dropped_bytes == 0 {
                tracing::warn!(server = %server_name, budget_bytes, "stderr log budget exhausted; further output is not logged");
            }
            dropped_bytes += text.len();
        }
    }
    if dropped_bytes > 0 {
        tracing::info!(server = %server_name, dropped_bytes, "stderr output not logged");
    }
}

/// The most recent stderr lines, at most `capacity` bytes.
#[derive(Debug)]
struct StderrTail {
    capacity: usize,
    size: usize,
    lines: VecDeque<String>,
}

impl StderrTail {
    fn new(capacity: usize) -> Self {
        Self {
            capacity,
            size: 0,
            lines: VecDeque::new(),
        }
    }

    fn push(&mut self, line: &str) {
        let mut line = line.to_owned();
        if line.len() > self.capacity {
            let mut cut = line.len() - self.capacity;
            while !line.is_char_boundary(cut) {
                cut += 1;
            }
            line = line[cut..].to_owned();
        }
        self.size += line.len();
        self.lines.push_back(line);
        while self.size > self.capacity {
            match self.lines.pop_front() {
                Some(removed) => self.size -= removed.len(),
                None => break,
            }
        }
    }

    #[cfg(test)]
    fn text(&self) -> String {
        self.lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// The last line with something on it, at most 300 characters.
    fn last_line(&self) -> Option<String> {
        let line = self
            .lines
            .iter()
            .rev()
            .find(|line| !line.trim().is_empty())?;
        let line = line.trim();
        Some(if line.chars().count() > 300 {
            let cut: String = line.chars().take(300).collect();
            format!("{cut}…")
        } else {
            line.to_owned()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_keeps_the_latest_bytes() {
        let mut tail = StderrTail::new(11);
        tail.push("first line");
        tail.push("second");
        tail.push("third");
        assert_eq!(tail.text(), "second\nthird");
        assert_eq!(tail.last_line().as_deref(), Some("third"));
        tail.push(&"x".repeat(25));
        assert_eq!(tail.text(), "x".repeat(11));
    }
}
