//! SIGTERM on the real binary while an answer is waiting for a slow stdio tool call
//! (`server-everything`'s `trigger-long-running-operation`, a child process of the service).
//! With time to spare the answer finishes during the drain while new answers get 503; with a
//! 1 s grace it is cut, says so, and keeps what it produced. Either way the process exits and
//! leaves no child process behind.

use crate::chat::{everything_js, with_model};
use crate::process::{ADMIN_TOKEN, Service};
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchboard_test_support::fake_openai::{
    FakeOpenAi, ScriptedReply, ScriptedToolCall, StreamEnding, finish_chunk, role_chunk,
    text_chunk, tool_call_delta_chunk, usage_chunk,
};

/// Reads an answer's SSE events one at a time.
struct Events {
    stream: futures::stream::BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buffer: String,
}

impl Events {
    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200);
        Self {
            stream: response
                .bytes_stream()
                .map(|chunk| chunk.map(|bytes| bytes.to_vec()))
                .boxed(),
            buffer: String::new(),
        }
    }

    /// The next event, `None` at the end of the stream; panics after 20 s of silence.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if let Some(data) = block.lines().find_map(|line| line.strip_prefix("data: ")) {
                    return Some(serde_json::from_str(data).unwrap());
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.stream.next())
                .await
                .expect("no SSE bytes for 20 s")?;
            self.buffer.push_str(&String::from_utf8_lossy(
                &chunk.expect("the SSE stream failed"),
            ));
        }
    }

    /// Every event up to and including the first one `last` accepts.
    async fn until(&mut self, last: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            let found = last(&event);
            events.push(event);
            if found {
                return events;
            }
        }
        panic!("the stream ended early: {events:#?}");
    }
}

fn is_done(event: &Value) -> bool {
    event["type"] == "done"
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|event| event["type"] == kind)
        .collect()
}

fn text_of(events: &[Value]) -> String {
    events
        .iter()
        .filter_map(|event| event["token"].as_str())
        .collect()
}

/// Every live descendant of `pid` (from `/proc`).
fn descendants(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse().ok())
        else {
            continue;
        };
        if let Some((parent, _)) = stat_of(child) {
            parents.push((child, parent));
        }
    }
    let mut found = vec![pid];
    let mut index = 0;
    while index < found.len() {
        let parent = found[index];
        found.extend(
            parents
                .iter()
                .filter(|(_, of)| *of == parent)
                .map(|(child, _)| *child),
        );
        index += 1;
    }
    found.remove(0);
    found
}

/// (parent pid, state letter) of a process, `None` when it is gone.
fn stat_of(pid: u32) -> Option<(u32, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid …": comm may hold spaces, so read after its closing parenthesis.
    let mut fields = stat[stat.rfind(')')? + 2..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    Some((parent, state))
}

/// Panics if any of `pids` still runs (a zombie waiting for its reaper counts as gone).
fn assert_all_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let alive: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|pid| stat_of(*pid).is_some_and(|(_, state)| state != 'Z'))
            .collect();
        if alive.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "child processes outlived the service: {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn send_sigterm(service: &Service) {
    let pid = nix::unistd::Pid::from_raw(service.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
}

/// Polls for the exit (the test keeps reading SSE meanwhile, so no blocking wait).
async fn wait_for_exit(service: &mut Service, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = service.child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "switchboard did not exit within {limit:?} of SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn register_slow_stdio_server(client: &reqwest::Client, service: &Service) {
    let registered = client
        .post(service.url("/api/mcp/servers"))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"name": "slow", "transport": "stdio", "command": "node", "args": [everything_js(), "stdio"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        registered.status(),
        201,
        "{}",
        registered.text().await.unwrap()
    );
}

