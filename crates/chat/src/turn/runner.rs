//! The agent loop: LLM → tool calls (parallel, bounded) → results as tool messages → LLM
//! again, up to `max_tool_steps` round trips; after the last one the model is asked once more
//! with `tool_choice: none`, so it answers from what it has. `required` and forced-function
//! choices apply to the first step only (otherwise the model could never stop calling tools).
//! The step's choice is also enforced on what the model returns: a call outside it (any call
//! under `none`, another tool under a forced one) is answered with an error result and never
//! runs (`tool_step`).
//!
//! Runs in its own task, independent of the HTTP request: it always finishes writing what was
//! produced, emits `done`, and leaves the registry, whether the model finished, failed, or the
//! turn was cancelled (every client left, or shutdown).

use super::call_ids::ConversationCallIds;
use super::handle::TurnHandle;
use super::history::replay_history;
use super::llm_step::{StepEnd, run_llm_step};
use super::tool_step::run_tool_calls;
use super::{TurnPlan, TurnRun};
use crate::context::{ContextLimits, ContextReport, fit};
use crate::engine::Engine;
use crate::error::ChatResult;
use crate::events::{
    AnsweredBy, ChatEvent, DoneEvent, ErrorEvent, MetaEvent, SchemaContext, TurnOutcome,
};
use crate::sign_in::auth_required_events;
use crate::tools::{ToolOffer, TurnTools};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use switchboard_core::sync::LockUnpoisoned;
use switchboard_core::{ChatMessage, MessageId};
use switchboard_llm::{LlmRequest, ToolChoice};
use switchboard_mcp_client::Caller;

/// Runs the turn to its end; never panics on upstream failures.
pub(crate) async fn run_turn(engine: Arc<Engine>, mut plan: TurnPlan, handle: Arc<TurnHandle>) {
    let started = std::time::Instant::now();
    crate::metrics::answer_started();
    let caller = Caller {
        user_id: plan.principal.user_id.clone(),
        conversation_id: Some(plan.conversation.id.clone()),
    };
    let tools = turn_tools(&engine, &plan, &caller).await;
    let schema_context = schema_context(&engine, &plan).await;
    // The server records (with their capability caches, possibly large) are not needed once
    // the catalog is built; an answer may stay open for a long time.
    plan.resolved.servers = Vec::new();
    let run_caller = caller.clone();
    let offer = tool_offer(&engine, &plan, &tools);
    let run = TurnRun {
        engine: &engine,
        plan: &plan,
        handle: &handle,
        tools,
        offer,
        caller,
        answering: AtomicUsize::new(0),
        fallback_from: Mutex::new(Vec::new()),
        usage: Mutex::new(None),
    };
    let history = history_for(&run).await;
    let context = history
        .as_ref()
        .ok()
        .map(|(messages, _)| first_request_context(&run, messages));
    announce(&run, schema_context, context).await;
    let (outcome, message_id) = match drive(&run, history).await {
        Ok(ended) => ended,
        Err(error) => {
            tracing::error!(conversation_id = %plan.conversation.id, %error, "a chat turn could not be recorded");
            handle.emit(ChatEvent::Error(ErrorEvent {
                code: "store_error".to_owned(),
                message: format!("the answer could not be saved: {error}"),
            }));
            (TurnOutcome::Failed, None)
        }
    };
    if outcome == TurnOutcome::Cancelled && engine.shutdown.is_cancelled() {
        // Not the client leaving: whoever still follows the answer hears why it stops.
        handle.emit(ChatEvent::Error(ErrorEvent {
            code: "shutting_down".to_owned(),
            message: "the service is stopping: the answer was cut short here and what it \
                      produced so far is saved"
                .to_owned(),
        }));
    }
    let answered_by = answered_by(&run);
    handle.emit(ChatEvent::Done(DoneEvent {
        conversation_id: plan.conversation.id.clone(),
        message_id,
        outcome,
        answered_by: Some(answered_by),
        usage: *run.usage.lock_unpoisoned(),
    }));
    handle.finish();
    engine.turns.end(&handle);
    // After `done`: the client does not wait for the ephemeral sessions to close.
    engine
        .tools
        .close_ephemeral_sessions(&run_caller, &plan.ephemeral)
        .await;
    crate::metrics::answer_finished(outcome, started.elapsed());
}

