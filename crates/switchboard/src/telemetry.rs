//! Structured logs: `tracing` to stderr, as text for people or JSON for collectors, filtered by
//! `[log] filter`. Standard output is kept for what the operator must read (the one-time admin
//! token, the ready line) so it never mixes with logs.

use crate::config::sections::{DEFAULT_LOG_FILTER, LogFormat, LogSection};
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

pub fn init(log: &LogSection) {
    let filter =
        EnvFilter::try_new(&log.filter).unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let result = match log.format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
    // Only fails if a subscriber is already set (never in the binary).
    drop(result);
}
