//! The gateway client's part in its own calls, joined to the chat's call path: its user
//! approving an `ASK_USER` call through elicitation ([`ElicitingClient`], the chat gate's
//! `ClientApprover` over `mcp-server`'s `GatewayAsker`); the upstream's progress (under the
//! client's own `progressToken`) and log messages (at the session's level, `server/logger` on
//! aggregated endpoints) passed on to it ([`CallRelay`]: the call's `CallEvent`s); and the
//! upstream's `elicitation/create` and `sampling/createMessage` of the call put to it when it
//! declared the capability ([`ForwardingClient`], the MCP client's `ClientLink` over
//! `mcp-server`'s `GatewayClientLink`), each audited as `upstream_request.forwarded` (origin
//! gateway, the client's name, the answer's action — never its content).

use async_trait::async_trait;
use futures::future::BoxFuture;
use switchboard_approvals::AuditLog;
use switchboard_chat::ClientApprover;
use switchboard_core::{ApprovalQuestion, ClientAnswer, Principal};
use switchboard_mcp_client::{
    CallEvent, ClientLink, ForwardError, ForwardedKind, ForwardedRequest,
};
use switchboard_mcp_server::gateway::{GatewayAsker, GatewayClientLink, GatewayProgress};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Events buffered between the upstream's notifications and the client (dropped when full).
const RELAY_BUFFER: usize = 64;

#[derive(Debug)]
pub(super) struct ElicitingClient(pub GatewayAsker);

#[async_trait]
impl ClientApprover for ElicitingClient {
    async fn ask(&self, question: ApprovalQuestion) -> ClientAnswer {
        self.0.ask(&question).await
    }
}

/// The gateway's client as the answerer of one call's upstream requests.
#[derive(Debug)]
pub(super) struct ForwardingClient {
    pub link: GatewayClientLink,
    pub audit: AuditLog,
    pub principal: Principal,
    pub client_name: String,
}

impl ClientLink for ForwardingClient {
    fn answers(&self, kind: ForwardedKind) -> bool {
        match kind {
            ForwardedKind::Elicitation => self.link.elicits(),
            ForwardedKind::Sampling => self.link.samples(),
        }
    }

    fn forward(
        &self,
        request: ForwardedRequest,
    ) -> BoxFuture<'static, Result<serde_json::Value, ForwardError>> {
        let (link, audit) = (self.link.clone(), self.audit.clone());
        let (principal, client_name) = (self.principal.clone(), self.client_name.clone());
        Box::pin(async move {
            let answer = match request.kind {
                ForwardedKind::Elicitation => link.elicit(request.params).await,
                ForwardedKind::Sampling => link.sample(request.params).await,
            };
            let outcome = match &answer {
                Ok(result) => result
                    .get("action")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("answered")
                    .to_owned(),
                Err(_) => "failed".to_owned(),
            };
            audit
                .upstream_request_forwarded(
                    &principal,
                    &request.server_name,
                    request.kind.method(),
                    &client_name,
                    &outcome,
                )
                .await;
            answer.map_err(|failure| ForwardError {
                code: failure.code,
                message: failure.message,
            })
        })
    }
}

/// Passes one call's progress and log messages to the client until [`CallRelay::finish`].
pub(super) struct CallRelay {
    pub events: mpsc::Sender<CallEvent>,
    done: CancellationToken,
    task: JoinHandle<()>,
}

/// Where a call's events go.
pub(super) struct RelayTargets {
    pub progress: Option<GatewayProgress>,
    pub link: Option<GatewayClientLink>,
    /// The upstream of the call (log messages are named after it on aggregated endpoints).
    pub server_name: String,
}

impl CallRelay {
    pub fn start(targets: RelayTargets) -> Self {
        let (events, mut received) = mpsc::channel(RELAY_BUFFER);
        let done = CancellationToken::new();
        let finished = done.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    event = received.recv() => match event {
                        Some(event) => forward(&targets, event).await,
                        None => return,
                    },
                    () = finished.cancelled() => break,
                }
            }
            // What already arrived goes before the answer; later reports would follow it.
            while let Ok(event) = received.try_recv() {
                forward(&targets, event).await;
            }
        });
        Self { events, done, task }
    }

    /// Sends what has arrived and stops (the call answered: the client's token is done).
    pub async fn finish(self) {
        self.done.cancel();
        drop(self.events);
        let _ = self.task.await;
    }
}

async fn forward(targets: &RelayTargets, event: CallEvent) {
    match event {
        CallEvent::Progress {
            progress,
            total,
            message,
        } => {
            if let Some(reporter) = &targets.progress {
                reporter.report(progress, total, message).await;
            }
        }
        CallEvent::Log {
            level,
            logger,
            data,
        } => {
            if let Some(link) = &targets.link {
                link.log(&targets.server_name, &level, logger, data).await;
            }
        }
        // The gateway follows an upstream task itself and answers the client's `tools/call`
        // with the task's result; its status changes have no place in that call.
        CallEvent::Task(_) => {}
    }
}