/// The provider and model of the last step, and the ones that failed before it.
fn answered_by(run: &TurnRun<'_>) -> AnsweredBy {
    let model = run.answering_model();
    AnsweredBy {
        provider: model.provider.provider_name().to_owned(),
        provider_name: model.name.clone(),
        model: model.display_model(),
        fallback_from: run.fallback_from.lock_unpoisoned().clone(),
    }
}

/// What the turn offers the model: every tool, or past `chat.tool_budget` the best matches for
/// the question (with a tool forced by `tool_choice`) and `search_tools`.
fn tool_offer(engine: &Engine, plan: &TurnPlan, tools: &TurnTools) -> ToolOffer {
    let forced = match catalog_choice(tools, &plan.resolved.tool_choice) {
        ToolChoice::Function { name } => Some(name),
        _ => None,
    };
    ToolOffer::new(
        tools.catalog.clone(),
        engine.config.tool_budget,
        &plan.user_message.content,
        forced.as_deref(),
    )
}

/// How the first request fits the primary model's context window, for `meta`.
fn first_request_context(run: &TurnRun<'_>, messages: &[ChatMessage]) -> ContextReport {
    let model = &run.plan.models.primary;
    let tools = if run.tools.catalog.is_empty() {
        Vec::new()
    } else {
        run.offer.specs_for(model.provider.provider_name())
    };
    let limits = ContextLimits::for_model(
        model,
        &run.engine.config,
        run.engine.providers.config().max_tokens,
    );
    fit(messages.to_vec(), &tools, &limits).1
}

/// The answer's first events: `meta`, then one `auth_required` per server the caller must
/// connect first.
async fn announce(
    run: &TurnRun<'_>,
    schema_context: Option<SchemaContext>,
    context: Option<ContextReport>,
) {
    let plan = run.plan;
    run.handle.emit(ChatEvent::Meta(MetaEvent {
        conversation_id: plan.conversation.id.clone(),
        message_id: plan.user_message.id.clone(),
        provider: plan.models.primary.provider.provider_name().to_owned(),
        provider_name: plan.models.primary.name.clone(),
        model: plan.models.primary.display_model(),
        tools: run.tools.offered(),
        unavailable_servers: run.tools.unavailable.clone(),
        replay: false,
        schema_context,
        context,
    }));
    let sign_ins = auth_required_events(
        &run.tools.unavailable,
        &plan.principal,
        run.engine.authorization.as_deref(),
    )
    .await;
    for event in sign_ins {
        run.handle.emit(event);
    }
}

/// The tools this answer may call (none when `chat.enable_mcp_tools` is off).
async fn turn_tools(engine: &Engine, plan: &TurnPlan, caller: &Caller) -> TurnTools {
    if !engine.config.enable_mcp_tools {
        return TurnTools::default();
    }
    engine
        .tools
        .for_turn(
            &plan.principal,
            plan.credential.as_ref(),
            caller,
            &plan.resolved,
            &plan.ephemeral,
        )
        .await
}

/// `meta.schemaContext`, when our own kg server is among the conversation's servers.
async fn schema_context(engine: &Engine, plan: &TurnPlan) -> Option<SchemaContext> {
    let source = engine.schema_context.as_ref()?;
    if !plan
        .resolved
        .servers
        .iter()
        .any(|record| engine.tools.is_own_server(record))
    {
        return None;
    }
    source.schema_context(&plan.principal.workspace_id).await
}

