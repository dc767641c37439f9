//! One tool step: the calls of one assistant message, run in parallel (bounded by
//! `max_parallel_tool_calls`), each through the same recorded life:
//!
//! `proposed` (row written) → approval gate → `approved` | `denied` → `dispatched` (committed
//! **before** the request leaves) → `completed` | `failed` | `unknown`, in three commits on
//! the allowed path (`crate::call_records`: `approved`+`dispatched` is one, the final state
//! with its audit row another).
//!
//! A call outside the step's `tool_choice` (any call under `none`, another tool than the
//! forced one) is recorded and answered with an `outside_tool_choice` error result, without
//! reaching the gate.
//!
//! Every call ends with a tool message for the model (its result, or an error object) stored
//! as soon as it is known, and an `mcp_tool` event. A failure never ends the turn: unknown
//! tools, invalid arguments, denials, unreachable servers, timeouts and upstream deaths all go
//! back to the model as error results. Only a store failure (we could not record) ends it.

use super::TurnRun;
use super::call_outcome::{Settled, failure, parse_arguments, settle};
use super::progress_throttle::{PROGRESS_MIN_INTERVAL, ProgressThrottle};
use crate::call_records;
use crate::error::ChatResult;
use crate::events::{ChatEvent, ToolEvent, ToolEventStatus, ToolProgress, tool_intent};
use crate::gate::{CallReport, EventSink, GateDecision, GateRequest};
use crate::task_calls::FollowedTask;
use crate::tools::{
    CallTarget, cut_for_model, error_text_for_model, event_result, result_text_for_model,
    stored_content,
};
use futures::StreamExt;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_core::{
    ChatMessage, ChatRole, ImageInput, MessageId, ServerId, ToolApp, ToolCallId, ToolCallRequest,
    ToolCallState, ToolMessageMetadata,
};
use switchboard_llm::ToolChoice;
use switchboard_mcp_client::{CallContext, CallEvent, ToolRoute};
use tokio::sync::mpsc;

/// Progress reports held for forwarding while the turn emits others (more are dropped by the
/// client, which never blocks on a slow reader).
const PROGRESS_BUFFER: usize = 32;
use switchboard_store::{
    MessageStatus, NewAuditEvent, NewMessage, NewToolCall, ToolCallOutcome, ToolCallRecord,
};

/// Runs `calls` (made by the assistant message `message_id`) and returns one tool message per
/// call, in the calls' order.
pub(crate) async fn run_tool_calls(
    run: &TurnRun<'_>,
    message_id: &MessageId,
    calls: Vec<ToolCallRequest>,
    choice: &ToolChoice,
) -> ChatResult<Vec<ChatMessage>> {
    let parallel = run.engine.config.max_parallel_tool_calls.max(1);
    let mut finished: Vec<(usize, ChatMessage)> =
        futures::stream::iter(calls.into_iter().enumerate())
            .map(|(index, call)| async move {
                run_one_call(run, message_id, call, choice)
                    .await
                    .map(|message| (index, message))
            })
            .buffer_unordered(parallel)
            .collect::<Vec<ChatResult<(usize, ChatMessage)>>>()
            .await
            .into_iter()
            .collect::<ChatResult<_>>()?;
    finished.sort_by_key(|(index, _)| *index);
    Ok(finished.into_iter().map(|(_, message)| message).collect())
}

