//! Kill the upstream mid-call (issue 18, target 9): turn after turn, the scripted model calls a
//! counting upstream (the Python SDK's FastMCP, `fixtures/counting_server.py`) whose one tool
//! records each execution before it works, and the test `kill -9`s the upstream's process at a
//! random point of the turn — a stdio upstream Switchboard started (its next call starts a new
//! process), or a Streamable HTTP upstream the test runs (its connections reset; the test
//! starts it again on the same port). For every turn:
//! - the answer ends with `done` within the call timeout + 5 s, its question and answer stored;
//! - the call ends in a final state (`completed`, `failed` or `unknown`), never left in flight;
//! - the call ran at most once (the fixture's count), and exactly once when it `completed`.
//!
//! At the end no upstream process is left a zombie, and the test process's open descriptors are
//! back to what they were after the first turns. CI runs [`DEFAULT_KILLS`] turns per transport;
//! `SWITCHBOARD_UPSTREAM_KILLS=1000` runs the long version (the notes' figure), and
//! `SWITCHBOARD_UPSTREAM_KILLS_VERBOSE=1` prints each turn's delay, final state and error.

use crate::support::chat::{ChatOptions, ChatServer, of_type, remote_server};
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use switchboard_core::TransportKind;
use switchboard_store::{NewServer, ServerConnectionConfig, ServerSecrets};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::interop::{free_port, interop};

const DEFAULT_KILLS: usize = 8;
/// How long the tool works once it has recorded its execution.
const WORK_MS: u64 = 150;
/// The longest wait between the question and the kill (a turn takes ~WORK_MS + 50–150 ms).
const MAX_DELAY_MS: u64 = 400;
const CALL_TIMEOUT_SECS: u64 = 5;

fn fixture() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/counting_server.py")
        .to_string_lossy()
        .into_owned()
}

fn python() -> String {
    interop(".venv/bin/python").to_string_lossy().into_owned()
}

/// The counting upstream over Streamable HTTP, run by the test.
struct HttpUpstream {
    port: u16,
    executions: PathBuf,
    pid_file: PathBuf,
    child: Option<Child>,
}

impl HttpUpstream {
    fn start(port: u16, executions: &Path, pid_file: &Path) -> Self {
        let mut upstream = Self {
            port,
            executions: executions.to_owned(),
            pid_file: pid_file.to_owned(),
            child: None,
        };
        upstream.ensure_running();
        upstream
    }

