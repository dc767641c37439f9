//! Operational endpoints, unauthenticated: `GET /healthz` (the process is alive), `GET /readyz`
//! (the store answers and every registered [`crate::ReadinessCheck`] is UP; 503 otherwise) and
//! `GET /metrics` (Prometheus text format; a bearer token when `server.metrics_token` is set —
//! series name the workspaces' servers, so a shared deployment should protect them).

use crate::error::ApiError;
use crate::readiness::{CheckReport, CheckStatus};
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Map, Value, json};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
}

async fn healthz() -> Json<Value> {
    Json(json!({ "status": "UP" }))
}

async fn readyz(State(state): State<AppState>) -> Response {
    let mut checks = Map::new();
    let store_report = match state.store.ping().await {
        Ok(()) => CheckReport::up(Value::Null),
        Err(error) => CheckReport::down(json!({ "error": error.to_string() })),
    };
    let mut all_up = store_report.status == CheckStatus::Up;
    checks.insert("store".into(), json!(store_report));
    for check in state.readiness_checks.iter() {
        let report = check.check().await;
        all_up &= report.status == CheckStatus::Up;
        checks.insert(check.name().into(), json!(report));
    }
    let (status, label) = if all_up {
        (StatusCode::OK, "UP")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "DOWN")
    };
    (status, Json(json!({ "status": label, "checks": checks }))).into_response()
}

async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(expected) = &state.config.metrics_token {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .unwrap_or_default();
        if !expected.matches(presented.trim()) {
            return ApiError::Unauthorized(
                "/metrics needs the bearer token configured as server.metrics_token".to_owned(),
            )
            .into_response();
        }
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics.render(),
    )
        .into_response()
}