async fn ask(client: &reqwest::Client, service: &Service, message: &str) -> reqwest::Response {
    client
        .post(service.url("/chat/stream"))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"message": message}))
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_the_answer_in_flight_finish_its_tool_call_then_exits() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_slow",
        "slow__trigger-long-running-operation",
        json!({"duration": 2, "steps": 2}),
    )]));
    fake.enqueue(ScriptedReply::text(&["The operation ", "finished."]));
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let mut service = Service::start_command(with_model(data_dir.path(), &fake));
    register_slow_stdio_server(&client, &service).await;

    let mut events = Events::new(ask(&client, &service, "run the long operation").await);
    let mut seen = events
        .until(|event| event["type"] == "mcp_tool" && event["status"] == "started")
        .await;
    let conversation_id = seen[0]["conversation_id"].as_str().unwrap().to_owned();
    let children = descendants(service.child.id());
    assert!(!children.is_empty(), "the stdio server runs as a child");
    let signalled = Instant::now();
    send_sigterm(&service);

    // The drain: not ready, new answers refused, this one goes on.
    wait_until_draining(&client, &service).await;
    let refused = ask(&client, &service, "one more question").await;
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "shutting_down", "{body}");

    seen.extend(events.until(is_done).await);
    let ended = of_type(&seen, "mcp_tool")
        .into_iter()
        .find(|event| event["status"] != "started" && event["status"] != "progress")
        .unwrap_or_else(|| panic!("the call never ended: {seen:#?}"));
    assert_eq!(ended["status"], "completed", "{seen:#?}");
    assert!(of_type(&seen, "error").is_empty(), "{seen:#?}");
    assert_eq!(text_of(&seen), "The operation finished.");
    assert_eq!(seen.last().unwrap()["outcome"], "completed");

    let status = wait_for_exit(&mut service, Duration::from_secs(10)).await;
    assert!(status.success(), "exit status {status:?}");
    let stopped_after = signalled.elapsed();
    assert!(
        stopped_after < Duration::from_secs(10),
        "stopped {stopped_after:?} after SIGTERM: the drain ends with the answer, not at the 30 s grace"
    );
    assert_all_gone(&children);

    let service = Service::start_command(with_model(data_dir.path(), &fake));
    let detail = service
        .get_json(&client, &format!("/chat/conversations/{conversation_id}"))
        .await;
    let roles: Vec<&str> = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant"],
        "{detail:#}"
    );
    assert_eq!(detail["messages"][3]["content"], "The operation finished.");
    assert_eq!(detail["tool_calls"][0]["state"], "completed", "{detail:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_a_short_grace_cuts_the_answer_keeps_it_and_leaves_no_child() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::raw_stream(
        vec![
            role_chunk(),
            text_chunk("Starting the long operation. "),
            tool_call_delta_chunk(
                Some(0),
                Some("call_slow"),
                Some("slow__trigger-long-running-operation"),
                &json!({"duration": 60, "steps": 60}).to_string(),
            ),
            finish_chunk("tool_calls"),
            usage_chunk(40, 12),
        ],
        StreamEnding::Done,
    ));
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let mut command = with_model(data_dir.path(), &fake);
    command.env("SWITCHBOARD_SERVER_SHUTDOWN_GRACE_SECS", "1");
    let mut service = Service::start_command(command);
    register_slow_stdio_server(&client, &service).await;

    let mut events = Events::new(ask(&client, &service, "run the long operation").await);
    let mut seen = events
        .until(|event| event["type"] == "mcp_tool" && event["status"] == "started")
        .await;
    let conversation_id = seen[0]["conversation_id"].as_str().unwrap().to_owned();
    let children = descendants(service.child.id());
    assert!(!children.is_empty(), "the stdio server runs as a child");
    let signalled = Instant::now();
    send_sigterm(&service);

    seen.extend(events.until(is_done).await);
    let cut_after = signalled.elapsed();
    assert!(
        cut_after >= Duration::from_millis(900) && cut_after < Duration::from_secs(5),
        "cut {cut_after:?} after SIGTERM with a 1 s grace"
    );
    let errors = of_type(&seen, "error");
    assert_eq!(errors.len(), 1, "{seen:#?}");
    assert_eq!(errors[0]["code"], "shutting_down", "{seen:#?}");
    assert_eq!(seen.last().unwrap()["outcome"], "cancelled");
    assert!(events.next().await.is_none(), "the stream ends after done");

    let status = wait_for_exit(&mut service, Duration::from_secs(15)).await;
    assert!(status.success(), "exit status {status:?}");
    assert_all_gone(&children);

    let service = Service::start_command(with_model(data_dir.path(), &fake));
    let detail = service
        .get_json(&client, &format!("/chat/conversations/{conversation_id}"))
        .await;
    assert_eq!(
        detail["messages"][1]["content"], "Starting the long operation. ",
        "{detail:#}"
    );
    assert_eq!(
        detail["tool_calls"][0]["state"], "unknown",
        "sent, then cancelled by the shutdown: {detail:#}"
    );
    assert_eq!(fake.requests().len(), 1, "the model was not asked again");
}

/// The service with every tool call waiting for a person's approval.
fn asking_service(
    data_dir: &std::path::Path,
    fake: &FakeOpenAi,
    grace_secs: Option<&str>,
) -> Service {
    let mut command = with_model(data_dir, fake);
    command.env("SWITCHBOARD_APPROVAL_DEFAULT_POLICY", "ASK_USER");
    if let Some(grace_secs) = grace_secs {
        command.env("SWITCHBOARD_SERVER_SHUTDOWN_GRACE_SECS", grace_secs);
    }
    Service::start_command(command)
}

