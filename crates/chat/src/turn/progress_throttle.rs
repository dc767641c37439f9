//! Progress reports of one running call, thinned for the stream: an upstream may send
//! thousands of `notifications/progress` a second, and each would become an `mcp_tool` event
//! sent to every open stream of the conversation and kept in its replay buffer. At most one
//! report per [`PROGRESS_MIN_INTERVAL`] goes out; a report that arrives sooner waits, replaced
//! by any later one, so the newest figure is always shown within one interval.

use std::time::{Duration, Instant};

/// Least time between two `progress` events of one call (ten a second at most).
pub(super) const PROGRESS_MIN_INTERVAL: Duration = Duration::from_millis(100);

/// The pacing state of one call's progress reports.
#[derive(Debug)]
pub(super) struct ProgressThrottle<T> {
    interval: Duration,
    last_sent: Option<Instant>,
    pending: Option<T>,
}

impl<T> ProgressThrottle<T> {
    pub(super) fn new(interval: Duration) -> Self {
        Self {
            interval,
            last_sent: None,
            pending: None,
        }
    }

    /// A report arrived at `now`: returns it when it may go out at once, else keeps it (in
    /// place of any report already waiting) until [`Self::due_at`].
    pub(super) fn offer(&mut self, report: T, now: Instant) -> Option<T> {
        if self.pending.is_none() && self.may_send_at(now) {
            self.last_sent = Some(now);
            return Some(report);
        }
        self.pending = Some(report);
        None
    }

    /// When the waiting report may go out (`None`: nothing waits).
    pub(super) fn due_at(&self) -> Option<Instant> {
        self.pending.as_ref()?;
        Some(
            self.last_sent
                .map_or_else(Instant::now, |sent| sent + self.interval),
        )
    }

    /// The waiting report, once its time has come.
    pub(super) fn take_due(&mut self, now: Instant) -> Option<T> {
        if !self.may_send_at(now) {
            return None;
        }
        let report = self.pending.take()?;
        self.last_sent = Some(now);
        Some(report)
    }

    fn may_send_at(&self, now: Instant) -> bool {
        self.last_sent
            .is_none_or(|sent| now.saturating_duration_since(sent) >= self.interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_report_goes_out_at_once_and_a_quick_second_waits() {
        let start = Instant::now();
        let mut throttle = ProgressThrottle::new(Duration::from_millis(100));
        assert_eq!(throttle.offer(1, start), Some(1));
        assert_eq!(throttle.due_at(), None);
        assert_eq!(throttle.offer(2, start + Duration::from_millis(10)), None);
        assert_eq!(throttle.due_at(), Some(start + Duration::from_millis(100)));
        assert_eq!(throttle.take_due(start + Duration::from_millis(50)), None);
        assert_eq!(
            throttle.take_due(start + Duration::from_millis(100)),
            Some(2)
        );
        assert_eq!(throttle.due_at(), None);
    }

    #[test]
    fn a_burst_is_sent_as_its_newest_report() {
        let start = Instant::now();
        let mut throttle = ProgressThrottle::new(Duration::from_millis(100));
        assert_eq!(throttle.offer(0, start), Some(0));
        for report in 1..=1000 {
            assert_eq!(
                throttle.offer(report, start + Duration::from_micros(report)),
                None
            );
        }
        assert_eq!(
            throttle.take_due(start + Duration::from_millis(100)),
            Some(1000)
        );
        assert_eq!(throttle.take_due(start + Duration::from_millis(300)), None);
    }

    #[test]
    fn a_report_after_a_quiet_interval_goes_out_at_once() {
        let start = Instant::now();
        let mut throttle = ProgressThrottle::new(Duration::from_millis(100));
        assert_eq!(throttle.offer(1, start), Some(1));
        assert_eq!(
            throttle.offer(2, start + Duration::from_millis(250)),
            Some(2)
        );
        assert_eq!(throttle.offer(3, start + Duration::from_millis(260)), None);
        assert_eq!(throttle.offer(4, start + Duration::from_millis(270)), None);
        assert_eq!(
            throttle.take_due(start + Duration::from_millis(350)),
            Some(4)
        );
    }
}
