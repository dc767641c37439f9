//! Several replicas on one PostgreSQL database: a call waits for approval (or for a form) in
//! the replica running its answer, while the person's decision may reach another replica. The
//! store announces every settled request on a channel (`switchboard_store::decision_notices`);
//! this module's listener task hears the notices and tells the call waiting here, if any, to
//! look in the store now ([`crate::waiting::WaitingRoom::look_now`]).
//!
//! The notice is only the fast path. Waiting calls keep polling (`approval.decision_poll_ms`),
//! so a lost notice (listener reconnecting, database restart, listener disabled or failing)
//! costs at most one poll interval; after a reconnection every waiting call looks at once.
//! Failures are logged and retried with backoff, never fatal. On SQLite nothing runs: one
//! process, and decisions reach the waiting call in memory.

use crate::service::Approvals;
use std::time::Duration;
use switchboard_store::{BackendKind, DecisionListener, ListenerEvent};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// First and longest pause between attempts to (re)open the listener.
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_LONGEST: Duration = Duration::from_secs(30);

impl Approvals {
    /// Starts listening for other replicas' decisions (PostgreSQL, unless
    /// `approval.listen_for_decisions` is off); the task ends when `shutdown` is cancelled.
    /// Returns once the first attempt to listen is over (so a decision made after it is
    /// heard), with the task's handle; `None` when there is nothing to listen to. A first
    /// attempt that fails is logged and retried in the task.
    pub async fn start_decision_listener(
        &self,
        shutdown: CancellationToken,
    ) -> Option<JoinHandle<()>> {
        if self.inner.store.backend_kind() != BackendKind::Postgres
            || !self.inner.config.listen_for_decisions
        {
            return None;
        }
        let first = tokio::select! {
            _ = shutdown.cancelled() => return None,
            listener = self.open_listener() => listener,
        };
        let approvals = self.clone();
        Some(tokio::spawn(async move {
            approvals.listen(first, shutdown).await;
        }))
    }

    async fn open_listener(&self) -> Option<DecisionListener> {
        match self.inner.store.listen_for_decisions().await {
            Ok(listener) => listener,
            Err(error) => {
                tracing::warn!(%error, "could not listen for other replicas' decisions; waiting calls poll the store meanwhile");
                None
            }
        }
    }

    async fn listen(&self, mut listener: Option<DecisionListener>, shutdown: CancellationToken) {
        let mut retry = RETRY_FIRST;
        loop {
            let Some(active) = listener.as_mut() else {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(retry) => {}
                }
                retry = (retry * 2).min(RETRY_LONGEST);
                listener = self.open_listener().await;
                if listener.is_some() {
                    tracing::info!("listening for other replicas' decisions again");
                    // Notices sent while nobody listened are lost: look now.
                    self.inner.waiting.look_now_all();
                }
                continue;
            };
            let event = tokio::select! {
                _ = shutdown.cancelled() => return,
                event = active.next() => event,
            };
            match event {
                Ok(ListenerEvent::Notice(notice)) => {
                    retry = RETRY_FIRST;
                    self.inner.waiting.look_now(&notice);
                }
                Ok(ListenerEvent::Reconnected) => {
                    retry = RETRY_FIRST;
                    tracing::info!(
                        "the decisions listener lost its connection and opened it again"
                    );
                    self.inner.waiting.look_now_all();
                }
                Err(error) => {
                    tracing::warn!(%error, retry_in_ms = retry.as_millis() as u64, "the decisions listener failed; waiting calls poll the store meanwhile");
                    // The listener opens its connection again on the next call.
                    tokio::select! {
                        _ = shutdown.cancelled() => return,
                        _ = tokio::time::sleep(retry) => {}
                    }
                    retry = (retry * 2).min(RETRY_LONGEST);
                    self.inner.waiting.look_now_all();
                }
            }
        }
    }
}
