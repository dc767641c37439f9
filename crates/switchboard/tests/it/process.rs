//! Spawning `switchboard` and waiting for its ready line.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const BINARY: &str = env!("CARGO_BIN_EXE_switchboard");
/// A fixed owner token so tests can authenticate from the first start.
pub const ADMIN_TOKEN: &str = "sb_test_admin_token_0123456789abcdef";

/// A `switchboard` command with a clean environment apart from what the test sets: no
/// settings leak in from the developer's shell.
pub fn command(data_dir: &Path) -> Command {
    let mut command = Command::new(BINARY);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("SWITCHBOARD_LOG_FILTER", "warn")
        .arg("--data-dir")
        .arg(data_dir);
    command
}

/// Runs an admin subcommand to completion.
pub fn run_cli(data_dir: &Path, args: &[&str]) -> Output {
    command(data_dir)
        .args(args)
        .output()
        .expect("run switchboard")
}

/// The stdout of a command that must have succeeded (its stderr and stdout in the panic if not).
pub fn stdout_of(output: &Output) -> String {
    assert!(
        output.status.success(),
        "command failed: {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The stdout of a command that must have succeeded, as JSON (`--json`).
pub fn json_of(output: &Output) -> serde_json::Value {
    let text = stdout_of(output);
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("not JSON ({error}):\n{text}"))
}

/// A running `switchboard serve`.
pub struct Service {
    pub child: Child,
    pub base_url: String,
    /// Everything the process printed on stdout before it was ready.
    pub stdout_before_ready: Vec<String>,
}

impl Service {
    /// Starts `serve` on an ephemeral port with `SWITCHBOARD_ADMIN_TOKEN` set.
    pub fn start(data_dir: &Path) -> Self {
        let mut command = command(data_dir);
        command.env("SWITCHBOARD_ADMIN_TOKEN", ADMIN_TOKEN);
        Self::start_command(command)
    }

    pub fn start_command(command: Command) -> Self {
        Self::start_command_with_stderr(command, Stdio::inherit())
    }

    /// Like [`Self::start_command`], with the process's stderr (its log) sent to `stderr`.
    pub fn start_command_with_stderr(mut command: Command, stderr: Stdio) -> Self {
        let mut child = command
            .args(["serve", "--bind", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn switchboard serve");
        let stdout = child.stdout.take().unwrap();
        let (lines_sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if lines_sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stdout_before_ready = Vec::new();
        loop {
            let line = match lines.recv_timeout(Duration::from_secs(60)) {
                Ok(line) => line,
                Err(error) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "switchboard never became ready ({error}); stdout: {stdout_before_ready:?}"
                    );
                }
            };
            if let Some(url) = line.strip_prefix("Switchboard is ready at ") {
                let base_url = url.trim().to_owned();
                return Self {
                    child,
                    base_url,
                    stdout_before_ready,
                };
            }
            stdout_before_ready.push(line);
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// `GET path` as the workspace owner: its JSON answer, which must be a 200.
    pub async fn get_json(&self, client: &reqwest::Client, path: &str) -> serde_json::Value {
        let response = client
            .get(self.url(path))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "GET {path}");
        response.json().await.unwrap()
    }

    /// SIGKILL: no chance to flush or clean up.
    pub fn kill_9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, then waits for the exit (panics after `limit`).
    pub fn terminate(mut self, limit: Duration) -> std::process::ExitStatus {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("switchboard did not exit within {limit:?} of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
