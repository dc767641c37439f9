//! One LLM step: stream the model's answer, forward text as `token` events, and store the
//! assistant message as it grows — appended as `partial` once text arrives, saved at most every
//! `partial_save_interval_ms` (a crash keeps what was said), and completed in place with its
//! tool calls when the model finishes. On a failure or a cancellation what was produced stays,
//! marked partial (or failed, with the error, when nothing was produced).
//!
//! When the model fails before producing anything with an error worth another provider (5xx,
//! 529, 429, timeout, no connection), the next model of the bud's fallback chain is asked; the
//! stored message names the one that answered (`provider_name`, `model`) and the ones that
//! failed first (`fallback_from`).
//!
//! Dropping the provider's stream aborts the HTTP request upstream, so leaving this function
//! early (cancellation) stops the model.

use super::TurnRun;
use super::call_ids::ConversationCallIds;
use super::partial_input::PartialInputs;
use crate::context::{ContextLimits, ContextReport, fit};
use crate::error::ChatResult;
use crate::events::{ChatEvent, FailedAttempt};
use crate::providers::ChosenModel;
use futures::StreamExt;
use serde_json::{Map, Value, json};
use std::sync::atomic::Ordering;
use std::time::Instant;
use switchboard_core::sync::LockUnpoisoned;
use switchboard_core::{ChatRole, MessageId, ToolCallRequest};
use switchboard_llm::{FinishReason, LlmError, LlmEvent, LlmRequest, TokenUsage};
use switchboard_store::{MessageRecord, MessageStatus, MessageUpdate, NewMessage};

/// How a step ended.
#[derive(Debug)]
pub(crate) enum StepEnd {
    Finished(FinishReason),
    Failed(LlmError),
    Cancelled,
}

#[derive(Debug)]
pub(crate) struct StepResult {
    pub text: String,
    pub calls: Vec<ToolCallRequest>,
    /// The stored assistant message, if anything was stored.
    pub message_id: Option<MessageId>,
    pub end: StepEnd,
    /// Calls the model made on the last allowed step, which were not run.
    pub dropped_calls: usize,
}

/// Runs one generation. `accept_tool_calls` is false on the last allowed step: calls the model
/// makes anyway are dropped (and reported by the caller) so no call is left without a result.
/// Calls whose id the conversation already used are renamed before they are stored.
///
/// The step asks the model that answered the previous step (the primary at first); when it
/// fails before producing anything with an error that [`LlmError::warrants_fallback`], the
/// next model of the chain is asked, and so on.
pub(crate) async fn run_llm_step(
    run: &TurnRun<'_>,
    request: LlmRequest,
    step: u32,
    accept_tool_calls: bool,
    call_ids: &mut ConversationCallIds,
) -> ChatResult<StepResult> {
    let mut writer = AnswerWriter::new(run, step);
    let mut attempt = Attempt::default();
    let mut index = run.answering.load(Ordering::Relaxed);
    let mut failed: Vec<FailedAttempt> = Vec::new();
    let end = loop {
        let model = run
            .plan
            .models
            .get(index)
            .unwrap_or(&run.plan.models.primary);
        writer.model = Some(model);
        let asked = request_for(run, model, &request);
        writer.context = Some(asked.1);
        let asked = asked.0;
        let end = stream_attempt(run, model, asked, &mut writer, &mut attempt).await?;
        let StepEnd::Failed(error) = &end else {
            break end;
        };
        let has_next = run.plan.models.get(index + 1).is_some();
        if !(has_next && error.warrants_fallback() && attempt.produced_nothing(&writer)) {
            break end;
        }
        tracing::warn!(
            provider = %model.name,
            model = %model.display_model(),
            %error,
            "the model failed before answering; asking the next of the fallback chain"
        );
        crate::metrics::llm_fallback(&model.name);
        failed.push(FailedAttempt {
            provider_name: model.name.clone(),
            model: model.display_model(),
            error_code: error.code().to_owned(),
            error: error.to_string(),
        });
        writer.fallback_from = failed.clone();
        index += 1;
    };
    if index != run.answering.load(Ordering::Relaxed) {
        run.answering.store(index, Ordering::Relaxed);
        *run.fallback_from.lock_unpoisoned() = failed;
    }
    let Attempt {
        text,
        mut calls,
        usage,
        ..
    } = attempt;
    let dropped_calls = if accept_tool_calls { 0 } else { calls.len() };
    if dropped_calls > 0 {
        tracing::warn!(
            dropped_calls,
            "the model asked for tools on the last allowed step; the calls were not made"
        );
        calls.clear();
    }
    call_ids.make_unique(&mut calls);
    if let Some(counted) = usage {
        *run.usage
            .lock_unpoisoned()
            .get_or_insert_with(TokenUsage::default) += counted;
    }
    let message_id = writer.finish(&text, &calls, &end, usage).await?;
    Ok(StepResult {
        text,
        calls,
        message_id,
        end,
        dropped_calls,
    })
}