/// One call's life: recorded `proposed`, checked (tool choice, known tool, arguments),
/// reviewed by the gate, dispatched, finished, reported to the gate.
async fn run_one_call(
    run: &TurnRun<'_>,
    message_id: &MessageId,
    call: ToolCallRequest,
    choice: &ToolChoice,
) -> ChatResult<ChatMessage> {
    if run.offer.is_search(&call.name) && outside_choice(choice, &call.name).is_none() {
        return super::search_call::run_search_call(run, message_id, call).await;
    }
    let found = run.tools.lookup(&call.name);
    let names = CallNames::of(found, &call);
    let record = record_proposed(run, message_id, &call, &names).await?;
    let parsed = parse_arguments(&call.arguments);
    let event = EventTemplate::new(run, &call, &record, names, &parsed);
    let refusal = match (outside_choice(choice, &call.name), found, parsed) {
        (Some(message), _, _) => failure(ToolCallState::Failed, "outside_tool_choice", message),
        (None, None, _) => failure(
            ToolCallState::Failed,
            "unknown_tool",
            format!(
                "no tool named '{}' is offered in this conversation",
                call.name
            ),
        ),
        (None, Some(_), Err(message)) => {
            failure(ToolCallState::Failed, "invalid_arguments", message)
        }
        (None, Some((route, target)), Ok(arguments)) => {
            let call = ReviewedCall {
                run,
                record: &record,
                call: &call,
                route,
                target,
                event: &event,
            };
            return call.review_and_run(arguments).await;
        }
    };
    finish_call(run, &record, &call, refusal, &event, None).await
}

/// Where a call goes, as the model named it: an unknown tool has no server.
pub(super) struct CallNames {
    pub server_id: Option<ServerId>,
    pub app: Option<ToolApp>,
    pub server_name: String,
    pub tool_name: String,
}

impl CallNames {
    fn of(found: Option<(&ToolRoute, &CallTarget)>, call: &ToolCallRequest) -> Self {
        match found {
            Some((route, target)) => CallNames {
                server_id: target.registered_server_id.clone(),
                app: ToolApp::of(target.registered_server_id.as_ref(), &route.tool),
                server_name: route.server_name.clone(),
                tool_name: route.tool_name.clone(),
            },
            None => CallNames {
                server_id: None,
                app: None,
                server_name: String::new(),
                tool_name: call.name.clone(),
            },
        }
    }
}

/// Writes the call's row, in state `proposed`.
pub(super) async fn record_proposed(
    run: &TurnRun<'_>,
    message_id: &MessageId,
    call: &ToolCallRequest,
    names: &CallNames,
) -> ChatResult<ToolCallRecord> {
    let new_call = NewToolCall {
        conversation_id: run.plan.conversation.id.clone(),
        message_id: Some(message_id.clone()),
        llm_call_id: call.id.clone(),
        server_id: names.server_id.clone(),
        server_name: names.server_name.clone(),
        tool_name: names.tool_name.clone(),
        arguments: call.arguments.clone(),
    };
    Ok(run
        .engine
        .store
        .create_tool_call(&run.plan.conversation.workspace_id, new_call)
        .await?)
}

/// What every `mcp_tool` event of one call repeats.
pub(super) struct EventTemplate {
    call_id: String,
    tool_call_id: ToolCallId,
    tool: String,
    server: String,
    intent: String,
    arguments: Value,
    app: Option<ToolApp>,
}

impl EventTemplate {
    pub(super) fn new(
        run: &TurnRun<'_>,
        call: &ToolCallRequest,
        record: &ToolCallRecord,
        names: CallNames,
        parsed: &Result<Value, String>,
    ) -> Self {
        EventTemplate {
            call_id: call.id.clone(),
            tool_call_id: record.id.clone(),
            intent: tool_intent(
                run.answering_model().provider.provider_name(),
                &names.tool_name,
            ),
            tool: names.tool_name,
            server: names.server_name,
            app: names.app,
            // The raw text as a JSON string when it was not valid JSON.
            arguments: parsed
                .clone()
                .unwrap_or_else(|_| Value::String(call.arguments.clone())),
        }
    }

    fn event(
        &self,
        status: ToolEventStatus,
        state: ToolCallState,
        duration: Option<Duration>,
    ) -> ToolEvent {
        ToolEvent {
            call_id: self.call_id.clone(),
            tool_call_id: self.tool_call_id.clone(),
            tool: self.tool.clone(),
            server: self.server.clone(),
            intent: self.intent.clone(),
            status,
            state,
            arguments: self.arguments.clone(),
            result: None,
            result_truncated: false,
            error: None,
            error_code: None,
            duration_ms: duration.map(|duration| duration.as_millis() as u64),
            app: self.app.clone(),
            progress: None,
            task: None,
        }
    }
}

