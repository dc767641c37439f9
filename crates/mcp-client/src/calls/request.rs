//! One request on a live session, from sending to the decoded answer: routing its progress
//! and log notifications to the caller, its timeout clock, caller cancellation, the size cap,
//! and what a failed connection means for the session (a request whose connection could not
//! even be opened was never sent: the session is retired, and the error says so).

use super::{CallContext, Limits};
use crate::UpstreamError;
use crate::call_clock::CallClock;
use crate::error::from_process::with_detail;
use crate::notifications::RegisteredCall;
use crate::session::live::LiveSession;
use crate::session::slot::SessionSlot;
use rmcp::model::{CancelledNotificationParam, ClientRequest, ServerResult};
use rmcp::service::PeerRequestOptions;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Sends one request and waits for its answer, routing its notifications to `events`. The
/// call fails with `Timeout` after `limits.timeout` of silence (progress restarts it; an open
/// elicitation of the call holds it still) or after `limits.max_total` in any case; the
/// upstream is told with `notifications/cancelled` either way. The wait goes to the server's
/// latency window.
pub(super) async fn run_request(
    slot: &Arc<SessionSlot>,
    live: &Arc<LiveSession>,
    request: ClientRequest,
    limits: &Limits,
    context: &CallContext,
) -> Result<ServerResult, UpstreamError> {
    let cancellation = &context.cancellation;
    let events = context.events.clone();
    let conversation_id = context.caller.conversation_id.clone();
    let _call = live.begin_call();
    // rmcp enforces the hard maximum; the idle timeout is the call clock's.
    let options = PeerRequestOptions::no_options().with_max_total_timeout(limits.max_total);
    let handle = match live.peer.send_request_with_option(request, options).await {
        Ok(handle) => handle,
        Err(error) => {
            return Err(after_failure(slot, live, live.errors.request_failure(error)).await);
        }
    };
    let request_id = handle.id.clone();
    let clock = CallClock::new();
    // Always registered, so log routing knows how many calls are in flight.
    let sink = events.unwrap_or_else(|| mpsc::channel(1).0);
    let registration = live.router.register(
        &handle.progress_token,
        &handle.id,
        RegisteredCall {
            conversation_id,
            sink,
            clock: clock.clone(),
            link: context.client_link.clone(),
        },
    );
    // Notifications on the call's own stream are routed before its answer is read; one the
    // server sent on another stream (Streamable HTTP's standalone GET) can come just after
    // the answer: keep listening a moment after the call.
    let _linger = LingeringRegistration(Some(registration));
    let sent = Instant::now();
    let outcome = tokio::select! {
        response = handle.await_response() => Outcome::Answered(response),
        () = clock.silent_for(limits.timeout) => Outcome::TimedOut,
        () = cancellation.cancelled() => Outcome::Cancelled,
    };
    // Every answer and failure counts, a timeout as its whole wait; a call the caller gave
    // up on counts once it had already waited as long as a slow call. Time spent waiting on a
    // person (an open form of this call) is the person's, not the server's.
    let elapsed = sent.elapsed().saturating_sub(clock.paused_for());
    if !matches!(outcome, Outcome::Cancelled) || elapsed >= limits.slow_call {
        live.latency.record_request(elapsed);
    }
    match outcome {
        Outcome::Answered(Ok(result)) => Ok(result),
        Outcome::Answered(Err(_))
            if live
                .oversized
                .as_ref()
                .is_some_and(|oversized| oversized.take(&request_id)) =>
        {
            Err(UpstreamError::ResponseTooLarge {
                limit: limits.max_bytes,
            })
        }
        Outcome::Answered(Err(error)) => {
            Err(after_failure(slot, live, live.errors.request_failure(error)).await)
        }
        Outcome::TimedOut => {
            let notice = CancelledNotificationParam::new(
                Some(request_id),
                Some("request timeout".to_owned()),
            );
            let _ = live.peer.notify_cancelled(notice).await;
            Err(UpstreamError::Timeout(limits.timeout))
        }
        Outcome::Cancelled => {
            let notice = CancelledNotificationParam::new(
                Some(request_id),
                Some("cancelled by the caller".to_owned()),
            );
            let _ = live.peer.notify_cancelled(notice).await;
            Err(UpstreamError::Cancelled)
        }
    }
}

/// How waiting for an answer ended.
enum Outcome<T> {
    Answered(T),
    TimedOut,
    Cancelled,
}

const NOTIFICATION_LINGER: Duration = Duration::from_millis(250);

struct LingeringRegistration(Option<crate::notifications::ProgressRegistration>);

impl Drop for LingeringRegistration {
    fn drop(&mut self) {
        if let Some(registration) = self.0.take() {
            registration.finish();
            tokio::spawn(async move {
                tokio::time::sleep(NOTIFICATION_LINGER).await;
                drop(registration);
            });
        }
    }
}

/// Adds what is known about a dead connection and lets the slot restart it on next use.
pub(super) async fn after_failure(
    slot: &Arc<SessionSlot>,
    live: &Arc<LiveSession>,
    error: UpstreamError,
) -> UpstreamError {
    if error.is_unreachable() {
        // Its requests cannot leave: the next use starts a new session (the server may be
        // back, possibly at the same address after a restart that forgot this session).
        slot.retire_unreachable(live);
        return error;
    }
    if error.is_connection_failure() || !live.is_alive() {
        slot.mark_failed(live);
        let error = match error {
            UpstreamError::Protocol(reason) | UpstreamError::Connect { reason, .. } => {
                UpstreamError::ConnectionLost(format!("{}: {reason}", live.errors.target))
            }
            precise => precise,
        };
        return match live.settled_failure_detail().await {
            Some(report) => with_detail(error, &report),
            None => error,
        };
    }
    error
}

/// Checks the answer's size, then converts it into our shape.
pub(super) fn decode<T: serde::de::DeserializeOwned>(
    result: &ServerResult,
    max_bytes: usize,
    method: &str,
) -> Result<T, UpstreamError> {
    let bytes =
        serde_json::to_vec(result).map_err(|error| UpstreamError::Protocol(error.to_string()))?;
    if bytes.len() > max_bytes {
        return Err(UpstreamError::ResponseTooLarge { limit: max_bytes });
    }
    serde_json::from_slice(&bytes).map_err(|error| {
        UpstreamError::Protocol(format!("the {method} answer is malformed: {error}"))
    })
}