/// `request` as `model` is asked it: its model name, the tools offered to it, and the
/// messages fitted to its context window; with how they were fitted.
fn request_for(
    run: &TurnRun<'_>,
    model: &ChosenModel,
    request: &LlmRequest,
) -> (LlmRequest, ContextReport) {
    let mut asked = request.clone();
    asked.model = model.model.clone();
    if !model.supports_images {
        // Their text description is in each message's content already.
        for message in &mut asked.messages {
            message.images.clear();
        }
    }
    if !run.tools.catalog.is_empty() {
        asked = asked.with_tools(run.offer.specs_for(model.provider.provider_name()));
    }
    let limits = ContextLimits::for_model(
        model,
        &run.engine.config,
        run.engine.providers.config().max_tokens,
    );
    let (messages, report) = fit(std::mem::take(&mut asked.messages), &asked.tools, &limits);
    asked.messages = messages;
    (asked, report)
}

/// What one model produced in a step.
#[derive(Default)]
struct Attempt {
    text: String,
    calls: Vec<ToolCallRequest>,
    usage: Option<TokenUsage>,
    /// The input of calls to tools with an app, as the model writes it.
    partial_inputs: PartialInputs,
}

impl Attempt {
    /// Nothing was streamed or stored: another model may answer instead.
    fn produced_nothing(&self, writer: &AnswerWriter<'_>) -> bool {
        self.text.is_empty() && self.calls.is_empty() && writer.message_id.is_none()
    }
}

/// Streams `model`'s answer to `request` into `attempt`, forwarding text as `token` events.
async fn stream_attempt(
    run: &TurnRun<'_>,
    model: &ChosenModel,
    request: LlmRequest,
    writer: &mut AnswerWriter<'_>,
    attempt: &mut Attempt,
) -> ChatResult<StepEnd> {
    let cancellation = run.handle.cancellation.clone();
    let started = tokio::select! {
        biased;
        () = cancellation.cancelled() => None,
        started = model.provider.stream_chat(request) => Some(started),
    };
    let mut stream = match started {
        None => return Ok(StepEnd::Cancelled),
        Some(Err(error)) => return Ok(StepEnd::Failed(error)),
        Some(Ok(stream)) => stream,
    };
    loop {
        let item = tokio::select! {
            biased;
            () = cancellation.cancelled() => return Ok(StepEnd::Cancelled),
            item = stream.next() => item,
        };
        match item {
            Some(Ok(LlmEvent::TextDelta(delta))) => {
                if delta.is_empty() {
                    continue;
                }
                attempt.text.push_str(&delta);
                run.handle.emit(ChatEvent::Token(delta));
                writer.save_progress(&attempt.text).await?;
            }
            Some(Ok(LlmEvent::ToolCallArguments(delta))) => {
                if let Some(event) = attempt.partial_inputs.on_fragment(run, delta) {
                    run.handle.emit(event);
                }
            }
            Some(Ok(LlmEvent::ToolCall(indexed))) => attempt.calls.push(indexed.call),
            Some(Ok(LlmEvent::Usage(counted))) => attempt.usage = Some(counted),
            Some(Ok(LlmEvent::Finished(reason))) => return Ok(StepEnd::Finished(reason)),
            Some(Err(error)) => return Ok(StepEnd::Failed(error)),
            None => return Ok(StepEnd::Failed(LlmError::StreamEndedEarly)),
        }
    }
}

/// Stores one assistant message while it streams.
struct AnswerWriter<'a> {
    run: &'a TurnRun<'a>,
    /// The model being asked (set before each attempt).
    model: Option<&'a ChosenModel>,
    /// The models of the chain that failed before this one, this step.
    fallback_from: Vec<FailedAttempt>,
    /// How the request to the model being asked was fitted to its context window.
    context: Option<ContextReport>,
    step: u32,
    message_id: Option<MessageId>,
    last_saved: Instant,
    saved_chars: usize,
}

impl<'a> AnswerWriter<'a> {
    fn new(run: &'a TurnRun<'a>, step: u32) -> Self {
        Self {
            run,
            model: None,
            fallback_from: Vec::new(),
            context: None,
            step,
            message_id: None,
            last_saved: Instant::now(),
            saved_chars: 0,
        }
    }

