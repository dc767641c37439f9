//! An MCP server with a task tool, built on rmcp's server side and its `TaskManager` (an
//! official SDK's implementation of the tasks extension, SEP-2663), over Streamable HTTP on
//! 127.0.0.1: `slow_report` answers `tools/call` with a task when the client declared the
//! extension, works for `seconds`, and completes with "report ready: {topic}". It counts how
//! often the tool started and which tasks were cancelled (`tasks/cancel`), so tests can prove
//! a call ran exactly once and a cancellation reached it. It runs in the test process, so it
//! outlives a Switchboard that is killed and started again.
//!
//! `asking_report` does the same, but first asks its client for the topic from inside the task
//! (status `input_required` with an `elicitation/create` in `inputRequests`, answered with
//! `tasks/update`, SEP-2663), and completes with the answer: "report ready: {topic}".
//!
//! With [`TaskServerOptions::notify`] it also *tells* each status change and the task's end
//! with `notifications/tasks` (SEP-2663; rmcp's `TaskStatusNotification`) on the session it was
//! created in, and suggests a poll interval far longer than the task, so a client that sees the
//! change or the result in time can only have taken it from the notification. That mode answers
//! `server/discover` as a server of the `initialize` generation does, so clients open a session
//! (protocol 2025-11-25) that can carry the notifications: rmcp cannot yet route task
//! notifications on the stateless 2026-07-28 generation's `subscriptions/listen`.

use axum::Router;
use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, DiscoverResult, ElicitRequest, ElicitRequestParams, GetTaskParams,
    GetTaskResult, Implementation, InputRequest, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerConfig, ServerNotification, TaskStatus,
    TaskStatusNotification, TaskStatusNotificationParams, Tool, UpdateTaskParams,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a client is told to poll.
pub const POLL_INTERVAL_MS: u64 = 200;

/// How the fixture behaves.
#[derive(Clone, Copy, Debug)]
pub struct TaskServerOptions {
    /// The `pollInterval` its tasks suggest.
    pub poll_interval_ms: u64,
    /// Send `notifications/tasks` at each status change and at the end (protocol 2025-11-25
    /// only, see the module's doc).
    pub notify: bool,
}

impl Default for TaskServerOptions {
    fn default() -> Self {
        Self {
            poll_interval_ms: POLL_INTERVAL_MS,
            notify: false,
        }
    }
}

/// What the server saw.
#[derive(Debug, Default)]
pub struct TaskServerLog {
    started: AtomicUsize,
    finished: AtomicUsize,
    cancelled: Mutex<Vec<String>>,
}

impl TaskServerLog {
    /// How many times `slow_report` began working.
    pub fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    /// How many of its tasks completed.
    pub fn finished(&self) -> usize {
        self.finished.load(Ordering::SeqCst)
    }

    /// The ids of the tasks a client cancelled with `tasks/cancel`.
    pub fn cancelled(&self) -> Vec<String> {
        self.cancelled
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

#[derive(Clone)]
struct TaskFixture {
    tasks: TaskManager,
    log: Arc<TaskServerLog>,
    options: TaskServerOptions,
}

impl TaskFixture {
    /// Tells the client the task's state now (notify mode; a failure is the client's loss,
    /// its poll catches up).
    async fn tell(tasks: &TaskManager, peer: &Peer<RoleServer>, task_id: &str) {
        if let Ok(task) = tasks.get_task(task_id) {
            let notification = TaskStatusNotification::new(TaskStatusNotificationParams::new(task));
            let _ = peer
                .send_notification(ServerNotification::TaskStatusNotification(notification))
                .await;
        }
    }

    /// Tells the task's end once the manager has its outcome.
    fn tell_the_end(&self, peer: Peer<RoleServer>, task_id: String) {
        let tasks = self.tasks.clone();
        tokio::spawn(async move {
            loop {
                match tasks.get_task(&task_id) {
                    Ok(task)
                        if !matches!(
                            task.task.status,
                            TaskStatus::Working | TaskStatus::InputRequired
                        ) =>
                    {
                        break;
                    }
                    Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                    Err(_) => return,
                }
            }
            Self::tell(&tasks, &peer, &task_id).await;
        });
    }
}

impl TaskFixture {
    /// `asking_report`'s task: asks for the topic, then completes with it.
    fn asking_task(&self) -> rmcp::model::Task {
        let log = Arc::clone(&self.log);
        let options = TaskOptions::new()
            .with_poll_interval_ms(self.options.poll_interval_ms)
            .with_status_message("asking for a topic");
        self.tasks.spawn(options, move |task| {
            Box::pin(async move {
                let form: ElicitRequestParams = serde_json::from_value(json!({
                    "mode": "form",
                    "message": "Which topic?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"topic": {"type": "string"}},
                        "required": ["topic"],
                    },
                }))
                .map_err(|error| {
                    TaskExit::Error(ErrorData::internal_error(error.to_string(), None))
                })?;
                let question = InputRequest::Elicitation(ElicitRequest::new(form));
                let answer = tokio::select! {
                    () = task.cancelled() => return Err(TaskExit::Cancelled),
                    answer = task.request_input("topic", question) => answer?,
                };
                let topic = answer["content"]["topic"].as_str().unwrap_or("nothing");
                log.finished.fetch_add(1, Ordering::SeqCst);
                Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                    "report ready: {topic}"
                ))]))
            })
        })
    }
}