/// A call to a tool that exists, with valid arguments: what goes through the gate.
struct ReviewedCall<'a, 'r> {
    run: &'a TurnRun<'r>,
    record: &'a ToolCallRecord,
    call: &'a ToolCallRequest,
    route: &'a ToolRoute,
    target: &'a CallTarget,
    event: &'a EventTemplate,
}

impl ReviewedCall<'_, '_> {
    /// Gate, then dispatch (when allowed), then the final record, then the gate's report.
    async fn review_and_run(&self, arguments: Value) -> ChatResult<ChatMessage> {
        let run = self.run;
        let request = GateRequest {
            principal: run.plan.principal.clone(),
            conversation_id: run.plan.conversation.id.clone(),
            conversation_owner: run.plan.conversation.owner_user_id.clone(),
            tool_call_id: self.record.id.clone(),
            llm_call_id: self.call.id.clone(),
            target: self.target.gate_target.clone(),
            tool: self.route.tool.clone(),
            arguments: arguments.clone(),
            cancellation: run.handle.cancellation.clone(),
            origin: crate::gate::CallOrigin::Chat,
            client_approver: None,
        };
        let handle = Arc::clone(run.handle);
        let sink = EventSink::new(move |event| handle.emit(event));
        let decision = run.engine.gate.review(&request, &sink).await;
        let settled = match &decision {
            GateDecision::Deny { reason, .. } => self.denied(reason).await?,
            GateDecision::Allow { .. } => self.allowed(arguments).await?,
        };
        if is_detached(&settled) {
            // The service is stopping while the call's task works: no final state (the call
            // stays `dispatched` with its task id, followed by the next process), no audit
            // row yet (that process writes it), nothing stored for the model.
            let (code, message) = settled.error.unwrap_or_default();
            return Ok(ChatMessage::tool_error(
                self.call.id.clone(),
                error_text_for_model(&code, &message),
            ));
        }
        let report = CallReport {
            request,
            decision,
            final_state: settled.state,
            duration: settled.duration,
            result_bytes: settled.result.as_ref().and_then(crate::gate::json_byte_len),
            error: settled.error.as_ref().map(|(_, message)| message.clone()),
        };
        let audit = run.engine.gate.audit_event(&report);
        let message = finish_call(run, self.record, self.call, settled, self.event, audit).await?;
        run.engine.gate.call_finished(&report).await;
        Ok(message)
    }

    async fn denied(&self, reason: &str) -> ChatResult<Settled> {
        let outcome = ToolCallOutcome {
            result: None,
            error: Some(reason.to_owned()),
        };
        transition(self.run, self.record, ToolCallState::Denied, outcome).await?;
        Ok(failure(
            ToolCallState::Denied,
            "denied",
            format!("the call was not allowed: {reason}"),
        ))
    }

    async fn allowed(&self, arguments: Value) -> ChatResult<Settled> {
        let run = self.run;
        if run.handle.cancellation.is_cancelled() {
            transition(
                run,
                self.record,
                ToolCallState::Approved,
                ToolCallOutcome::default(),
            )
            .await?;
            return Ok(failure(
                ToolCallState::Failed,
                "cancelled",
                "the answer was cancelled before the call was sent".to_owned(),
            ));
        }
        // `approved` and `dispatched`, committed before the request leaves: a crash from here
        // on leaves `dispatched`, which start-up turns into `unknown`, never a silent re-run.
        call_records::dispatch(&run.engine.store, self.record).await?;
        run.handle.emit(ChatEvent::McpTool(self.event.event(
            ToolEventStatus::Started,
            ToolCallState::Dispatched,
            None,
        )));
        let (progress_sender, mut progress) = mpsc::channel(PROGRESS_BUFFER);
        let context = CallContext {
            caller: run.caller.clone(),
            cancellation: run.handle.cancellation.child_token(),
            events: Some(progress_sender),
            client_link: None,
            // Stopping the service leaves a task working upstream, for the next process.
            detach: Some(run.engine.shutdown.clone()),
        };
        let started = Instant::now();
        let call = run
            .engine
            .tools
            .call(self.target, &self.route.tool, arguments, &context);
        tokio::pin!(call);
        // Progress is forwarded while the call runs, paced by the throttle; a report after the
        // answer is dropped, so `progress` never follows the call's last event.
        let mut throttle = ProgressThrottle::new(PROGRESS_MIN_INTERVAL);
        let mut followed = None;
        let outcome = loop {
            let due = throttle.due_at();
            tokio::select! {
                outcome = &mut call => break outcome,
                Some(event) = progress.recv() => {
                    if let CallEvent::Task(task) = event {
                        self.on_task(task, &mut followed, &context).await?;
                    } else if let Some(event) = throttle.offer(event, Instant::now()) {
                        self.forward_progress(event);
                    }
                }
                () = sleep_until_due(due), if due.is_some() => {
                    if let Some(event) = throttle.take_due(Instant::now()) {
                        self.forward_progress(event);
                    }
                }
            }
        };
        Ok(settle(outcome, started.elapsed()))
    }

