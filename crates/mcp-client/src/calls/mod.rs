//! Requests through a session, with the limits every call obeys: argument validation, the
//! per-server and per-conversation concurrency caps, a timeout that progress extends under a
//! hard maximum (rmcp sends `notifications/cancelled` when it fires), caller cancellation
//! (forwarded as `notifications/cancelled`), the response size cap, and normalised results.
//!
//! A call that may have reached its upstream is never retried here: a tool may have side
//! effects, and only the chat engine knows whether a retry is safe. One that certainly did
//! not (its connection could not be opened) is sent once more, on a new session.

mod forward;
mod input_required;
mod request;
mod session_requests;
mod task;

pub use forward::ForwardedList;

use crate::UpstreamError;
use crate::capabilities::{CapabilitySnapshot, ServerDescription, list_tools, snapshot};
use crate::client::McpClient;
use crate::client_link::ClientLink;
use crate::metrics;
use crate::notifications::CallEvent;
use crate::result::{PromptResult, ResourceContent, ToolResult};
use crate::server::UpstreamServer;
use crate::session::SessionScopeKey;
use crate::session::lifecycle::Lifecycle;
use crate::session::live::LiveSession;
use request::{after_failure, decode, run_request};
use rmcp::model::{CallToolRequestParams, ClientRequest, ServerResult};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_core::{ConversationId, ToolDefinition, UserId};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

/// Who is calling: selects the session for per-user and per-conversation servers, and the
/// conversation's concurrency budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub user_id: UserId,
    pub conversation_id: Option<ConversationId>,
}

/// Everything a call needs besides its arguments.
#[derive(Clone, Debug)]
pub struct CallContext {
    pub caller: Caller,
    /// Cancel to abandon the call at any point: waiting under the concurrency caps or for
    /// its session to start (nothing is sent), or in flight (the upstream is told with
    /// `notifications/cancelled`).
    pub cancellation: CancellationToken,
    /// Receives progress and log notifications while the call runs (dropped when full).
    pub events: Option<mpsc::Sender<CallEvent>>,
    /// The caller's client, when it answers the upstream's requests of this call itself
    /// (the gateway's client: see [`crate::client_link`]).
    pub client_link: Option<Arc<dyn ClientLink>>,
    /// Cancel to stop following a call that became a task *without* cancelling the task
    /// (`UpstreamError::TaskDetached`): the host is stopping and keeps the task's id for the
    /// next process. Checked before `cancellation`, which may fire with it. Before the call
    /// became a task it does nothing.
    pub detach: Option<CancellationToken>,
}

impl CallContext {
    pub fn new(caller: Caller) -> Self {
        Self {
            caller,
            cancellation: CancellationToken::new(),
            events: None,
            client_link: None,
            detach: None,
        }
    }
}

/// What `test_connection` found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConnectionTestReport {
    pub latency_ms: u64,
    pub server: ServerDescription,
    pub tool_count: usize,
}

pub(crate) struct Limits {
    timeout: Duration,
    max_total: Duration,
    max_bytes: usize,
    /// A caller's cancellation after this long still says the server is slow (see
    /// [`request::run_request`]).
    slow_call: Duration,
}

impl McpClient {
    pub(crate) fn limits(&self, server: &UpstreamServer) -> Limits {
        let config = &self.inner.config;
        let timeout = server
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or_else(|| config.tool_call_timeout());
        Limits {
            timeout,
            max_total: config.tool_call_max_timeout().max(timeout),
            max_bytes: config.max_tool_response_bytes,
            slow_call: config.slow_call(),
        }
    }

    fn scope_for(server: &UpstreamServer, caller: &Caller) -> SessionScopeKey {
        SessionScopeKey::for_caller(
            server.session_scope,
            &caller.user_id,
            caller.conversation_id.as_ref(),
        )
    }

    /// Calls `tool` (as cached from `tools/list`) with `arguments`, after validating them
    /// against its `inputSchema`. A tool-level failure is `Ok` with `is_error: true`.
    pub async fn call_tool(
        &self,
        server: &UpstreamServer,
        tool: &ToolDefinition,
        arguments: Value,
        context: &CallContext,
    ) -> Result<ToolResult, UpstreamError> {
        let started = Instant::now();
        let outcome = self.call_tool_inner(server, tool, arguments, context).await;
        let label = match &outcome {
            Ok(result) if result.is_error => "tool_error",
            Ok(_) => "success",
            Err(error) => error.code(),
        };
        metrics::tool_call_finished(
            server.id.metric_label(&server.name),
            label,
            started.elapsed(),
        );
        outcome
    }

