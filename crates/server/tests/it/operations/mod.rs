//! Operating the server: health and readiness, lifecycle and metrics, replicas sharing one
//! database.

mod health;
mod lifecycle;
mod replica_safety;
