//! The gateway client's part in its own calls, joined to the chat's call path: its user
//! approving an `ASK_USER` call through elicitation ([`ElicitingClient`], the chat gate's
//! `ClientApprover` over `mcp-server`'s `GatewayAsker`) and the upstream's progress reported to
//! it under its own `progressToken` ([`ProgressRelay`]: the call's `CallEvent`s, of which only
//! progress is forwarded — log messages are not the client's to see).

use async_trait::async_trait;
use switchboard_chat::ClientApprover;
use switchboard_core::{ApprovalQuestion, ClientAnswer};
use switchboard_mcp_client::CallEvent;
use switchboard_mcp_server::gateway::{GatewayAsker, GatewayProgress};
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

/// Forwards one call's progress to the client until [`ProgressRelay::finish`].
pub(super) struct ProgressRelay {
    pub events: mpsc::Sender<CallEvent>,
    done: CancellationToken,
    task: JoinHandle<()>,
}

impl ProgressRelay {
    pub fn start(progress: GatewayProgress) -> Self {
        let (events, mut received) = mpsc::channel(RELAY_BUFFER);
        let done = CancellationToken::new();
        let finished = done.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    event = received.recv() => match event {
                        Some(event) => forward(&progress, event).await,
                        None => return,
                    },
                    () = finished.cancelled() => break,
                }
            }
            // What already arrived goes before the answer; later reports would follow it.
            while let Ok(event) = received.try_recv() {
                forward(&progress, event).await;
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

async fn forward(progress: &GatewayProgress, event: CallEvent) {
    if let CallEvent::Progress {
        progress: value,
        total,
        message,
    } = event
    {
        progress.report(value, total, message).await;
    }
}