    async fn call_tool_inner(
        &self,
        server: &UpstreamServer,
        tool: &ToolDefinition,
        arguments: Value,
        context: &CallContext,
    ) -> Result<ToolResult, UpstreamError> {
        let arguments = self
            .inner
            .validator
            .check(&tool.name, &tool.input_schema, arguments)?;
        let mut params = CallToolRequestParams::new(tool.name.clone());
        params.arguments = Some(arguments);
        let (result, limits) = self
            .send_answering_input(server, context, input_required::call_tool(params))
            .await?;
        if let ServerResult::CreateTaskResult(created) = &result {
            let result = self
                .follow_created_task(server, created.task.clone(), context)
                .await?;
            return Ok(self.checked_output(tool, result));
        }
        let result: ToolResult = decode(&result, limits.max_bytes, "tools/call")?;
        Ok(self.checked_output(tool, result))
    }

    /// `result`, or an error result when its `structuredContent` does not match the tool's
    /// `outputSchema`.
    fn checked_output(&self, tool: &ToolDefinition, result: ToolResult) -> ToolResult {
        match self
            .inner
            .validator
            .check_output(&tool.name, tool.output_schema.as_ref(), &result)
        {
            Ok(()) => result,
            Err(message) => ToolResult::error_text(message),
        }
    }

    /// Sends `request` within the caller's concurrency budget on the caller's session; the
    /// answer comes with the limits it was held to. A call waits for a free place under the
    /// per-conversation and per-server caps for at most its timeout (then `Busy`).
    async fn send(
        &self,
        server: &UpstreamServer,
        request: ClientRequest,
        context: &CallContext,
    ) -> Result<(ServerResult, Limits), UpstreamError> {
        let limits = self.limits(server);
        // A caller who gives up while queued behind the concurrency caps leaves the queue at
        // once; the request is never sent.
        let _permits = tokio::select! {
            biased;
            () = context.cancellation.cancelled() => return Err(UpstreamError::Cancelled),
            permits = self.acquire_permits(server, &context.caller, limits.timeout) => permits?,
        };
        let (slot, live) = self.session_for_call(server, context).await?;
        let result = match run_request(&slot, &live, request.clone(), &limits, context).await {
            // Never sent (its server could not be reached), so it did not run: once more, on
            // a new session — the server may be back, or restarted and forgot the session.
            Err(error) if error.is_unreachable() => {
                tracing::info!(server = %server.name, %error, "a request could not be sent; trying once more on a new session");
                let (slot, live) = self.session_for_call(server, context).await?;
                run_request(&slot, &live, request, &limits, context).await?
            }
            outcome => outcome?,
        };
        Ok((result, limits))
    }

    /// The caller's session, started if needed. A caller who gives up while it starts leaves
    /// at once: if this caller was the one starting it, the half-done start is dropped (its
    /// child killed) and the next user starts afresh.
    async fn session_for_call(
        &self,
        server: &UpstreamServer,
        context: &CallContext,
    ) -> Result<(Arc<crate::session::slot::SessionSlot>, Arc<LiveSession>), UpstreamError> {
        tokio::select! {
            biased;
            () = context.cancellation.cancelled() => Err(UpstreamError::Cancelled),
            session = self.session(server, Self::scope_for(server, &context.caller)) => session,
        }
    }

    /// `resources/read`.
    pub async fn read_resource(
        &self,
        server: &UpstreamServer,
        uri: &str,
        context: &CallContext,
    ) -> Result<Vec<ResourceContent>, UpstreamError> {
        #[derive(serde::Deserialize)]
        struct Contents {
            contents: Vec<ResourceContent>,
        }
        let (result, limits) = self
            .send_answering_input(server, context, input_required::read_resource(uri))
            .await?;
        Ok(decode::<Contents>(&result, limits.max_bytes, "resources/read")?.contents)
    }

    /// `prompts/get`.
    pub async fn get_prompt(
        &self,
        server: &UpstreamServer,
        name: &str,
        arguments: serde_json::Map<String, Value>,
        context: &CallContext,
    ) -> Result<PromptResult, UpstreamError> {
        let build = input_required::get_prompt(name, Some(arguments));
        let (result, limits) = self.send_answering_input(server, context, build).await?;
        decode(&result, limits.max_bytes, "prompts/get")
    }

    /// Lists tools, resources and prompts (every page) through the caller's session.
    pub async fn fetch_capabilities(
        &self,
        server: &UpstreamServer,
        caller: &Caller,
    ) -> Result<CapabilitySnapshot, UpstreamError> {
        let limits = self.limits(server);
        let (slot, live) = self
            .session(server, Self::scope_for(server, caller))
            .await?;
        let _call = live.begin_call();
        let listing = snapshot(&live.peer, &live.errors, &live.latency);
        match tokio::time::timeout(limits.max_total, listing).await {
            Ok(Ok(snapshot)) => Ok(snapshot),
            Ok(Err(error)) => Err(after_failure(&slot, &live, error).await),
            Err(_) => {
                live.latency.record_request(limits.max_total);
                Err(UpstreamError::Timeout(limits.max_total))
            }
        }
    }

