//! `app(state)`: the whole HTTP surface as one axum `Router` — operational endpoints at the
//! root, the JSON API under `/api` with its OpenAPI document and reference page, the chat API,
//! and the common layers around all of it. Tests drive it with `tower::ServiceExt::oneshot` or
//! through [`crate::run`] on a real socket.

use crate::middleware::with_common_layers;
use crate::routes;
use crate::state::AppState;
use axum::Router;

pub fn app(state: AppState) -> Router {
    let max_request_body_bytes = state.config.max_request_body_bytes;
    let (api, document) = routes::api_router();
    let mut router = Router::new()
        .merge(routes::health::router())
        .merge(crate::oauth::public_router())
        .merge(api)
        .merge(crate::openapi::router(&document))
        .merge(state.kg.router(state.shutdown.clone()))
        .merge(match &state.apps_origin {
            Some(apps_origin) => crate::web::router_framing(apps_origin),
            None => crate::web::router(),
        });
    if let Some(oidc) = &state.oidc
        && oidc.config().redirect_path != crate::oidc::config::DEFAULT_REDIRECT_PATH
    {
        router = router.route(
            &oidc.config().redirect_path,
            axum::routing::get(crate::oidc::oidc_callback),
        );
    }
    if let Some(chat) = &state.chat {
        let backend = crate::gateway::ChatGateway::new(
            chat.clone(),
            state.approvals.clone(),
            state.gateway_changes.clone(),
            state.gateway_health.clone(),
        );
        router = router.merge(
            state
                .kg
                .gateway_router(std::sync::Arc::new(backend), state.shutdown.clone()),
        );
    }
    let changes = state.gateway_changes.clone();
    let router = router.layer(axum::middleware::from_fn(move |request, next| {
        crate::gateway::changes::track_changes(changes.clone(), request, next)
    }));
    with_common_layers(
        router,
        max_request_body_bytes,
        state.config.body_read_timeout(),
    )
    .with_state(state)
}

/// The OpenAPI document of the API [`app`] serves (also at `GET /api/openapi.json`).
pub fn openapi_document() -> utoipa::openapi::OpenApi {
    routes::api_router().1
}
