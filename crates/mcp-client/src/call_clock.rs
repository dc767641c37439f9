//! `CallClock`: the per-call timeout clock. A call fails when its upstream has been silent for
//! the call timeout; progress notifications count as a sign of life, and while the upstream
//! waits on a person (an `elicitation/create` request of this call is open) the clock stands
//! still — a slow answer must not cost the call. When the person answers, the call gets a
//! full timeout again. The hard maximum (`tool_call_max_timeout_secs`) is enforced apart from
//! this clock and always applies; the elicitation's own timeout bounds the pause.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::LockUnpoisoned;
use tokio::sync::Notify;
use tokio::time::Instant;

#[derive(Debug)]
pub(crate) struct CallClock {
    state: Mutex<ClockState>,
    changed: Notify,
}

#[derive(Debug)]
struct ClockState {
    last_activity: Instant,
    /// Open elicitations of this call.
    pauses: usize,
    /// Since when the clock stands still (while `pauses > 0`).
    paused_since: Option<Instant>,
    /// Time spent paused in finished pauses: the person's time, not the server's.
    paused_total: Duration,
}

/// Holds a clock still until dropped; then the call gets a full timeout again.
#[derive(Debug)]
pub(crate) struct ClockPause {
    clock: Arc<CallClock>,
}

impl Drop for ClockPause {
    fn drop(&mut self) {
        if let Ok(mut state) = self.clock.state.lock() {
            state.pauses = state.pauses.saturating_sub(1);
            state.last_activity = Instant::now();
            if state.pauses == 0
                && let Some(since) = state.paused_since.take()
            {
                state.paused_total += since.elapsed();
            }
        }
        self.clock.changed.notify_waiters();
    }
}

impl CallClock {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(ClockState {
                last_activity: Instant::now(),
                pauses: 0,
                paused_since: None,
                paused_total: Duration::ZERO,
            }),
            changed: Notify::new(),
        })
    }

    /// A sign of life (progress): the timeout starts again.
    pub fn touch(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.last_activity = Instant::now();
        }
        self.changed.notify_waiters();
    }

    /// Stops the clock until the returned guard is dropped.
    pub fn pause(self: &Arc<Self>) -> ClockPause {
        if let Ok(mut state) = self.state.lock() {
            if state.pauses == 0 {
                state.paused_since = Some(Instant::now());
            }
            state.pauses += 1;
        }
        self.changed.notify_waiters();
        ClockPause {
            clock: self.clone(),
        }
    }

    /// How long the clock has stood still so far (waiting on a person): not the upstream's time,
    /// so it is left out of the server's latency.
    pub fn paused_for(&self) -> Duration {
        let state = self.state.lock_unpoisoned();
        state.paused_total
            + state
                .paused_since
                .map_or(Duration::ZERO, |since| since.elapsed())
    }

    /// `Some(deadline)` while running, `None` while paused.
    fn deadline(&self, timeout: Duration) -> Option<Instant> {
        let state = self.state.lock_unpoisoned();
        (state.pauses == 0).then(|| state.last_activity + timeout)
    }

    /// Returns once the call has been silent, and not paused, for `timeout`.
    pub async fn silent_for(&self, timeout: Duration) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Registered before the state is read, so no change is missed.
            changed.as_mut().enable();
            match self.deadline(timeout) {
                None => changed.await,
                Some(deadline) if deadline <= Instant::now() => return,
                Some(deadline) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(deadline) => {}
                        () = changed => {}
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn progress_restarts_and_a_pause_stops_the_clock() {
        let clock = CallClock::new();
        let timeout = Duration::from_millis(200);
        let waiter = {
            let clock = clock.clone();
            tokio::spawn(async move { clock.silent_for(timeout).await })
        };
        tokio::time::sleep(Duration::from_millis(150)).await;
        clock.touch();
        let pause = clock.pause();
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!waiter.is_finished(), "a paused clock does not run out");
        let resumed = Instant::now();
        drop(pause);
        waiter.await.unwrap();
        assert!(
            resumed.elapsed() >= timeout,
            "a full timeout follows the pause"
        );
    }

    #[tokio::test]
    async fn paused_time_is_told_apart_from_the_upstreams() {
        let clock = CallClock::new();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(clock.paused_for(), Duration::ZERO);
        let first = clock.pause();
        let second = clock.pause();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let open = clock.paused_for();
        assert!(
            open >= Duration::from_millis(200),
            "an open pause counts: {open:?}"
        );
        drop(first);
        tokio::time::sleep(Duration::from_millis(100)).await;
        drop(second);
        tokio::time::sleep(Duration::from_millis(600)).await;
        let total = clock.paused_for();
        // Overlapping pauses count once (about 300 ms); the 600 ms after the last, not at all.
        assert!(
            total >= Duration::from_millis(300) && total < Duration::from_millis(800),
            "{total:?}"
        );
    }
}