    fn base_metadata(&self) -> Map<String, Value> {
        let model = self.model.unwrap_or(&self.run.plan.models.primary);
        let mut metadata = Map::new();
        metadata.insert("provider".into(), json!(model.provider.provider_name()));
        metadata.insert("provider_name".into(), json!(model.name));
        metadata.insert("model".into(), json!(model.display_model()));
        metadata.insert("step".into(), json!(self.step));
        if !self.fallback_from.is_empty() {
            metadata.insert("fallback_from".into(), json!(self.fallback_from));
        }
        if let Some(context) = &self.context {
            metadata.insert("context".into(), json!(context));
        }
        metadata
    }

    /// Appends the message at the first text, then saves it at most every interval.
    async fn save_progress(&mut self, text: &str) -> ChatResult<()> {
        let store = &self.run.engine.store;
        let workspace_id = &self.run.plan.conversation.workspace_id;
        match &self.message_id {
            None => {
                let mut metadata = self.base_metadata();
                metadata.insert("streaming".into(), json!(true));
                let record = self
                    .append(text, Vec::new(), metadata, MessageStatus::Partial)
                    .await?;
                self.message_id = Some(record.id);
            }
            Some(message_id) => {
                if self.last_saved.elapsed() < self.run.engine.config.partial_save_interval()
                    || text.len() == self.saved_chars
                {
                    return Ok(());
                }
                store
                    .update_message(
                        workspace_id,
                        message_id,
                        MessageUpdate {
                            content: Some(text.to_owned()),
                            ..MessageUpdate::default()
                        },
                    )
                    .await?;
            }
        }
        self.last_saved = Instant::now();
        self.saved_chars = text.len();
        Ok(())
    }

    /// Stores the final state of the message; returns its id (none when nothing was said and
    /// the step was cancelled).
    async fn finish(
        mut self,
        text: &str,
        calls: &[ToolCallRequest],
        end: &StepEnd,
        usage: Option<TokenUsage>,
    ) -> ChatResult<Option<MessageId>> {
        let mut metadata = self.base_metadata();
        if let Some(usage) = usage {
            let model = self.model.unwrap_or(&self.run.plan.models.primary);
            crate::metrics::llm_tokens(&model.name, &model.display_model(), &usage);
            metadata.insert("usage".into(), json!(usage));
        }
        let status = match end {
            StepEnd::Finished(reason) => {
                metadata.insert("finish_reason".into(), json!(reason));
                MessageStatus::Complete
            }
            StepEnd::Cancelled => {
                if text.is_empty() && calls.is_empty() && self.message_id.is_none() {
                    return Ok(None);
                }
                metadata.insert("partial".into(), json!(true));
                metadata.insert("interrupted".into(), json!("cancelled"));
                MessageStatus::Partial
            }
            StepEnd::Failed(error) => {
                metadata.insert("error".into(), json!(error.to_string()));
                metadata.insert("error_code".into(), json!(error.code()));
                if text.is_empty() {
                    MessageStatus::Failed
                } else {
                    metadata.insert("partial".into(), json!(true));
                    metadata.insert("interrupted".into(), json!("error"));
                    MessageStatus::Partial
                }
            }
        };
        let store = &self.run.engine.store;
        let workspace_id = &self.run.plan.conversation.workspace_id;
        let record = match self.message_id.take() {
            Some(message_id) => {
                store
                    .update_message(
                        workspace_id,
                        &message_id,
                        MessageUpdate {
                            content: Some(text.to_owned()),
                            tool_calls: Some(calls.to_vec()),
                            metadata: Some(Value::Object(metadata)),
                            status: Some(status),
                        },
                    )
                    .await?
            }
            None => self.append(text, calls.to_vec(), metadata, status).await?,
        };
        Ok(Some(record.id))
    }

    /// Appends the step's assistant message to the conversation.
    async fn append(
        &self,
        text: &str,
        tool_calls: Vec<ToolCallRequest>,
        metadata: Map<String, Value>,
        status: MessageStatus,
    ) -> ChatResult<MessageRecord> {
        let record = self
            .run
            .engine
            .store
            .append_message(
                &self.run.plan.conversation.workspace_id,
                &self.run.plan.conversation.id,
                NewMessage {
                    role: ChatRole::Assistant,
                    content: text.to_owned(),
                    tool_calls,
                    tool_call_id: None,
                    metadata: Value::Object(metadata),
                    status,
                },
            )
            .await?;
        Ok(record)
    }
}
