//! The store's notion of "now": UTC truncated to microseconds, the precision PostgreSQL keeps,
//! so a timestamp reads back identical from either backend and SQLite's text timestamps
//! compare in time order.

use chrono::{DateTime, DurationRound, TimeDelta, Utc};

pub(crate) fn now() -> DateTime<Utc> {
    truncate_to_micros(Utc::now())
}

pub(crate) fn truncate_to_micros(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(TimeDelta::microseconds(1)).unwrap_or(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_has_no_sub_microsecond_part() {
        assert_eq!(now().timestamp_subsec_nanos() % 1_000, 0);
    }
}