    /// Connects afresh (outside the session pool), initializes, lists the tools and
    /// disconnects: the `/test` endpoint.
    pub async fn test_connection(
        &self,
        server: &UpstreamServer,
    ) -> Result<ConnectionTestReport, UpstreamError> {
        let started = Instant::now();
        let limits = self.limits(server);
        let live = self.connect_once(server).await?;
        let tools = tokio::time::timeout(
            limits.max_total,
            list_tools(&live.peer, &live.errors, &live.latency),
        )
        .await;
        let report = match tools {
            Ok(Ok(tools)) => Ok(ConnectionTestReport {
                latency_ms: started.elapsed().as_millis() as u64,
                server: live.description.clone(),
                tool_count: tools.len(),
            }),
            Ok(Err(error)) => Err(error),
            Err(_) => {
                live.latency.record_request(limits.max_total);
                Err(UpstreamError::Timeout(limits.max_total))
            }
        };
        live.close(self.inner.config.shutdown_timeout()).await;
        report
    }

    /// Lists everything over a connection of its own, closed afterwards (a sync of a server
    /// whose sessions are per user or per conversation must not leave a session behind).
    pub async fn fetch_capabilities_once(
        &self,
        server: &UpstreamServer,
    ) -> Result<CapabilitySnapshot, UpstreamError> {
        let limits = self.limits(server);
        let live = self.connect_once(server).await?;
        let listing = snapshot(&live.peer, &live.errors, &live.latency);
        let outcome = match tokio::time::timeout(limits.max_total, listing).await {
            Ok(outcome) => outcome,
            Err(_) => {
                live.latency.record_request(limits.max_total);
                Err(UpstreamError::Timeout(limits.max_total))
            }
        };
        live.close(self.inner.config.shutdown_timeout()).await;
        outcome
    }

    /// A connection of its own; its start and requests count in the server's latency window
    /// like a session's.
    async fn connect_once(&self, server: &UpstreamServer) -> Result<LiveSession, UpstreamError> {
        server.validate()?;
        let latency = self.inner.sessions.latencies.window(&server.id);
        let context = self.start_context(server);
        let lifecycle = match self.remembered_protocol_version(server) {
            Some(version) => Lifecycle::Remembered(version),
            None => Lifecycle::Auto,
        };
        let params = crate::session::live::ConnectParams {
            server,
            config: context.config,
            http_client: context.http_client,
            policy: context.policy,
            lifecycle,
            router: Arc::new(crate::notifications::NotificationRouter::new(
                server.name.clone(),
                None,
            )),
            // Advertised like every other session, so the server shows the same tools (server-everything
            // lists its form tool only to clients that can answer forms); a form asked here, with no
            // call of a conversation behind it, is declined by the responder.
            elicitation: context.elicitation.clone(),
            sampling: context.sampling,
            latency: latency.clone(),
        };
        let init_timeout = server.init_timeout(self.inner.config.session_init_timeout());
        let started = Instant::now();
        let connected =
            tokio::time::timeout(init_timeout, crate::session::live::connect(params)).await;
        latency.record_start(started.elapsed());
        let live = match connected {
            Ok(live) => live?,
            Err(_) => {
                return Err(UpstreamError::InitTimeout {
                    target: server.display_target(),
                    after: init_timeout,
                });
            }
        };
        self.inner.versions.remember(
            &server.id,
            server.connection_fingerprint(),
            &live.description.protocol_version,
        );
        Ok(live)
    }

    async fn acquire_permits(
        &self,
        server: &UpstreamServer,
        caller: &Caller,
        wait: Duration,
    ) -> Result<Vec<OwnedSemaphorePermit>, UpstreamError> {
        let config = &self.inner.config;
        let mut permits = Vec::with_capacity(2);
        let started = Instant::now();
        if let Some(conversation_id) = &caller.conversation_id {
            let limit = config.max_concurrent_calls_per_conversation;
            let semaphore = self
                .inner
                .sessions
                .conversation_limit(conversation_id, limit);
            permits.push(acquire(semaphore, wait, "conversation", limit, started).await?);
        }
        let limit = config.max_concurrent_calls_per_server;
        let semaphore = self.inner.sessions.server_limit(&server.id, limit);
        permits.push(
            acquire(
                semaphore,
                wait.saturating_sub(started.elapsed()),
                "server",
                limit,
                started,
            )
            .await?,
        );
        Ok(permits)
    }
}

async fn acquire(
    semaphore: Arc<tokio::sync::Semaphore>,
    wait: Duration,
    scope: &'static str,
    limit: usize,
    started: Instant,
) -> Result<OwnedSemaphorePermit, UpstreamError> {
    match tokio::time::timeout(wait, semaphore.acquire_owned()).await {
        Ok(Ok(permit)) => Ok(permit),
        Ok(Err(_)) => Err(UpstreamError::ShuttingDown),
        Err(_) => Err(UpstreamError::Busy {
            scope,
            limit,
            waited: started.elapsed(),
        }),
    }
}