    /// The call became a task, or its task moved on: the task's id and status are stored
    /// with the call at once (a restarted host follows it, see `crate::task_resume`; a page
    /// opened later shows the status), the call becomes cancellable by itself
    /// (`crate::task_calls`), and a `task` event shows its status.
    async fn on_task(
        &self,
        task: switchboard_core::ToolTask,
        followed: &mut Option<FollowedTask>,
        context: &CallContext,
    ) -> ChatResult<()> {
        call_records::keep_task(&self.run.engine.store, self.record, &task).await?;
        if followed.is_none() {
            *followed = Some(self.run.engine.task_calls.follow(
                &self.record.id,
                &self.run.plan.conversation.id,
                context.cancellation.clone(),
            ));
        }
        let mut tool_event =
            self.event
                .event(ToolEventStatus::Task, ToolCallState::Dispatched, None);
        tool_event.task = Some(Box::new(task));
        self.run.handle.emit(ChatEvent::McpTool(tool_event));
        Ok(())
    }

    /// An upstream's progress report as a `progress` event (log messages are not shown).
    fn forward_progress(&self, event: CallEvent) {
        let CallEvent::Progress {
            progress,
            total,
            message,
        } = event
        else {
            return;
        };
        let mut tool_event =
            self.event
                .event(ToolEventStatus::Progress, ToolCallState::Dispatched, None);
        tool_event.progress = Some(ToolProgress {
            progress,
            total,
            message,
        });
        self.run.handle.emit(ChatEvent::McpTool(tool_event));
    }
}

/// A call left to its task when the service stopped (`UpstreamError::TaskDetached`).
fn is_detached(settled: &Settled) -> bool {
    settled
        .error
        .as_ref()
        .is_some_and(|(code, _)| code == "task_detached")
}

/// Waits until `due` (a throttled progress report's time); forever when there is none.
async fn sleep_until_due(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due.into()).await,
        None => std::future::pending().await,
    }
}

/// Why a call the model returned is outside the step's `tool_choice` (any call under `none`,
/// another tool than the forced one), or `None` when the choice allows it. Such a call is
/// answered with an error result and never reaches the gate or the server: a model that
/// ignores `tool_choice` must not get its way.
fn outside_choice(choice: &ToolChoice, called: &str) -> Option<String> {
    match choice {
        ToolChoice::None => Some(format!(
            "tool_choice is 'none': no tool may be called here, so '{called}' was not called"
        )),
        ToolChoice::Function { name } if name != called => Some(format!(
            "tool_choice forces '{name}' here, so '{called}' was not called"
        )),
        _ => None,
    }
}

