//! Tool calls that became tasks (the MCP tasks extension, SEP-2663,
//! `io.modelcontextprotocol/tasks`, as rmcp models it): the client declares the extension, a
//! server that declares it too may answer `tools/call` with a `CreateTaskResult`, and the
//! client polls `tasks/get` until the task is `completed` (its result inline), `failed` or
//! `cancelled`; `tasks/cancel` asks the server to stop it.
//!
//! Why a loop of its own and not one long request: the call timeout bounds each request (each
//! poll), not the task, so a task may run for hours; what bounds it is `mcp.task_max_secs`
//! or the task's own `ttl`, whichever ends first, counted from when this process began
//! following it. Each poll takes the concurrency places of one request and gives them back,
//! so a waiting task holds none. A poll that fails on the way (connection lost, timeout,
//! server restarting) is tried again at the next interval, up to [`MAX_POLL_FAILURES`] in a
//! row; a task is never started again here — the caller owns the task id, which is all a
//! restarted host needs to follow the same task ([`McpClient::resume_tool_task`]).
//!
//! A server may also tell the task's status itself (`notifications/tasks`, SEP-2663): the
//! follower takes it at once (`crate::task_watch`) — the status shown moves without waiting
//! for the next poll, and a finished task's result comes inline — and polls only as the
//! fallback. A caller's `detach` (the host stopping) ends the following without
//! `tasks/cancel`: the task keeps working for the next process.
//!
//! A task that asks its client something (status `input_required`, the questions in
//! `inputRequests`) is answered through the same parties as a call's own questions
//! (`crate::input_answers`: the call's client, Switchboard's forms) and given the answers
//! with `tasks/update`; each question once, by its key. One nobody can answer cancels it.

use super::CallContext;
use crate::UpstreamError;
use crate::client::McpClient;
use crate::notifications::CallEvent;
use crate::result::ToolResult;
use crate::server::UpstreamServer;
use rmcp::model::{
    CancelTaskParams, CancelTaskRequest, ClientRequest, DetailedTask, GetTaskParams,
    GetTaskRequest, InputRequests, ServerResult, Task, TaskPayload, TaskStatus, UpdateTaskParams,
    UpdateTaskRequest,
};
use serde_json::Value;
use std::collections::HashSet;
use std::time::{Duration, Instant};
use switchboard_core::{ToolTask, ToolTaskStatus};

/// Polls in a row that may fail on the way before the task is given up.
const MAX_POLL_FAILURES: u32 = 5;
/// The range a server's suggested `pollInterval` is held to.
const MIN_POLL_INTERVAL: Duration = Duration::from_millis(100);
const MAX_POLL_INTERVAL: Duration = Duration::from_secs(60);
/// How long the caller is waited for to take the task's id (it stores it).
const CREATED_EVENT_WAIT: Duration = Duration::from_secs(5);

/// What one poll said.
enum Polled {
    /// Still working; with the questions it waits on when its status is `input_required`.
    Running(Task, Option<InputRequests>),
    Done(Box<Result<ToolResult, UpstreamError>>),
}

/// The limits a followed task is held to.
/// What following one task keeps from poll to poll.
struct Following {
    clock: TaskClock,
    interval: Duration,
    /// The status last reported to the caller.
    reported: ToolTask,
    /// Polls failed in a row.
    failures: u32,
    /// The next poll goes at once (the first of a resumed task, or after answers were given).
    poll_now: bool,
    /// The keys of the task's questions already answered (unique for the task's life).
    answered: HashSet<String>,
}

struct TaskClock {
    started: Instant,
    max: Duration,
    ttl: Option<Duration>,
}

impl TaskClock {
    /// The earlier of the two ends and which one it is.
    fn deadline(&self) -> (Instant, Duration, &'static str) {
        match self.ttl {
            Some(ttl) if ttl < self.max => (self.started + ttl, ttl, "its ttl"),
            _ => (self.started + self.max, self.max, "mcp.task_max_secs"),
        }
    }
}

impl McpClient {
    /// Follows the task a `tools/call` just created until it ends; the caller hears of it
    /// first (its id, to keep) and at every change of status.
    pub(super) async fn follow_created_task(
        &self,
        server: &UpstreamServer,
        task: Task,
        context: &CallContext,
    ) -> Result<ToolResult, UpstreamError> {
        let reported = reported(&task);
        if let Some(events) = &context.events {
            let event = CallEvent::Task(reported.clone());
            let _ = tokio::time::timeout(CREATED_EVENT_WAIT, events.send(event)).await;
        }
        self.follow_task(server, &task.task_id, Some(task.clone()), reported, context)
            .await
    }

    /// Follows a task created earlier (by this process before a restart): polls `tasks/get`
    /// for `task_id` until it ends. The tool is never called again.
    pub async fn resume_tool_task(
        &self,
        server: &UpstreamServer,
        tool: &switchboard_core::ToolDefinition,
        task_id: &str,
        context: &CallContext,
    ) -> Result<ToolResult, UpstreamError> {
        let reported = ToolTask {
            task_id: task_id.to_owned(),
            status: ToolTaskStatus::Working,
            status_message: None,
        };
        let result = self
            .follow_task(server, task_id, None, reported, context)
            .await?;
        Ok(self.checked_output(tool, result))
    }