    /// Starts the server again when the last kill ended it; waits until it listens.
    fn ensure_running(&mut self) {
        if let Some(child) = &mut self.child
            && child.try_wait().unwrap().is_none()
        {
            return;
        }
        let child = Command::new(python())
            .args([&fixture(), "http", &self.port.to_string()])
            .arg(&self.executions)
            .arg(&self.pid_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the counting server did not listen"
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

impl Drop for HttpUpstream {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn stdio_upstream(executions: &Path, pid_file: &Path) -> NewServer {
    NewServer {
        name: "counter".to_owned(),
        transport: TransportKind::Stdio,
        url: None,
        command: Some(python()),
        args: vec![
            fixture(),
            "stdio".to_owned(),
            executions.to_string_lossy().into_owned(),
            pid_file.to_string_lossy().into_owned(),
        ],
        connection: ServerConnectionConfig::default(),
        secrets: ServerSecrets::default(),
        is_active: true,
    }
}

async fn chat_server(fake: &FakeOpenAi) -> ChatServer {
    let mut options = ChatOptions::openai(&fake.base_url());
    options.mcp.tool_call_timeout_secs = CALL_TIMEOUT_SECS;
    ChatServer::start(options).await
}

/// `kill -9` of the process whose id the fixture last wrote (nothing when it is gone already).
fn kill_upstream(pid_file: &Path) {
    let Some(pid) = std::fs::read_to_string(pid_file)
        .ok()
        .and_then(|text| text.trim().parse::<i32>().ok())
    else {
        return;
    };
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// How many times each marker's call ran, by the fixture's record.
fn executions(path: &Path) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
        *counts.entry(line.to_owned()).or_default() += 1;
    }
    counts
}

/// Processes of ours (children of this test process) left as zombies.
fn zombie_children() -> Vec<String> {
    let me = std::process::id().to_string();
    let mut zombies = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …: the command may hold spaces, so read after its last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") && fields.get(1) == Some(&me.as_str()) {
            zombies.push(stat);
        }
    }
    zombies
}

/// Our zombie children once every killed upstream had up to 5 s to be reaped.
async fn zombies_after_reaping() -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let zombies = zombie_children();
        if zombies.is_empty() || Instant::now() > deadline {
            return zombies;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What this process's open descriptors point at (`socket:[…]`, `pipe:[…]`, files), sorted.
fn open_descriptors() -> Vec<String> {
    let mut targets: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .map(|target| {
            let target = target.to_string_lossy().into_owned();
            // Sockets and pipes by kind: their inode numbers differ from run to run.
            match target.split_once(":[") {
                Some((kind, _)) => kind.to_owned(),
                None => target,
            }
        })
        .collect();
    targets.sort();
    targets
}

/// Waits up to 5 s for the open descriptors to be back within `slack` of `baseline` (a killed
/// upstream's pipes and a finished turn's connections close a moment after the answer); what
/// is open then.
async fn descriptors_after_settling(baseline: &[String], slack: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let now = open_descriptors();
        if now.len() <= baseline.len() + slack || Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How many descriptors of each kind `now` has beyond `baseline` (for a failure's message).
fn descriptors_added(baseline: &[String], now: &[String]) -> HashMap<String, i64> {
    let mut added: HashMap<String, i64> = HashMap::new();
    for target in now {
        *added.entry(target.clone()).or_default() += 1;
    }
    for target in baseline {
        *added.entry(target.clone()).or_default() -= 1;
    }
    added.retain(|_, count| *count != 0);
    added
}

/// One turn: the model calls `counter__record` with `marker`; the upstream is killed after a
/// random delay. Returns the call's final state and checks the turn's own invariants.
async fn killed_turn(
    server: &ChatServer,
    fake: &FakeOpenAi,
    pid_file: &Path,
    marker: &str,
    delay: Duration,
) -> String {
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        &format!("call-{marker}"),
        "counter__record",
        json!({"marker": marker, "work_ms": WORK_MS}),
    )]));
    fake.enqueue(ScriptedReply::text(&["done"]));
    let started = Instant::now();
    let mut stream = server
        .ask(json!({"message": format!("record {marker}")}))
        .await;
    let reading = tokio::spawn(async move { stream.until_done().await });
    tokio::time::sleep(delay).await;
    kill_upstream(pid_file);
    let events = tokio::time::timeout(Duration::from_secs(CALL_TIMEOUT_SECS + 5), reading)
        .await
        .unwrap_or_else(|_| panic!("turn {marker} did not end within the call timeout + 5 s"))
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(CALL_TIMEOUT_SECS + 5));
    let meta = &of_type(&events, "meta")[0];
    let conversation_id = meta["conversation_id"].as_str().unwrap().to_owned();
    server.wait_until_idle(&conversation_id).await;
    let messages = server.stored_messages(&conversation_id).await;
    let texts: Vec<&str> = messages
        .iter()
        .map(|message| message.content.as_str())
        .collect();
    assert!(
        texts.contains(&format!("record {marker}").as_str()),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"done"),
        "turn {marker}: the answer was not stored: {texts:?}"
    );
    let calls = server.stored_tool_calls(&conversation_id).await;
    assert_eq!(calls.len(), 1, "turn {marker}: {calls:?}");
    let state = calls[0].state.as_str().to_owned();
    assert!(
        matches!(state.as_str(), "completed" | "failed" | "unknown"),
        "turn {marker}: the call was left {state}"
    );
    if std::env::var_os("SWITCHBOARD_UPSTREAM_KILLS_VERBOSE").is_some() {
        let tool = of_type(&events, "mcp_tool");
        let last = tool
            .last()
            .map(|event| (event["error_code"].clone(), event["error"].clone()));
        eprintln!(
            "{marker} after {delay:?}: {state} {last:?} {}",
            meta["unavailable_servers"]
        );
    }
    state
}

/// The chat server, its scripted model and the counting upstream's files.
struct Rig {
    server: ChatServer,
    fake: FakeOpenAi,
    executions_file: PathBuf,
    pid_file: PathBuf,
    _dir: tempfile::TempDir,
}