fn echo_call() -> ScriptedReply {
    ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_echo",
        "slow__echo",
        json!({"message": "hello"}),
    )])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_decided_during_the_drain_lets_the_answer_finish() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(echo_call());
    fake.enqueue(ScriptedReply::text(&["Echoed."]));
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let mut service = asking_service(data_dir.path(), &fake, None);
    register_slow_stdio_server(&client, &service).await;

    let mut events = Events::new(ask(&client, &service, "echo hello").await);
    let mut seen = events
        .until(|event| event["type"] == "approval_required")
        .await;
    let approval_id = seen.last().unwrap()["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    send_sigterm(&service);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let decided = client
        .post(service.url(&format!("/chat/approvals/{approval_id}")))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"decision": "approve", "remember": "once"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        decided.status(),
        200,
        "a decision is taken during the drain: {}",
        decided.text().await.unwrap()
    );
    seen.extend(events.until(is_done).await);
    let resolved = of_type(&seen, "approval_resolved");
    assert_eq!(resolved[0]["decision"], "approved", "{seen:#?}");
    assert!(
        of_type(&seen, "mcp_tool")
            .iter()
            .any(|event| event["status"] == "completed"),
        "{seen:#?}"
    );
    assert_eq!(text_of(&seen), "Echoed.");
    assert_eq!(seen.last().unwrap()["outcome"], "completed");
    let status = wait_for_exit(&mut service, Duration::from_secs(10)).await;
    assert!(status.success(), "exit status {status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_still_waiting_when_the_grace_ends_is_cancelled_not_left_pending() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(echo_call());
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let mut service = asking_service(data_dir.path(), &fake, Some("1"));
    register_slow_stdio_server(&client, &service).await;

    let mut events = Events::new(ask(&client, &service, "echo hello").await);
    let mut seen = events
        .until(|event| event["type"] == "approval_required")
        .await;
    let conversation_id = seen[0]["conversation_id"].as_str().unwrap().to_owned();
    send_sigterm(&service);
    seen.extend(events.until(is_done).await);
    let resolved = of_type(&seen, "approval_resolved");
    assert_eq!(resolved.len(), 1, "{seen:#?}");
    assert_eq!(resolved[0]["decision"], "cancelled", "{seen:#?}");
    assert_eq!(of_type(&seen, "error")[0]["code"], "shutting_down");
    assert_eq!(seen.last().unwrap()["outcome"], "cancelled");
    let status = wait_for_exit(&mut service, Duration::from_secs(15)).await;
    assert!(status.success(), "exit status {status:?}");

    let service = Service::start_command(with_model(data_dir.path(), &fake));
    let detail = service
        .get_json(&client, &format!("/chat/conversations/{conversation_id}"))
        .await;
    assert_eq!(
        detail["tool_calls"][0]["state"], "denied",
        "never run: {detail:#}"
    );
    let listed: Value = client
        .get(service.url(&format!(
            "/chat/approvals?conversation_id={conversation_id}&state=all"
        )))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        listed["approvals"][0]["status"], "cancelled",
        "recorded by the shutdown, not expired by the next start: {listed:#}"
    );
}

/// Polls `/readyz` until the drain shows there (503, `checks.shutdown` DOWN).
async fn wait_until_draining(client: &reqwest::Client, service: &Service) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let ready = client.get(service.url("/readyz")).send().await.unwrap();
        if ready.status() == 503 {
            let body: Value = ready.json().await.unwrap();
            assert_eq!(body["checks"]["shutdown"]["status"], "DOWN", "{body}");
            return;
        }
        assert!(Instant::now() < deadline, "/readyz still 200 after SIGTERM");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sigterm_ends_the_drain_at_once() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_slow",
        "slow__trigger-long-running-operation",
        json!({"duration": 60, "steps": 60}),
    )]));
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let mut service = Service::start_command(with_model(data_dir.path(), &fake));
    register_slow_stdio_server(&client, &service).await;

    let mut events = Events::new(ask(&client, &service, "run the long operation").await);
    let mut seen = events
        .until(|event| event["type"] == "mcp_tool" && event["status"] == "started")
        .await;
    let children = descendants(service.child.id());
    send_sigterm(&service);
    wait_until_draining(&client, &service).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = Instant::now();
    send_sigterm(&service);

    seen.extend(events.until(is_done).await);
    assert!(
        second.elapsed() < Duration::from_secs(3),
        "cut {:?} after the second SIGTERM (the grace is 30 s)",
        second.elapsed()
    );
    assert_eq!(
        of_type(&seen, "error")[0]["code"],
        "shutting_down",
        "{seen:#?}"
    );
    assert_eq!(seen.last().unwrap()["outcome"], "cancelled");
    let status = wait_for_exit(&mut service, Duration::from_secs(10)).await;
    assert!(status.success(), "exit status {status:?}");
    assert_all_gone(&children);
}
