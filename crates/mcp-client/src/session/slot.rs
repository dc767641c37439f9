//! `SessionSlot`: the state machine of one session (IDLE → INITIALIZING → ACTIVE → ERROR /
//! CLOSED). It starts the session lazily on first use with single flight (concurrent first
//! users wait on the same start), retries a failed start with exponential backoff, answers
//! from ERROR with the last error until a delay has passed, and notices a dead or outdated
//! session and replaces it on the next use.

use super::live::LiveSession;
use super::start::start_with_retries;
use super::{SessionKey, SessionStatus, StartContext};
use crate::UpstreamError;
use crate::latency::LatencyWindow;
use crate::metrics;
use crate::session_events::{SessionEventKind, SessionObserver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::LockUnpoisoned;
use switchboard_core::SessionState;

pub(crate) struct SessionSlot {
    pub key: SessionKey,
    /// The server's latency window: its sessions' requests and this slot's starts go there.
    latency: Arc<LatencyWindow>,
    state: Mutex<SlotState>,
    start_lock: tokio::sync::Mutex<()>,
}

struct SlotState {
    state: SessionState,
    live: Option<Arc<LiveSession>>,
    last_error: Option<UpstreamError>,
    error_at: Option<Instant>,
    /// The configuration that failed: a changed configuration is tried at once.
    error_fingerprint: u64,
    changed_at: chrono::DateTime<chrono::Utc>,
    /// Told about this session's life (set by the last start).
    observer: Option<SessionObserver>,
}

impl SlotState {
    fn set(&mut self, state: SessionState) {
        self.state = state;
        self.changed_at = chrono::Utc::now();
    }

    /// A start succeeded: the session is kept and the slot is ACTIVE.
    fn record_started(&mut self, live: LiveSession) -> Arc<LiveSession> {
        if let Some(observer) = &self.observer {
            observer.emit(SessionEventKind::Connected {
                protocol_version: live.description.protocol_version.clone(),
            });
        }
        let live = Arc::new(live);
        self.live = Some(live.clone());
        self.last_error = None;
        self.error_at = None;
        self.set(SessionState::Active);
        live
    }

    /// A start failed: the error is kept (with the configuration that failed) and the slot is
    /// in ERROR.
    fn record_start_failed(&mut self, error: &UpstreamError, fingerprint: u64) {
        if let Some(observer) = &self.observer {
            observer.emit(SessionEventKind::StartFailed {
                code: error.code(),
                message: error.to_string(),
            });
        }
        self.last_error = Some(error.clone());
        self.error_at = Some(Instant::now());
        self.error_fingerprint = fingerprint;
        self.set(SessionState::Error);
    }
}

/// What to do with a live session found in the slot.
enum Found {
    Usable(Arc<LiveSession>),
    Replace(Arc<LiveSession>, &'static str),
    Nothing,
}

/// How long a retired session's close may take (its server is likely gone).
const RETIRED_CLOSE_WITHIN: Duration = Duration::from_secs(2);

impl SessionSlot {
    pub fn new(key: SessionKey, latency: Arc<LatencyWindow>) -> Self {
        Self {
            key,
            latency,
            state: Mutex::new(SlotState {
                state: SessionState::Idle,
                live: None,
                last_error: None,
                error_at: None,
                error_fingerprint: 0,
                changed_at: chrono::Utc::now(),
                observer: None,
            }),
            start_lock: tokio::sync::Mutex::new(()),
        }
    }

    fn inspect(&self, fingerprint: u64) -> Found {
        let mut state = self.state.lock_unpoisoned();
        let Some(live) = state.live.clone() else {
            return Found::Nothing;
        };
        if !live.is_alive() {
            state.live = None;
            state.set(SessionState::Idle);
            return Found::Replace(live, "dead");
        }
        if live.fingerprint != fingerprint {
            state.live = None;
            state.set(SessionState::Idle);
            return Found::Replace(live, "reconfigured");
        }
        Found::Usable(live)
    }

    fn usable_or_retire(&self, context: &StartContext<'_>) -> Option<Arc<LiveSession>> {
        match self.inspect(context.server.connection_fingerprint()) {
            Found::Usable(live) => Some(live),
            Found::Replace(old, reason) => {
                let detail = old
                    .failure_detail()
                    .map(|report| report.text)
                    .unwrap_or_default();
                tracing::info!(server = %context.server.name, reason, detail = %switchboard_core::log_text(&detail), "replacing session");
                metrics::session_closed(
                    context.server.id.metric_label(&context.server.name),
                    reason,
                );
                self.emit(SessionEventKind::Closed { reason });
                let close_within = context.config.shutdown_timeout();
                tokio::spawn(async move { old.close(close_within).await });
                None
            }
            Found::Nothing => None,
        }
    }

    /// The live session, starting it if needed.
    pub async fn acquire(
        &self,
        context: &StartContext<'_>,
    ) -> Result<Arc<LiveSession>, UpstreamError> {
        if context.shutdown.is_cancelled() {
            return Err(UpstreamError::ShuttingDown);
        }
        if let Some(live) = self.usable_or_retire(context) {
            return Ok(live);
        }
        let _start = self.start_lock.lock().await;
        if let Some(live) = self.usable_or_retire(context) {
            return Ok(live);
        }
        self.begin_start(context)?;
        // The caller may give up on the start (its future dropped: a client that went away);
        // what was being started is dropped with it (a stdio child is killed), so the slot
        // must not keep saying INITIALIZING.
        let mut abandoned = AbandonedStart {
            slot: self,
            finished: false,
        };
        let outcome = tokio::select! {
            outcome = start_with_retries(context, &self.latency) => outcome,
            () = context.shutdown.cancelled() => Err(UpstreamError::ShuttingDown),
        };
        abandoned.finished = true;
        self.finish_start(context, outcome)
    }

    /// Marks the slot INITIALIZING, unless the same configuration failed to start less than
    /// `session_error_retry` ago: then the caller gets that error without a new attempt.
    fn begin_start(&self, context: &StartContext<'_>) -> Result<(), UpstreamError> {
        let mut state = self.state.lock_unpoisoned();
        if state.state == SessionState::Error
            && state.error_fingerprint == context.server.connection_fingerprint()
            && let (Some(error), Some(error_at)) = (&state.last_error, state.error_at)
        {
            let retry_delay = context.config.session_error_retry();
            if error_at.elapsed() < retry_delay {
                return Err(UpstreamError::SessionUnavailable {
                    message: error.to_string(),
                    retry_in_secs: (retry_delay - error_at.elapsed()).as_secs().max(1),
                });
            }
        }
        state.set(SessionState::Initializing);
        Ok(())
    }

    /// Records how a start ended (ACTIVE or ERROR) and tells the observer; a session started
    /// into a slot closed meanwhile is closed again.
    fn finish_start(
        &self,
        context: &StartContext<'_>,
        outcome: Result<LiveSession, UpstreamError>,
    ) -> Result<Arc<LiveSession>, UpstreamError> {
        let mut state = self.state.lock_unpoisoned();
        if state.state == SessionState::Closed {
            // Closed while starting (shutdown, server deleted): do not keep what was started.
            if let Ok(live) = outcome {
                let close_within = context.config.shutdown_timeout();
                tokio::spawn(async move { live.close(close_within).await });
            }
            return Err(UpstreamError::ShuttingDown);
        }
        state.observer = context
            .session_events
            .clone()
            .map(|handler| SessionObserver::new(handler, context.server));
        match outcome {
            Ok(live) => Ok(state.record_started(live)),
            Err(error) => {
                state.record_start_failed(&error, context.server.connection_fingerprint());
                Err(error)
            }
        }
    }

    /// Tells the observer of the last start, if any.
    fn emit(&self, kind: SessionEventKind) {
        let observer = self.state.lock_unpoisoned().observer.clone();
        if let Some(observer) = observer {
            observer.emit(kind);
        }
    }

    /// Forgets an ERROR so the next use tries at once (manual sync, configuration change).
    pub fn clear_error(&self) {
        let mut state = self.state.lock_unpoisoned();
        if state.state == SessionState::Error {
            state.last_error = None;
            state.error_at = None;
            state.set(SessionState::Idle);
        }
    }

    /// Marks the session dead after a call saw its connection drop, so the next use restarts.
    pub fn mark_failed(&self, live: &Arc<LiveSession>) {
        let mut state = self.state.lock_unpoisoned();
        if state
            .live
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, live))
            && !live.is_alive()
        {
            state.live = None;
            state.set(SessionState::Idle);
            // Counted like a dead session found on next use (which this one no longer is).
            metrics::session_closed(
                self.key.server_id.metric_label(live.router.server_name()),
                "dead",
            );
            if let Some(observer) = &state.observer {
                observer.emit(SessionEventKind::Closed { reason: "dead" });
            }
        }
    }

    /// Drops `live` after a request of it could not reach its server (connection refused,
    /// unresolvable, TLS, connect timeout), so the next use starts a new session. The old one
    /// is closed in the background: its transport may still look alive.
    pub fn retire_unreachable(&self, live: &Arc<LiveSession>) {
        let retired = {
            let mut state = self.state.lock_unpoisoned();
            let current = state
                .live
                .as_ref()
                .is_some_and(|current| Arc::ptr_eq(current, live));
            if current {
                state.live = None;
                state.set(SessionState::Idle);
            }
            current
        };
        if retired {
            metrics::session_closed(live.router.server_name(), "unreachable");
            self.emit(SessionEventKind::Closed {
                reason: "unreachable",
            });
            let live = live.clone();
            tokio::spawn(async move { live.close(RETIRED_CLOSE_WITHIN).await });
        }
    }

    /// Whether this slot's session failed: its last start failed, or its connection died.
    pub fn has_failed(&self) -> bool {
        let state = self.state.lock_unpoisoned();
        match &state.live {
            Some(live) => !live.is_alive(),
            None => state.state == SessionState::Error,
        }
    }

    /// Closes the session if it has been idle (and without calls) for `idle_timeout` and no
    /// one watches a resource on it (the upstream would forget the subscription).
    pub async fn close_if_idle(
        &self,
        server_name: &str,
        idle_timeout: Duration,
        close_within: Duration,
    ) -> bool {
        let retired = {
            let mut state = self.state.lock_unpoisoned();
            match &state.live {
                Some(live)
                    if live.in_flight() == 0
                        && live.idle_for() >= idle_timeout
                        && !live.router.watches.any() =>
                {
                    let live = state.live.take();
                    state.set(SessionState::Closed);
                    live
                }
                _ => None,
            }
        };
        match retired {
            Some(live) => {
                tracing::info!(server = server_name, "closing idle session");
                metrics::session_closed(self.key.server_id.metric_label(server_name), "idle");
                self.emit(SessionEventKind::Closed { reason: "idle" });
                live.close(close_within).await;
                true
            }
            None => false,
        }
    }

    /// Closes the session for good (shutdown, server deleted or deactivated).
    pub async fn close(&self, server_name: &str, close_within: Duration) {
        let live = {
            let mut state = self.state.lock_unpoisoned();
            state.set(SessionState::Closed);
            state.live.take()
        };
        if let Some(live) = live {
            metrics::session_closed(self.key.server_id.metric_label(server_name), "closed");
            self.emit(SessionEventKind::Closed { reason: "closed" });
            live.close(close_within).await;
        }
    }

    pub fn status(&self) -> SessionStatus {
        let state = self.state.lock_unpoisoned();
        let live = state.live.as_ref();
        let effective_state = match live {
            Some(live) if !live.is_alive() => SessionState::Error,
            _ => state.state,
        };
        SessionStatus {
            server_id: self.key.server_id.clone(),
            scope: self.key.scope.clone(),
            state: effective_state,
            since: state.changed_at,
            protocol_version: live.map(|live| live.description.protocol_version.clone()),
            in_flight: live.map(|live| live.in_flight()).unwrap_or(0),
            process_id: live
                .and_then(|live| live.process.as_ref())
                .map(|process| process.process_group_id()),
            last_error: state
                .last_error
                .as_ref()
                .map(ToString::to_string)
                .or_else(|| {
                    live.filter(|live| !live.is_alive()).map(|live| {
                        live.failure_detail()
                            .map(|report| report.text)
                            .unwrap_or_else(|| "the connection closed".to_owned())
                    })
                }),
        }
    }
}

/// Puts a slot whose start was abandoned half-way back to IDLE (see `acquire`).
struct AbandonedStart<'a> {
    slot: &'a SessionSlot,
    finished: bool,
}

impl Drop for AbandonedStart<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let mut state = self.slot.state.lock_unpoisoned();
        if state.state == SessionState::Initializing {
            state.set(SessionState::Idle);
        }
    }
}
