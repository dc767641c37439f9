//! The approvals crate's integration tests: the gate, decisions, pinning, elicitation and the
//! audit log over a real (SQLite) store, driven the way the chat engine and the HTTP layer
//! drive them. The HTTP/SSE end-to-end tests live with the server (`crates/server/tests`).

mod audit;
mod elicitation;
mod flows;
mod pinning;
mod support;
