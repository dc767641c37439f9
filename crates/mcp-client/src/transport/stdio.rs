//! The stdio transport: newline-delimited JSON-RPC with a child process, written as an rmcp
//! `Transport` because rmcp's own child-process transport lets stderr through, has no notion
//! of process groups and drops (rather than answers) oversized messages.
//!
//! Incoming lines are read by a task into a channel, each capped at the configured message
//! size; an oversized answer becomes an error response for the waiting request, and ends the
//! session (its process group is killed; the next call starts a new one): the rest of such a
//! line may never come, and reading it would wedge the session.

use super::framing::{
    BoundedLineReader, Frame, malformed_response_message, response_too_large_message, top_level_id,
};
use super::stdio_process::{ProcessGroup, spawn};
use crate::config::StdioConfig;
use crate::server::StdioCommand;
use rmcp::RoleClient;
use rmcp::model::{ClientNotification, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::collections::HashSet;
use std::sync::Arc;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Ids of requests written and not yet answered. A response to any other id (a server
/// answering twice, or printing stale output) is dropped here: rmcp would otherwise treat it
/// as a protocol violation during the handshake.
type PendingIds = Arc<std::sync::Mutex<HashSet<RequestId>>>;

/// One stdio server session's transport. Dropping it kills the process group.
pub struct StdioTransport {
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    pending: PendingIds,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    group: Arc<ProcessGroup>,
    reader_task: JoinHandle<()>,
    /// Cancelled as soon as the server's stdout ends (before rmcp's loop notices).
    closed: CancellationToken,
}

impl std::fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport")
            .field("process_group_id", &self.group.process_group_id())
            .finish()
    }
}

impl StdioTransport {
    pub(crate) fn spawn(
        server_name: &str,
        command: &StdioCommand,
        config: &StdioConfig,
        max_message_bytes: usize,
    ) -> std::io::Result<(Self, Arc<ProcessGroup>)> {
        let child = spawn(server_name, command, config)?;
        let (sender, incoming) = mpsc::channel(64);
        let pending = PendingIds::default();
        let closed = CancellationToken::new();
        let group = child.group;
        let reader_task = tokio::spawn(read_messages(
            server_name.to_owned(),
            group.clone(),
            child.stdout,
            sender,
            pending.clone(),
            max_message_bytes,
            closed.clone(),
        ));
        Ok((
            Self {
                incoming,
                pending,
                stdin: Arc::new(Mutex::new(Some(child.stdin))),
                group: group.clone(),
                reader_task,
                closed,
            },
            group,
        ))
    }
}

async fn read_messages(
    server_name: String,
    group: Arc<ProcessGroup>,
    stdout: ChildStdout,
    sender: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    pending: PendingIds,
    max_message_bytes: usize,
    closed: CancellationToken,
) {
    let _closed_on_exit = closed.clone().drop_guard();
    let mut reader = BoundedLineReader::new(
        BufReader::with_capacity(64 * 1024, stdout),
        max_message_bytes,
    );
    loop {
        let message = match reader.next_frame().await {
            Ok(Some(Frame::Line(line))) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match decode_line(&server_name, &line) {
                    Some(message) => message,
                    None => continue,
                }
            }
            Ok(Some(Frame::Oversized { prefix })) => {
                // The rest of that line may never end, and draining it would keep this session
                // busy (a core spent reading, every later call waiting its full timeout): the
                // session ends here — marked dead before its caller hears why, the process
                // group killed — and the next call starts a new one.
                closed.cancel();
                group.kill_now();
                let id = top_level_id(&prefix);
                tracing::warn!(server = %server_name, id = ?id, max_message_bytes, "the server wrote an oversized message; restarting its session");
                if let Some(id) = id
                    && let Ok(message) =
                        serde_json::from_value(response_too_large_message(id, max_message_bytes))
                {
                    let _ = sender.send(message).await;
                }
                break;
            }
            Ok(None) => break,
            Err(error) => {
                tracing::warn!(server = %server_name, %error, "reading the server's stdout failed");
                break;
            }
        };
        let answered = match &message {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        if let Some(id) = answered {
            let expected = pending
                .lock()
                .map(|mut pending| pending.remove(id))
                .unwrap_or(true);
            if !expected {
                tracing::warn!(server = %server_name, %id, "ignoring a response to no pending request");
                continue;
            }
        }
        if sender.send(message).await.is_err() {
            break;
        }
    }
}

/// Decodes one line. A line that is not a JSON-RPC message is dropped, unless it carries a
/// top-level `id`: then it is taken for a malformed answer to that request, which fails at once
/// (if nobody waits for that id, the pending check drops it like any stray answer).
fn decode_line(server_name: &str, line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line) {
        Ok(message) => return Some(message),
        Err(error) => error,
    };
    let preview = String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned();
    let Some(id) = top_level_id(line) else {
        tracing::warn!(server = %server_name, %error, %preview, "ignoring a line that is not a JSON-RPC message");
        return None;
    };
    tracing::warn!(server = %server_name, %id, %error, %preview, "refusing a malformed answer");
    serde_json::from_value(malformed_response_message(id, &error.to_string())).ok()
}

impl StdioTransport {
    pub(crate) fn closed_signal(&self) -> CancellationToken {
        self.closed.clone()
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let stdin = self.stdin.clone();
        if let Ok(mut pending) = self.pending.lock() {
            match &item {
                JsonRpcMessage::Request(request) => {
                    pending.insert(request.id.clone());
                }
                // An abandoned request will get no answer (or one nobody waits for).
                JsonRpcMessage::Notification(notification) => {
                    if let ClientNotification::CancelledNotification(cancelled) =
                        &notification.notification
                        && let Some(id) = &cancelled.params.request_id
                    {
                        pending.remove(id);
                    }
                }
                _ => {}
            }
        }
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            let mut guard = stdin.lock().await;
            let writer = guard.as_mut().ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the server's stdin is closed",
                )
            })?;
            writer.write_all(&line).await?;
            writer.flush().await
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.group.shutdown(&self.stdin).await;
        self.reader_task.abort();
        Ok(())
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.reader_task.abort();
        self.group.kill_now();
    }
}