    async fn follow_task(
        &self,
        server: &UpstreamServer,
        task_id: &str,
        first: Option<Task>,
        reported: ToolTask,
        context: &CallContext,
    ) -> Result<ToolResult, UpstreamError> {
        let config = &self.inner.config;
        let mut following = Following {
            clock: TaskClock {
                started: Instant::now(),
                max: config.task_max(),
                ttl: None,
            },
            interval: config.task_poll_interval(),
            reported,
            failures: 0,
            // The first poll of a resumed task goes at once.
            poll_now: first.is_none(),
            answered: HashSet::new(),
        };
        if let Some(task) = &first {
            apply_hints(task, &mut following.interval, &mut following.clock);
        }
        // Told before the first poll, so a status sent meanwhile is not missed.
        let mut notifications = self.inner.task_watchers.watch(&server.id, task_id);
        let detach = context.detach.clone().unwrap_or_default();
        let max_bytes = self.limits(server).max_bytes;
        loop {
            let wait = if std::mem::take(&mut following.poll_now) {
                Duration::ZERO
            } else {
                following.interval
            };
            let (deadline, after, limit) = following.clock.deadline();
            let polled = tokio::select! {
                biased;
                () = detach.cancelled() => return Err(detached(task_id)),
                () = context.cancellation.cancelled() => {
                    self.cancel_task(server, task_id, context).await;
                    return Err(UpstreamError::Cancelled);
                }
                () = tokio::time::sleep_until(deadline.into()) => {
                    self.cancel_task(server, task_id, context).await;
                    return Err(UpstreamError::TaskExpired { task_id: task_id.to_owned(), after, limit });
                }
                // The server said first: no need to ask (the poll stays the fallback).
                notified = notifications.next() => Ok(polled_from(notified, task_id, max_bytes)),
                () = tokio::time::sleep(wait) => self.poll_task(server, task_id, context).await,
            };
            match polled {
                Ok(Polled::Done(outcome)) => return *outcome,
                Ok(Polled::Running(task, asked)) => {
                    self.still_running(server, task_id, task, asked, &mut following, context)
                        .await?;
                }
                Err(UpstreamError::Cancelled) if detach.is_cancelled() => {
                    return Err(detached(task_id));
                }
                Err(UpstreamError::Cancelled) => {
                    self.cancel_task(server, task_id, context).await;
                    return Err(UpstreamError::Cancelled);
                }
                Err(error)
                    if poll_may_recover(&error) && following.failures < MAX_POLL_FAILURES =>
                {
                    following.failures += 1;
                    tracing::info!(server = %server.name, %error, failures = following.failures, "a task poll failed; polling again");
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// A poll found the task still running: its hints and status are taken (a changed status
    /// is reported to the caller), and the questions it asks answered (then it is polled again
    /// at once). An error ends the following (the task is cancelled unless the caller detached).
    async fn still_running(
        &self,
        server: &UpstreamServer,
        task_id: &str,
        task: Task,
        asked: Option<InputRequests>,
        following: &mut Following,
        context: &CallContext,
    ) -> Result<(), UpstreamError> {
        following.failures = 0;
        apply_hints(&task, &mut following.interval, &mut following.clock);
        let now = reported_from(&task, task_id);
        if now != following.reported {
            following.reported = now;
            if let Some(events) = &context.events {
                let _ = events.try_send(CallEvent::Task(following.reported.clone()));
            }
        }
        let Some(asked) = asked else {
            return Ok(());
        };
        let given = self
            .give_task_input(server, task_id, asked, &mut following.answered, context)
            .await;
        match given {
            Ok(()) => {
                following.poll_now = true;
                Ok(())
            }
            Err(error @ UpstreamError::TaskDetached { .. }) => Err(error),
            Err(error) => {
                self.cancel_task(server, task_id, context).await;
                Err(error)
            }
        }
    }

    /// Answers the questions of `asked` not answered yet, through the same parties as a
    /// call's own (`crate::input_answers`), and sends the answers with `tasks/update`. The
    /// caller's cancel ends it (`Cancelled`), its detach too (`TaskDetached`, the task kept).
    async fn give_task_input(
        &self,
        server: &UpstreamServer,
        task_id: &str,
        asked: InputRequests,
        answered: &mut HashSet<String>,
        context: &CallContext,
    ) -> Result<(), UpstreamError> {
        let new: InputRequests = asked
            .into_iter()
            .filter(|(key, _)| !answered.contains(key))
            .collect();
        if new.is_empty() {
            return Ok(());
        }
        answered.extend(new.keys().cloned());
        let answerers = self.answerers(server, context);
        let detach = context.detach.clone().unwrap_or_default();
        let responses = tokio::select! {
            biased;
            () = detach.cancelled() => return Err(detached(task_id)),
            () = context.cancellation.cancelled() => return Err(UpstreamError::Cancelled),
            responses = super::input_required::answer_all(&answerers, new) => responses?,
        };
        let request = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(
            UpdateTaskParams::new(task_id.to_owned(), responses),
        ));
        self.send(server, request, context).await.map(|_| ())
    }

    /// One `tasks/get`.
    async fn poll_task(
        &self,
        server: &UpstreamServer,
        task_id: &str,
        context: &CallContext,
    ) -> Result<Polled, UpstreamError> {
        let request = ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(
            task_id.to_owned(),
        )));
        let (answer, limits) = self.send(server, request, context).await?;
        let ServerResult::GetTaskResult(answer) = answer else {
            return Err(UpstreamError::Protocol(
                "the tasks/get answer is not a task".into(),
            ));
        };
        Ok(polled_from(answer.task, task_id, limits.max_bytes))
    }

    /// `tasks/cancel`, sent even when the caller's own token is cancelled (that is often
    /// why); bounded by the call timeout, and a failure is only logged: cancellation is
    /// cooperative and the ack promises nothing.
    async fn cancel_task(&self, server: &UpstreamServer, task_id: &str, context: &CallContext) {
        let own = CallContext::new(context.caller.clone());
        let request = ClientRequest::CancelTaskRequest(CancelTaskRequest::new(
            CancelTaskParams::new(task_id.to_owned()),
        ));
        if let Err(error) = self.send(server, request, &own).await {
            tracing::warn!(server = %server.name, %error, "tasks/cancel failed");
        }
    }
}

/// What a `tasks/get` answer or a `notifications/tasks` says about the task (both carry a
/// `DetailedTask`: its result or error inline once it ended).
fn polled_from(detailed: DetailedTask, task_id: &str, max_bytes: usize) -> Polled {
    let ended = |reason: String| {
        Polled::Done(Box::new(Err(UpstreamError::TaskFailed {
            task_id: task_id.to_owned(),
            reason,
        })))
    };
    match detailed.payload {
        TaskPayload::Completed { result } => {
            let result = Value::Object(result);
            Polled::Done(Box::new(decode_result(&result, max_bytes)))
        }
        TaskPayload::Failed { error } => {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)");
            ended(format!("failed upstream: {message}"))
        }
        TaskPayload::Cancelled => ended("was cancelled by its server".to_owned()),
        TaskPayload::InputRequired { input_requests } => {
            Polled::Running(detailed.task, Some(input_requests))
        }
        _ => Polled::Running(detailed.task, None),
    }
}

