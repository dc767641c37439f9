//! How quickly each upstream server has been answering: a small rolling window per server of
//! the last [`WINDOW`] request latencies (`tools/call`, `resources/read`, `prompts/get` and
//! every page of the list calls, failed and timed-out ones included: a timeout counts as the
//! time it took to give up, the slowest kind), plus how long the last session start took.
//! Time a call spends waiting on a person (an open form of the call) is not the server's and
//! is left out; a call its caller gave up on counts only once it had waited `slow_call_ms`.
//!
//! Recording is lock-free and allocation-free: a window is a fixed array of atomics, and each
//! session (and each one-shot connection) holds its server's window, so the hot path touches
//! no map. Reading ([`LatencyWindow::summary`]) copies the window onto the stack and sorts it.
//! The verdict "slow" ([`ServerLatency::slowness`]) lives here too; the wire shape does not.

use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::LockUnpoisoned;
use switchboard_core::ServerId;

/// Requests remembered per server.
pub const WINDOW: usize = 20;

/// One server's recent latencies. Slots hold `milliseconds + 1`; `0` is an empty slot (so a
/// reader racing the first writes never mistakes an unwritten slot for a 0 ms answer).
#[derive(Debug, Default)]
pub(crate) struct LatencyWindow {
    samples: [AtomicU32; WINDOW],
    /// Requests recorded so far; the next one goes to `recorded % WINDOW`.
    recorded: AtomicUsize,
    /// The last session start (handshake included), encoded like the samples.
    last_start: AtomicU32,
}

/// A server's responsiveness as the API shows it. `None` figures: nothing measured yet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ServerLatency {
    /// Median (nearest rank) of the recent requests.
    pub recent_p50_ms: Option<u64>,
    /// Slowest of the recent requests.
    pub recent_max_ms: Option<u64>,
    /// How many requests the figures cover (at most [`WINDOW`]).
    pub samples: usize,
    /// How long the last session start took (connect and handshake), failed ones included.
    pub last_start_ms: Option<u64>,
}

/// Why a server counts as slow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Slowness {
    /// The median of the recent requests reached the threshold.
    Calls,
    /// The last session start took more than half its init timeout.
    Start,
}

impl Slowness {
    pub fn as_str(self) -> &'static str {
        match self {
            Slowness::Calls => "calls",
            Slowness::Start => "start",
        }
    }
}

impl ServerLatency {
    /// `Some(why)` when the recent requests' median is at least `slow_call`, or else when the
    /// last start took more than half of `init_timeout`.
    pub fn slowness(&self, slow_call: Duration, init_timeout: Duration) -> Option<Slowness> {
        if self
            .recent_p50_ms
            .is_some_and(|p50| u128::from(p50) >= slow_call.as_millis())
        {
            return Some(Slowness::Calls);
        }
        if self
            .last_start_ms
            .is_some_and(|start| u128::from(start) * 2 > init_timeout.as_millis())
        {
            return Some(Slowness::Start);
        }
        None
    }
}

fn encode(elapsed: Duration) -> u32 {
    u32::try_from(elapsed.as_millis())
        .unwrap_or(u32::MAX)
        .saturating_add(1)
}

fn decode(stored: u32) -> Option<u64> {
    stored.checked_sub(1).map(u64::from)
}

impl LatencyWindow {
    /// One request's time, from sending it to its answer, failure or timeout.
    pub fn record_request(&self, elapsed: Duration) {
        let index = self.recorded.fetch_add(1, Ordering::Relaxed) % WINDOW;
        self.samples[index].store(encode(elapsed), Ordering::Relaxed);
    }

    /// One session start's time (a failed or timed-out one too).
    pub fn record_start(&self, elapsed: Duration) {
        self.last_start.store(encode(elapsed), Ordering::Relaxed);
    }

    pub fn summary(&self) -> ServerLatency {
        let mut recent = [0u64; WINDOW];
        let mut samples = 0;
        for slot in &self.samples {
            if let Some(milliseconds) = decode(slot.load(Ordering::Relaxed)) {
                recent[samples] = milliseconds;
                samples += 1;
            }
        }
        let recent = &mut recent[..samples];
        recent.sort_unstable();
        ServerLatency {
            // Nearest rank: the smallest value with at least half the samples at or below it.
            recent_p50_ms: samples.checked_sub(1).map(|last| recent[last / 2]),
            recent_max_ms: recent.last().copied(),
            samples,
            last_start_ms: decode(self.last_start.load(Ordering::Relaxed)),
        }
    }
}

/// Every server's window. Looked up when a session slot or a one-shot connection is made and
/// when the API asks, never per request.
#[derive(Debug, Default)]
pub(crate) struct LatencyBook {
    windows: Mutex<HashMap<ServerId, Arc<LatencyWindow>>>,
}

