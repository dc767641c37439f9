//! Integration tests of the knowledge graph through its public API — the way `mcp-server` uses
//! it — in one test binary (one link instead of one per file).

mod mutations;
mod path_properties;
mod queries;
mod sample;

use chrono::{DateTime, TimeZone, Utc};

/// A fixed "now" so dates in assertions are stable.
pub fn fixed_now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 1, 9, 0, 0).unwrap()
}
