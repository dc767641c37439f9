//! The start of one session: up to `session_init_retries` + 1 attempts, each bounded by the
//! server's init timeout, with doubling backoff between them, switching the lifecycle between
//! attempts (see `PROTOCOL.md`) and keeping `VersionMemory` up to date. The slot
//! (`slot.rs`) decides when to start and records the outcome; this module only makes attempts.

use super::StartContext;
use super::lifecycle::Lifecycle;
use super::live::{ConnectParams, LiveSession, connect};
use crate::UpstreamError;
use crate::latency::LatencyWindow;
use crate::metrics;
use crate::notifications::NotificationRouter;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Each attempt's time (connect and handshake, a failed or timed-out one too) is recorded as
/// the server's last start. Attempts are logged at `debug`, a failed start once at `info`.
pub(super) async fn start_with_retries(
    context: &StartContext<'_>,
    latency: &Arc<LatencyWindow>,
) -> Result<LiveSession, UpstreamError> {
    let server = context.server;
    let fingerprint = server.connection_fingerprint();
    let mut lifecycle = match context.versions.recall(&server.id, fingerprint) {
        Some(version) => Lifecycle::Remembered(version),
        None => Lifecycle::Auto,
    };
    let mut backoff = context.config.session_init_backoff();
    let attempts = context.config.session_init_retries + 1;
    let init_timeout = server.init_timeout(context.config.session_init_timeout());
    let mut last_error = UpstreamError::Initialize {
        target: server.display_target(),
        reason: "no attempt was made".to_owned(),
    };
    for attempt in 1..=attempts {
        let params = connect_params(context, latency, lifecycle.clone());
        let started = Instant::now();
        let attempt_outcome = tokio::time::timeout(init_timeout, connect(params)).await;
        latency.record_start(started.elapsed());
        match attempt_outcome {
            Ok(Ok(live)) => {
                record_started(context, fingerprint, &live, started, attempt);
                return Ok(live);
            }
            Ok(Err(error)) => {
                let retryable = error.is_retryable_start();
                last_error = record_failed_attempt(context, &mut lifecycle, attempt, error);
                if !retryable {
                    break;
                }
            }
            Err(_) => {
                last_error =
                    record_timed_out_attempt(context, &mut lifecycle, attempt, init_timeout);
            }
        }
        if attempt < attempts {
            tokio::time::sleep(backoff).await;
            backoff = backoff.saturating_mul(2);
        }
    }
    // One line for the whole start, at `info`: whoever asked for the session (a sync, a call)
    // reports what the failure means for it.
    tracing::info!(server = %server.name, code = last_error.code(), error = %last_error, "session start failed");
    Err(last_error)
}

/// One attempt's connect parameters, with a fresh notification router.
fn connect_params<'a>(
    context: &StartContext<'a>,
    latency: &Arc<LatencyWindow>,
    lifecycle: Lifecycle,
) -> ConnectParams<'a> {
    let server = context.server;
    let router = Arc::new(
        NotificationRouter::new(server.name.clone(), context.list_changed.clone())
            .with_task_watchers(Arc::clone(&context.task_watchers), server.id.clone()),
    );
    ConnectParams {
        server,
        config: context.config,
        http_client: context.http_client,
        policy: context.policy,
        lifecycle,
        router,
        elicitation: context.elicitation.clone(),
        sampling: context.sampling,
        latency: latency.clone(),
    }
}

/// A started session: its protocol version is remembered for the next connect, and counted.
fn record_started(
    context: &StartContext<'_>,
    fingerprint: u64,
    live: &LiveSession,
    started: Instant,
    attempt: u32,
) {
    let server = context.server;
    context
        .versions
        .remember(&server.id, fingerprint, &live.description.protocol_version);
    metrics::session_started(
        server.id.metric_label(&server.name),
        server.transport().as_str(),
    );
    tracing::info!(
        server = %server.name,
        protocol_version = %live.description.protocol_version,
        elapsed_ms = started.elapsed().as_millis() as u64,
        attempt,
        "session started"
    );
}

/// A failed attempt: counted, and a remembered version is forgotten (the server may have
/// changed), so the next attempt probes again. Returns the error to report if none succeeds.
fn record_failed_attempt(
    context: &StartContext<'_>,
    lifecycle: &mut Lifecycle,
    attempt: u32,
    error: UpstreamError,
) -> UpstreamError {
    let server = context.server;
    metrics::session_start_failed(server.id.metric_label(&server.name), error.code());
    tracing::debug!(server = %server.name, attempt, error = %switchboard_core::log_text(&error.to_string()), "a session start attempt failed");
    if error.is_retryable_start() && matches!(lifecycle, Lifecycle::Remembered(_)) {
        context.versions.forget(&server.id);
        *lifecycle = Lifecycle::Auto;
    }
    error
}

/// A timed-out attempt: counted, and the next attempt uses another lifecycle. Returns the
/// error to report if none succeeds.
fn record_timed_out_attempt(
    context: &StartContext<'_>,
    lifecycle: &mut Lifecycle,
    attempt: u32,
    init_timeout: Duration,
) -> UpstreamError {
    let server = context.server;
    metrics::session_start_failed(server.id.metric_label(&server.name), "init_timeout");
    tracing::debug!(server = %server.name, attempt, "a session start attempt timed out");
    *lifecycle = match std::mem::replace(lifecycle, Lifecycle::Auto) {
        // A server that ignores unknown methods never answers the probe.
        Lifecycle::Auto => Lifecycle::LegacyInitialize,
        Lifecycle::Remembered(_) => {
            context.versions.forget(&server.id);
            Lifecycle::Auto
        }
        Lifecycle::LegacyInitialize | Lifecycle::Listed(_) => Lifecycle::Auto,
    };
    UpstreamError::InitTimeout {
        target: server.display_target(),
        after: init_timeout,
    }
}
