//! Route modules, one per area. Each exposes `router() -> OpenApiRouter<AppState>` (utoipa-axum)
//! with paths relative to where [`api_router`] mounts it (`/api` for the JSON API, the root for
//! the chat API the web UI calls), every handler annotated with `#[utoipa::path]` and mounted
//! with `routes!` so that it is served and documented in one step. To add an area: create
//! `routes/<area>.rs`, declare it here, merge it in [`api_router`] and add its tag in
//! [`crate::openapi`].

use crate::state::AppState;
use axum::Router;
use utoipa::openapi::OpenApi;
use utoipa_axum::router::OpenApiRouter;

pub mod approvals;
pub mod audit;
pub mod buds;
pub mod chat;
pub mod health;
pub mod kg;
pub mod llm_providers;
pub mod mcp_servers;
pub mod me;
pub mod my_tokens;
pub mod people;
pub mod policies;
pub mod tokens;
pub mod usage;
pub mod users;

/// The JSON API under `/api` and the chat API (`/chat/…`), and the OpenAPI document that
/// describes them.
pub fn api_router() -> (Router<AppState>, OpenApi) {
    let api = OpenApiRouter::new()
        .merge(me::router())
        .merge(my_tokens::router())
        .merge(tokens::router())
        .merge(users::router())
        .merge(people::router())
        .merge(policies::router())
        .merge(audit::router())
        .merge(buds::router())
        .merge(llm_providers::router())
        .merge(usage::api_router())
        .merge(kg::router())
        .merge(mcp_servers::router())
        .merge(health::api_router());
    let (router, document) = OpenApiRouter::with_openapi(crate::openapi::base())
        .nest("/api", api)
        .merge(chat::router())
        .merge(usage::chat_router())
        .merge(approvals::router())
        .merge(crate::oidc::router())
        .split_for_parts();
    (router, crate::openapi::with_common_statuses(document))
}