impl ServerHandler for TaskFixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new("task-fixture", "1"))
    }

    /// In notify mode: answered as a server of the `initialize` generation answers an unknown
    /// method, so a client falls back to a session (which carries the notifications).
    async fn discover(&self, _: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        if self.options.notify {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "server/discover",
                None,
            ));
        }
        Ok(DiscoverResult::from_server_info(
            ProtocolVersion::KNOWN_VERSIONS.to_vec(),
            self.get_info(),
        ))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({
            "type": "object",
            "properties": {"topic": {"type": "string"}, "seconds": {"type": "number"}},
            "required": ["topic", "seconds"],
        });
        let tool = Tool::new(
            "slow_report",
            "Writes a report on a topic; takes a while, so it runs as a task",
            Arc::new(schema.as_object().cloned().unwrap_or_default()),
        );
        let asking = Tool::new(
            "asking_report",
            "Writes a report on a topic it asks its user for, as a task",
            Arc::new(serde_json::Map::from_iter([(
                "type".to_owned(),
                json!("object"),
            )])),
        );
        Ok(ListToolsResult::with_all_items(vec![tool, asking]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let topic = arguments
            .get("topic")
            .and_then(|topic| topic.as_str())
            .unwrap_or("nothing")
            .to_owned();
        let seconds = arguments
            .get("seconds")
            .and_then(|seconds| seconds.as_f64())
            .unwrap_or(1.0);
        let declared = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        if !declared {
            return Err(ErrorData::invalid_request(
                "slow_report runs only as a task; declare io.modelcontextprotocol/tasks",
                None,
            ));
        }
        self.log.started.fetch_add(1, Ordering::SeqCst);
        if request.name == "asking_report" {
            return Ok(CallToolResponse::Task(CreateTaskResult::new(
                self.asking_task(),
            )));
        }
        let log = Arc::clone(&self.log);
        let options = TaskOptions::new()
            .with_poll_interval_ms(self.options.poll_interval_ms)
            .with_status_message("gathering sources");
        let peer = self.options.notify.then(|| context.peer.clone());
        let tasks = self.tasks.clone();
        let told = peer.clone();
        let task = self.tasks.spawn(options, move |task| {
            Box::pin(async move {
                let half = Duration::from_secs_f64(seconds / 2.0);
                tokio::select! {
                    () = task.cancelled() => return Err(TaskExit::Cancelled),
                    () = tokio::time::sleep(half) => {}
                }
                task.set_status_message("writing the report");
                if let Some(peer) = &told {
                    Self::tell(&tasks, peer, task.task_id()).await;
                }
                tokio::select! {
                    () = task.cancelled() => Err(TaskExit::Cancelled),
                    () = tokio::time::sleep(half) => {
                        log.finished.fetch_add(1, Ordering::SeqCst);
                        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                            "report ready: {topic}"
                        ))]))
                    }
                }
            })
        });
        if let Some(peer) = peer {
            self.tell_the_end(peer, task.task_id.clone());
        }
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log
            .cancelled
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(request.task_id.clone());
        self.tasks.cancel_task(&request.task_id)
    }
}

/// The running fixture: its `/mcp` URL and what it saw.
#[derive(Debug)]
pub struct TaskServer {
    pub address: SocketAddr,
    pub log: Arc<TaskServerLog>,
    _server: tokio::task::JoinHandle<()>,
}

impl TaskServer {
    /// Starts it on 127.0.0.1 and a free port. Every session shares one task manager, so a
    /// client that comes back on a new session still finds its task.
    pub async fn start() -> Self {
        Self::start_with(TaskServerOptions::default()).await
    }

    /// Starts it with `options`.
    pub async fn start_with(options: TaskServerOptions) -> Self {
        let fixture = TaskFixture {
            tasks: TaskManager::new(),
            log: Arc::new(TaskServerLog::default()),
            options,
        };
        let log = Arc::clone(&fixture.log);
        let service: StreamableHttpService<TaskFixture, LocalSessionManager> =
            StreamableHttpService::new(
                move || Ok(fixture.clone()),
                Default::default(),
                StreamableHttpServerConfig::default(),
            );
        let router = Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding the task fixture");
        let address = listener.local_addr().expect("the fixture's address");
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        TaskServer {
            address,
            log,
            _server: server,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }
}

impl Drop for TaskServer {
    fn drop(&mut self) {
        self._server.abort();
    }
}
