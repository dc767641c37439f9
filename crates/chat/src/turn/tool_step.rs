//! One tool step: the calls of one assistant message, run in parallel (bounded by
//! `max_parallel_tool_calls`), each through the same recorded life:
//!
//! `proposed` (row written) → approval gate → `approved` | `denied` → `dispatched` (committed
//! **before** the request leaves) → `completed` | `failed` | `unknown`.
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
use crate::error::{ChatError, ChatResult};
use crate::events::{ChatEvent, ToolEvent, ToolEventStatus, tool_intent};
use crate::gate::{CallReport, EventSink, GateDecision, GateRequest};
use crate::tools::{cut_for_model, error_text_for_model, event_result, result_text_for_model};
use futures::StreamExt;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_core::{ChatMessage, ChatRole, MessageId, ToolCallRequest, ToolCallState};
use switchboard_llm::ToolChoice;
use switchboard_mcp_client::CallContext;
use switchboard_store::{
    MessageStatus, NewMessage, NewToolCall, StoreError, ToolCallOutcome, ToolCallRecord,
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

async fn run_one_call(
    run: &TurnRun<'_>,
    message_id: &MessageId,
    call: ToolCallRequest,
    choice: &ToolChoice,
) -> ChatResult<ChatMessage> {
    let engine = run.engine;
    let workspace_id = &run.plan.conversation.workspace_id;
    let found = run.tools.lookup(&call.name);
    let (server_id, server_name, tool_name) = match found {
        Some((route, target)) => (
            target.registered_server_id.clone(),
            route.server_name.clone(),
            route.tool_name.clone(),
        ),
        None => (None, String::new(), call.name.clone()),
    };
    let record = engine
        .store
        .create_tool_call(
            workspace_id,
            NewToolCall {
                conversation_id: run.plan.conversation.id.clone(),
                message_id: Some(message_id.clone()),
                llm_call_id: call.id.clone(),
                server_id,
                server_name: server_name.clone(),
                tool_name: tool_name.clone(),
                arguments: call.arguments.clone(),
            },
        )
        .await?;
    let parsed = parse_arguments(&call.arguments);
    let shown_arguments = parsed
        .clone()
        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
    let intent = tool_intent(run.plan.chosen.provider.provider_name(), &tool_name);
    let event = |status, state, duration: Option<Duration>| ToolEvent {
        call_id: call.id.clone(),
        tool_call_id: record.id.clone(),
        tool: tool_name.clone(),
        server: server_name.clone(),
        intent: intent.clone(),
        status,
        state,
        arguments: shown_arguments.clone(),
        result: None,
        result_truncated: false,
        error: None,
        error_code: None,
        duration_ms: duration.map(|duration| duration.as_millis() as u64),
    };
    if let Some(message) = outside_choice(choice, &call.name) {
        let settled = failure(ToolCallState::Failed, "outside_tool_choice", message);
        return finish_call(run, &record, &call, settled, event).await;
    }
    let ((route, target), arguments) = match (found, parsed) {
        (None, _) => {
            let message = format!(
                "no tool named '{}' is offered in this conversation",
                call.name
            );
            let settled = failure(ToolCallState::Failed, "unknown_tool", message);
            return finish_call(run, &record, &call, settled, event).await;
        }
        (Some(_), Err(message)) => {
            let settled = failure(ToolCallState::Failed, "invalid_arguments", message);
            return finish_call(run, &record, &call, settled, event).await;
        }
        (Some(found), Ok(arguments)) => (found, arguments),
    };

    let request = GateRequest {
        principal: run.plan.principal.clone(),
        conversation_id: run.plan.conversation.id.clone(),
        conversation_owner: run.plan.conversation.owner_user_id.clone(),
        tool_call_id: record.id.clone(),
        llm_call_id: call.id.clone(),
        target: target.gate_target.clone(),
        tool: route.tool.clone(),
        arguments: arguments.clone(),
        cancellation: run.handle.cancellation.clone(),
    };
    let handle = Arc::clone(run.handle);
    let sink = EventSink::new(move |event| handle.emit(event));
    let decision = engine.gate.review(&request, &sink).await;
    let settled = match &decision {
        GateDecision::Deny { reason, .. } => {
            transition(
                run,
                &record,
                ToolCallState::Denied,
                ToolCallOutcome {
                    result: None,
                    error: Some(reason.clone()),
                },
            )
            .await?;
            failure(
                ToolCallState::Denied,
                "denied",
                format!("the call was not allowed: {reason}"),
            )
        }
        GateDecision::Allow { .. } => {
            transition(
                run,
                &record,
                ToolCallState::Approved,
                ToolCallOutcome::default(),
            )
            .await?;
            if run.handle.cancellation.is_cancelled() {
                failure(
                    ToolCallState::Failed,
                    "cancelled",
                    "the answer was cancelled before the call was sent".to_owned(),
                )
            } else {
                // Committed before the request leaves: a crash from here on leaves `dispatched`,
                // which start-up turns into `unknown`, never into a silent re-run.
                transition(
                    run,
                    &record,
                    ToolCallState::Dispatched,
                    ToolCallOutcome::default(),
                )
                .await?;
                run.handle.emit(ChatEvent::McpTool(event(
                    ToolEventStatus::Started,
                    ToolCallState::Dispatched,
                    None,
                )));
                let context = CallContext {
                    caller: run.caller.clone(),
                    cancellation: run.handle.cancellation.child_token(),
                    events: None,
                };
                let started = Instant::now();
                let outcome = engine
                    .tools
                    .call(target, &route.tool, arguments, &context)
                    .await;
                settle(outcome, started.elapsed())
            }
        }
    };
    let final_state = settled.state;
    let duration = settled.duration;
    let result_bytes = settled
        .result
        .as_ref()
        .and_then(|result| serde_json::to_vec(result).ok())
        .map(|bytes| bytes.len());
    let error_text = settled.error.as_ref().map(|(_, message)| message.clone());
    let message = finish_call(run, &record, &call, settled, event).await?;
    engine
        .gate
        .call_finished(&CallReport {
            request,
            decision,
            final_state,
            duration,
            result_bytes,
            error: error_text,
        })
        .await;
    Ok(message)
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

/// Records the final state, stores the tool message for the model, emits the event.
async fn finish_call(
    run: &TurnRun<'_>,
    record: &ToolCallRecord,
    call: &ToolCallRequest,
    settled: Settled,
    event: impl Fn(ToolEventStatus, ToolCallState, Option<Duration>) -> ToolEvent,
) -> ChatResult<ChatMessage> {
    let config = &run.engine.config;
    if settled.state != ToolCallState::Denied {
        let outcome = ToolCallOutcome {
            result: settled
                .result
                .as_ref()
                .and_then(|result| serde_json::to_value(result).ok()),
            error: settled.error.as_ref().map(|(_, message)| message.clone()),
        };
        transition(run, record, settled.state, outcome).await?;
    }
    let model_text = match (&settled.result, &settled.error) {
        (Some(result), _) => result_text_for_model(result),
        (None, Some((code, message))) => error_text_for_model(code, message),
        (None, None) => error_text_for_model("no_result", "the call returned nothing"),
    };
    let cut = cut_for_model(&model_text, config.tool_result_max_chars);
    let is_error = settled.error.is_some();
    let mut metadata = Map::new();
    metadata.insert("tool_call_id".into(), json!(record.id));
    metadata.insert("state".into(), json!(settled.state.as_str()));
    metadata.insert("server".into(), json!(record.server_name));
    metadata.insert("tool".into(), json!(record.tool_name));
    metadata.insert("is_error".into(), json!(is_error));
    metadata.insert("truncated".into(), json!(cut.truncated));
    metadata.insert("result_chars".into(), json!(cut.total_chars));
    if let Some(duration) = settled.duration {
        metadata.insert("duration_ms".into(), json!(duration.as_millis() as u64));
    }
    if let Some((code, message)) = &settled.error {
        metadata.insert("error".into(), json!(message));
        metadata.insert("error_code".into(), json!(code));
    }
    run.engine
        .store
        .append_message(
            &run.plan.conversation.workspace_id,
            &run.plan.conversation.id,
            NewMessage {
                role: ChatRole::Tool,
                content: cut.text.clone(),
                tool_calls: Vec::new(),
                tool_call_id: Some(call.id.clone()),
                metadata: Value::Object(metadata),
                status: MessageStatus::Complete,
            },
        )
        .await?;
    crate::metrics::tool_call_finished(settled.state);
    let status = if is_error {
        ToolEventStatus::Error
    } else {
        ToolEventStatus::Completed
    };
    let mut tool_event = event(status, settled.state, settled.duration);
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
    Ok(ChatMessage::tool_result(call.id.clone(), cut.text))
}

/// Moves the call on; a conflict (someone else moved it) is logged, not fatal.
async fn transition(
    run: &TurnRun<'_>,
    record: &ToolCallRecord,
    next: ToolCallState,
    outcome: ToolCallOutcome,
) -> ChatResult<()> {
    match run
        .engine
        .store
        .transition_tool_call(
            &run.plan.conversation.workspace_id,
            &record.id,
            next,
            outcome,
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(StoreError::Conflict(message)) => {
            tracing::warn!(tool_call_id = %record.id, %message, "tool call state conflict");
            Ok(())
        }
        Err(error) => Err(ChatError::from(error)),
    }
}