fn detached(task_id: &str) -> UpstreamError {
    UpstreamError::TaskDetached {
        task_id: task_id.to_owned(),
    }
}

/// The task's suggested poll interval (held to a sane range) and its ttl.
fn apply_hints(task: &Task, interval: &mut Duration, clock: &mut TaskClock) {
    if let Some(millis) = task.poll_interval_ms {
        *interval = Duration::from_millis(millis).clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL);
    }
    clock.ttl = task.ttl_ms.map(Duration::from_millis);
}

fn reported(task: &Task) -> ToolTask {
    reported_from(task, &task.task_id)
}

fn reported_from(task: &Task, task_id: &str) -> ToolTask {
    ToolTask {
        task_id: task_id.to_owned(),
        status: status_of(task.status),
        status_message: task.status_message.clone(),
    }
}

fn status_of(status: TaskStatus) -> ToolTaskStatus {
    match status {
        TaskStatus::InputRequired => ToolTaskStatus::InputRequired,
        TaskStatus::Completed => ToolTaskStatus::Completed,
        TaskStatus::Failed => ToolTaskStatus::Failed,
        TaskStatus::Cancelled => ToolTaskStatus::Cancelled,
        _ => ToolTaskStatus::Working,
    }
}

/// A poll failure after which the task may still be there (the task lives on the server,
/// not in the session).
fn poll_may_recover(error: &UpstreamError) -> bool {
    matches!(
        error,
        UpstreamError::ConnectionLost(_)
            | UpstreamError::Timeout(_)
            | UpstreamError::Connect { .. }
            | UpstreamError::Busy { .. }
            | UpstreamError::SessionUnavailable { .. }
            | UpstreamError::InitTimeout { .. }
            | UpstreamError::Initialize { .. }
    )
}

/// A completed task's result (a `CallToolResult`) in our shape, under the size cap.
fn decode_result(result: &Value, max_bytes: usize) -> Result<ToolResult, UpstreamError> {
    let bytes =
        serde_json::to_vec(result).map_err(|error| UpstreamError::Protocol(error.to_string()))?;
    if bytes.len() > max_bytes {
        return Err(UpstreamError::ResponseTooLarge { limit: max_bytes });
    }
    serde_json::from_slice(&bytes).map_err(|error| {
        UpstreamError::Protocol(format!("the task's result is malformed: {error}"))
    })
}