impl LatencyBook {
    /// The server's window, made on first use.
    pub fn window(&self, server_id: &ServerId) -> Arc<LatencyWindow> {
        let mut windows = self.windows.lock_unpoisoned();
        windows.entry(server_id.clone()).or_default().clone()
    }

    pub fn summary(&self, server_id: &ServerId) -> ServerLatency {
        let windows = self.windows.lock_unpoisoned();
        windows
            .get(server_id)
            .map(|window| window.summary())
            .unwrap_or_default()
    }

    /// Forgets a server's figures (deleted, or reconfigured: the old figures say nothing
    /// about the new configuration). Sessions still holding the old window keep writing to
    /// it unseen until they close.
    pub fn forget(&self, server_id: &ServerId) {
        self.windows.lock_unpoisoned().remove(server_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(milliseconds: u64) -> Duration {
        Duration::from_millis(milliseconds)
    }

    #[test]
    fn an_empty_window_has_no_figures_and_is_not_slow() {
        let summary = LatencyWindow::default().summary();
        assert_eq!(summary, ServerLatency::default());
        assert_eq!(summary.slowness(ms(2000), ms(10_000)), None);
    }

    #[test]
    fn median_and_maximum_of_the_recorded_requests() {
        let window = LatencyWindow::default();
        for milliseconds in [30, 10, 2400, 20] {
            window.record_request(ms(milliseconds));
        }
        let summary = window.summary();
        assert_eq!(summary.samples, 4);
        // Nearest rank of 10, 20, 30, 2400: the second.
        assert_eq!(summary.recent_p50_ms, Some(20));
        assert_eq!(summary.recent_max_ms, Some(2400));
        window.record_request(ms(0));
        let summary = window.summary();
        assert_eq!((summary.samples, summary.recent_p50_ms), (5, Some(20)));
        assert_eq!(summary.last_start_ms, None);
    }

    #[test]
    fn only_the_last_twenty_requests_count() {
        let window = LatencyWindow::default();
        for _ in 0..WINDOW {
            window.record_request(ms(5000));
        }
        assert_eq!(window.summary().recent_p50_ms, Some(5000));
        for _ in 0..WINDOW / 2 + 1 {
            window.record_request(ms(100));
        }
        let summary = window.summary();
        assert_eq!(summary.samples, WINDOW);
        assert_eq!(
            summary.recent_p50_ms,
            Some(100),
            "the fast half is the newer one"
        );
        assert_eq!(summary.recent_max_ms, Some(5000));
        for _ in 0..WINDOW {
            window.record_request(ms(100));
        }
        assert_eq!(
            window.summary().recent_max_ms,
            Some(100),
            "old slow ones fell out"
        );
    }

    #[test]
    fn slow_by_the_median_of_calls_or_by_a_long_start() {
        let window = LatencyWindow::default();
        window.record_start(ms(1200));
        for milliseconds in [2400, 2500, 100] {
            window.record_request(ms(milliseconds));
        }
        let summary = window.summary();
        assert_eq!(summary.last_start_ms, Some(1200));
        assert_eq!(
            summary.slowness(ms(2000), ms(10_000)),
            Some(Slowness::Calls)
        );
        assert_eq!(summary.slowness(ms(2401), ms(10_000)), None);
        // A start above half the init timeout, calls fine.
        assert_eq!(summary.slowness(ms(5000), ms(2000)), Some(Slowness::Start));
        assert_eq!(
            summary.slowness(ms(5000), ms(2400)),
            None,
            "exactly half is not slow"
        );
    }

    #[test]
    fn a_timed_out_request_counts_as_its_whole_wait_and_huge_values_saturate() {
        let window = LatencyWindow::default();
        window.record_request(Duration::from_secs(30));
        window.record_request(Duration::from_secs(u64::MAX / 4));
        let summary = window.summary();
        assert_eq!(summary.recent_p50_ms, Some(30_000));
        assert_eq!(summary.recent_max_ms, Some(u64::from(u32::MAX - 1)));
    }

    #[test]
    fn the_book_keeps_one_window_per_server_until_forgotten() {
        let book = LatencyBook::default();
        let files = ServerId::from("files");
        book.window(&files).record_request(ms(40));
        book.window(&files).record_request(ms(60));
        book.window(&ServerId::from("other"))
            .record_request(ms(9000));
        assert_eq!(book.summary(&files).samples, 2);
        assert_eq!(book.summary(&files).recent_max_ms, Some(60));
        book.forget(&files);
        assert_eq!(book.summary(&files), ServerLatency::default());
        assert_eq!(book.summary(&ServerId::from("other")).samples, 1);
    }
}