/// Records the final state (with `audit`, the gate's row, in the same commit), stores the
/// tool message for the model, emits the event.
pub(super) async fn finish_call(
    run: &TurnRun<'_>,
    record: &ToolCallRecord,
    call: &ToolCallRequest,
    settled: Settled,
    event: &EventTemplate,
    audit: Option<NewAuditEvent>,
) -> ChatResult<ChatMessage> {
    let config = &run.engine.config;
    let stored = store_settled_call(
        &run.engine.store,
        config,
        record,
        &call.id,
        &settled,
        event.app.clone(),
        audit,
    )
    .await?;
    let status = if stored.is_error {
        ToolEventStatus::Error
    } else {
        ToolEventStatus::Completed
    };
    let mut tool_event = event.event(status, settled.state, settled.duration);
    if let Some(result) = &settled.result {
        let (shown, truncated) = event_result(result, config.tool_result_max_chars);
        tool_event.result = Some(shown);
        tool_event.result_truncated = truncated;
    }
    if let Some((code, message)) = settled.error {
        tool_event.error = Some(message);
        tool_event.error_code = Some(code);
    }
    run.handle.emit(ChatEvent::McpTool(tool_event));
    Ok(stored.message)
}

/// What [`store_settled_call`] stored: the tool message as the model gets it.
pub(crate) struct StoredCall {
    pub message: ChatMessage,
    pub is_error: bool,
}

/// Records a call's final state with `audit` and its tool message in one commit
/// (the result cut for the model, its content blocks and structured content in the metadata):
/// shared by a turn's calls and a task call followed again after a restart.
pub(crate) async fn store_settled_call(
    store: &switchboard_store::Store,
    config: &crate::ChatConfig,
    record: &ToolCallRecord,
    llm_call_id: &str,
    settled: &Settled,
    app: Option<ToolApp>,
    audit: Option<NewAuditEvent>,
) -> ChatResult<StoredCall> {
    let outcome = ToolCallOutcome {
        result: settled
            .result
            .as_ref()
            .and_then(|result| serde_json::to_value(result).ok()),
        error: settled.error.as_ref().map(|(_, message)| message.clone()),
    };
    let model_text = match (&settled.result, &settled.error) {
        (Some(result), _) => result_text_for_model(result),
        (None, Some((code, message))) => error_text_for_model(code, message),
        (None, None) => error_text_for_model("no_result", "the call returned nothing"),
    };
    let cut = cut_for_model(&model_text, config.tool_result_max_chars);
    let is_error = settled.error.is_some();
    let (content, structured_content) = settled
        .result
        .as_ref()
        .map(stored_content)
        .unwrap_or_default();
    let images = ImageInput::from_blocks(&content);
    let metadata = ToolMessageMetadata {
        tool_call_id: Some(record.id.clone()),
        state: Some(settled.state),
        server: record.server_name.clone(),
        tool: record.tool_name.clone(),
        is_error,
        truncated: cut.truncated,
        result_chars: cut.total_chars,
        duration_ms: settled.duration.map(|duration| duration.as_millis() as u64),
        error: settled.error.as_ref().map(|(_, message)| message.clone()),
        error_code: settled.error.as_ref().map(|(code, _)| code.clone()),
        app,
        content,
        structured_content,
    };
    let message = NewMessage {
        role: ChatRole::Tool,
        content: cut.text.clone(),
        tool_calls: Vec::new(),
        tool_call_id: Some(llm_call_id.to_owned()),
        metadata: metadata.to_stored(),
        status: MessageStatus::Complete,
    };
    call_records::finish_with_message(store, record, settled.state, outcome, audit, message)
        .await?;
    crate::metrics::tool_call_finished(settled.state);
    let message = if is_error {
        ChatMessage::tool_error(llm_call_id.to_owned(), cut.text)
    } else {
        ChatMessage::tool_result(llm_call_id.to_owned(), cut.text)
    };
    Ok(StoredCall {
        message: message.with_images(images),
        is_error,
    })
}

/// Moves the call on; a conflict (someone else moved it) is logged, not fatal.
pub(super) async fn transition(
    run: &TurnRun<'_>,
    record: &ToolCallRecord,
    next: ToolCallState,
    outcome: ToolCallOutcome,
) -> ChatResult<()> {
    call_records::advance(&run.engine.store, record, &[next], outcome, None).await
}
