//! `app(state)`: the whole HTTP surface as one axum `Router` — operational endpoints at the
//! root, the JSON API under `/api`, and the common layers around all of it. Tests drive it with
//! `tower::ServiceExt::oneshot` or through [`crate::run`] on a real socket.

use crate::middleware::with_common_layers;
use crate::routes;
use crate::state::AppState;
use axum::Router;

pub fn app(state: AppState) -> Router {
    let max_request_body_bytes = state.config.max_request_body_bytes;
    let router = Router::new()
        .merge(routes::health::router())
        .nest("/api", routes::api_router())
        .merge(Router::from(routes::approvals::router()))
        .merge(routes::chat::router())
        .merge(state.kg.router(state.shutdown.clone()))
        .merge(crate::web::router());
    with_common_layers(
        router,
        max_request_body_bytes,
        state.config.body_read_timeout(),
    )
    .with_state(state)
}