impl Rig {
    async fn start() -> Self {
        let fake = FakeOpenAi::start().await;
        let server = chat_server(&fake).await;
        let dir = tempfile::tempdir().unwrap();
        Self {
            server,
            fake,
            executions_file: dir.path().join("executions"),
            pid_file: dir.path().join("pid"),
            _dir: dir,
        }
    }

    /// `kills` killed turns (`before_each` runs before each), then the run-at-most-once check.
    async fn run_kills(&self, transport: &str, kills: usize, before_each: &mut dyn FnMut()) {
        let mut states: HashMap<String, usize> = HashMap::new();
        let mut finals: Vec<(String, String)> = Vec::new();
        let mut seed = 0x5eed_u64 ^ transport.len() as u64;
        for kill in 0..kills {
            before_each();
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let delay = Duration::from_millis((seed >> 33) % MAX_DELAY_MS);
            let marker = format!("{transport}-{kill}");
            let state = self.turn(&marker, delay).await;
            *states.entry(state.clone()).or_default() += 1;
            finals.push((marker, state));
        }
        let ran = executions(&self.executions_file);
        for (marker, state) in &finals {
            let times = ran.get(marker).copied().unwrap_or(0);
            assert!(times <= 1, "{marker} ran {times} times");
            if state == "completed" {
                assert_eq!(times, 1, "{marker} completed but the upstream never ran it");
            }
        }
        eprintln!(
            "upstream kills ({transport}): {kills} turns, final states {states:?}, 0 lost, 0 run twice"
        );
    }

    async fn turn(&self, marker: &str, delay: Duration) -> String {
        killed_turn(&self.server, &self.fake, &self.pid_file, marker, delay).await
    }

    /// Once the upstream runs again and the session-error pause (1 s here) has passed, a call
    /// completes: a server that failed is tried again on use, not left out until the next
    /// background refresh.
    async fn recovers(&self, before: &mut dyn FnMut()) {
        before();
        tokio::time::sleep(Duration::from_millis(1100)).await;
        // The kill comes long after the answer, so this call runs undisturbed.
        let state = self.turn("recovered", Duration::from_secs(4)).await;
        assert_eq!(
            state, "completed",
            "the upstream was not used again after it came back"
        );
    }
}

fn kills() -> usize {
    std::env::var("SWITCHBOARD_UPSTREAM_KILLS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(DEFAULT_KILLS)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_a_stdio_upstream_mid_call_loses_nothing_and_runs_no_call_twice() {
    let rig = Rig::start().await;
    rig.server
        .register_server(stdio_upstream(&rig.executions_file, &rig.pid_file))
        .await;
    rig.run_kills("stdio-warm-up", 2, &mut || {}).await;
    let descriptors = open_descriptors();
    rig.run_kills("stdio", kills(), &mut || {}).await;
    rig.recovers(&mut || {}).await;
    // The last kill (in `recovers`) comes just before this check: the killed process is a
    // zombie until the session notices its end and reaps it, which takes a moment.
    let zombies = zombies_after_reaping().await;
    assert!(zombies.is_empty(), "zombies left: {zombies:?}");
    // One upstream process (and its pipes) may be alive at the end, as after the warm-up.
    let now = descriptors_after_settling(&descriptors, 8).await;
    assert!(
        now.len() <= descriptors.len() + 8,
        "descriptors: {} after warm-up, {} at the end; added: {:?}",
        descriptors.len(),
        now.len(),
        descriptors_added(&descriptors, &now)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_a_streamable_http_upstream_mid_call_loses_nothing_and_runs_no_call_twice() {
    let rig = Rig::start().await;
    let port = free_port();
    let mut upstream = HttpUpstream::start(port, &rig.executions_file, &rig.pid_file);
    let url = format!("http://127.0.0.1:{port}/mcp");
    rig.server
        .register_server(remote_server("counter", &url))
        .await;
    let mut restart = || upstream.ensure_running();
    rig.run_kills("http-warm-up", 2, &mut restart).await;
    let descriptors = open_descriptors();
    rig.run_kills("http", kills(), &mut restart).await;
    rig.recovers(&mut restart).await;
    let now = descriptors_after_settling(&descriptors, 8).await;
    assert!(
        now.len() <= descriptors.len() + 8,
        "descriptors: {} after warm-up, {} at the end; added: {:?}",
        descriptors.len(),
        now.len(),
        descriptors_added(&descriptors, &now)
    );
}
