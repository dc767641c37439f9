//! Route modules, one per area. Each exposes `router() -> Router<AppState>` with paths relative
//! to where [`crate::app`] mounts it (`/api` for the JSON API). To add an area: create
//! `routes/<area>.rs`, declare it here and merge it in [`api_router`] (or in `app` for routes
//! outside `/api`).

use crate::state::AppState;
use axum::Router;

pub mod approvals;
pub mod audit;
pub mod buds;
pub mod chat;
pub mod health;
pub mod kg;
pub mod mcp_servers;
pub mod me;
pub mod policies;
pub mod tokens;
pub mod users;

/// Everything under `/api`.
pub(crate) fn api_router() -> Router<AppState> {
    Router::new()
        .merge(me::router())
        .merge(tokens::router())
        .merge(users::router())
        .merge(policies::router())
        .merge(audit::router())
        .merge(buds::router())
        .merge(kg::router())
        .merge(mcp_servers::router())
        .merge(health::api_router())
}
