//! Route modules, one per area. Each exposes `router()` — an `OpenApiRouter<AppState>` whose
//! handlers carry `#[utoipa::path]` (approvals, audit, buds, kg, policies, tokens, users), or a
//! plain `Router<AppState>` for areas not yet described — with paths relative to where
//! [`crate::app`] mounts it (`/api` for the JSON API). To add an area: create
//! `routes/<area>.rs`, declare it here and merge it in [`api_router`] (or in `app` for routes
//! outside `/api`).

use crate::state::AppState;
use axum::Router;
use utoipa_axum::router::OpenApiRouter;

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
    let (router, _) = api_openapi_router().split_for_parts();
    router
}

/// Everything under `/api`, with the OpenAPI description of the areas that have one (the
/// others are merged as plain routers until they are converted).
fn api_openapi_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(me::router().into())
        .merge(tokens::router())
        .merge(users::router())
        .merge(policies::router())
        .merge(audit::router())
        .merge(buds::router())
        .merge(kg::router())
        .merge(mcp_servers::router().into())
        .merge(health::api_router().into())
}

/// The OpenAPI description of the areas converted so far (paths as served: `/api/…`, and
/// `/chat/approvals…` at the root).
pub fn openapi() -> utoipa::openapi::OpenApi {
    OpenApiRouter::<AppState>::new()
        .nest("/api", api_openapi_router())
        .merge(approvals::router())
        .into_openapi()
}