async fn drive(
    run: &TurnRun<'_>,
    history: ChatResult<(Vec<ChatMessage>, ConversationCallIds)>,
) -> ChatResult<(TurnOutcome, Option<MessageId>)> {
    let engine = run.engine;
    let plan = run.plan;
    let (mut messages, mut call_ids) = history?;
    let configured_choice = catalog_choice(&run.tools, &plan.resolved.tool_choice);
    let max_steps = engine.config.max_tool_steps;
    let mut last_message: Option<MessageId> = None;
    for step in 1..=max_steps + 1 {
        let last_step = step > max_steps;
        // The model, the tools offered and the fitting to its context window are set per
        // attempt (`llm_step`: the fallback chain).
        let mut request = LlmRequest::new(String::new(), messages.clone());
        let choice = match (&configured_choice, step, last_step) {
            (_, _, true) => ToolChoice::None,
            (ToolChoice::Required | ToolChoice::Function { .. }, 2.., _) => ToolChoice::Auto,
            (choice, _, _) => choice.clone(),
        };
        if !run.tools.catalog.is_empty() {
            request = request.with_tool_choice(choice.clone());
        }
        let result = run_llm_step(run, request, step, !last_step, &mut call_ids).await?;
        if result.message_id.is_some() {
            last_message = result.message_id.clone();
        }
        match result.end {
            StepEnd::Cancelled => return Ok((TurnOutcome::Cancelled, last_message)),
            StepEnd::Failed(error) => {
                run.handle.emit(ChatEvent::Error(ErrorEvent {
                    code: error.code().to_owned(),
                    message: error.to_string(),
                }));
                return Ok((TurnOutcome::Failed, last_message));
            }
            StepEnd::Finished(_) => {}
        }
        if result.calls.is_empty() {
            if result.dropped_calls > 0 {
                run.handle.emit(ChatEvent::Error(ErrorEvent {
                    code: "max_steps_reached".to_owned(),
                    message: format!(
                        "the answer used the most tool round trips allowed ({max_steps}); the \
                         {} further tool call(s) it asked for were not made",
                        result.dropped_calls
                    ),
                }));
            }
            return Ok((TurnOutcome::Completed, last_message));
        }
        let Some(message_id) = result.message_id.clone() else {
            return Ok((TurnOutcome::Failed, last_message));
        };
        messages.push(ChatMessage::assistant(result.text, result.calls.clone()));
        let results = run_tool_calls(run, &message_id, result.calls, &choice).await?;
        messages.extend(results);
        if run.handle.cancellation.is_cancelled() {
            return Ok((TurnOutcome::Cancelled, last_message));
        }
    }
    Ok((TurnOutcome::Completed, last_message))
}

/// System prompt + the stored conversation (including the question, and the MCP Apps' model
/// contexts with their calls' results), not yet fitted to a
/// context window; and the call ids the conversation has used.
async fn history_for(run: &TurnRun<'_>) -> ChatResult<(Vec<ChatMessage>, ConversationCallIds)> {
    let store = &run.engine.store;
    let conversation = &run.plan.conversation;
    let (stored, calls, app_contexts) = futures::try_join!(
        store.list_messages(&conversation.workspace_id, &conversation.id),
        store.list_tool_calls(&conversation.workspace_id, &conversation.id),
        store.list_app_model_contexts(&conversation.workspace_id, &conversation.id),
    )?;
    let mut history = replay_history(&stored, &calls);
    crate::service::with_app_contexts(&mut history, &calls, &app_contexts);
    let system_prompt = run
        .plan
        .bud
        .as_ref()
        .map(|bud| bud.system_prompt.trim())
        .filter(|prompt| !prompt.is_empty())
        .unwrap_or(run.engine.config.default_system_prompt.as_str());
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(ChatMessage::system(system_prompt));
    messages.extend(history);
    Ok((messages, ConversationCallIds::from_messages(&stored)))
}

/// Maps a configured forced function (a catalog name or `server.tool`) to the catalog name of
/// this turn; when the tool is not on offer this turn (server down, tool disabled), the model
/// chooses freely instead.
fn catalog_choice(tools: &TurnTools, configured: &ToolChoice) -> ToolChoice {
    let ToolChoice::Function { name } = configured else {
        return configured.clone();
    };
    if tools.catalog.route(name).is_some() {
        return configured.clone();
    }
    if let Some((server, tool)) = name.split_once('.') {
        let found = tools.catalog.specs.iter().find(|spec| {
            tools.catalog.route(&spec.name).is_some_and(|route| {
                (route.server_name == server || route.server_id.as_str() == server)
                    && route.tool_name == tool
            })
        });
        if let Some(spec) = found {
            return ToolChoice::Function {
                name: spec.name.clone(),
            };
        }
    }
    tracing::warn!(tool = %name, "the configured tool_choice names a tool not offered this turn; using auto");
    ToolChoice::Auto
}
