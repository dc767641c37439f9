//! Operational endpoints, unauthenticated: `GET /healthz` (the process is alive), `GET /readyz`
//! (Switchboard itself can serve: the store answers and every [`CheckKind::Own`] check is UP;
//! 503 otherwise) and `GET /metrics` (Prometheus text format; a bearer token when
//! `server.metrics_token` is set — series name the workspaces' servers, so a shared deployment
//! should protect them). Plus `GET /api/health` (any
//! token): every check, upstreams included — DOWN (503) when every MCP server fails, as the
//! design's health indicator.
//!
//! `/readyz` still lists the upstream checks in its body; `server.readiness_requires_mcp`
//! makes them gate it too, for deployments that want the old behaviour.

use crate::auth::Authenticated;
use crate::error::{ApiError, ErrorBody};
use crate::readiness::{CheckKind, CheckReport, CheckStatus};
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
}

/// `GET /health` under `/api`.
pub(crate) fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(api_health))
}

/// `{"status": "UP"}` of `/healthz`.
#[derive(Debug, Serialize)]
struct Liveness {
    status: CheckStatus,
}

/// The document of `/readyz` and `/api/health`: the overall status and each check by name
/// (`store`, `shutdown`, `mcp_servers`…).
#[derive(Debug, Serialize, ToSchema)]
pub struct ChecksDocument {
    status: CheckStatus,
    #[schema(value_type = BTreeMap<String, CheckReport>)]
    checks: BTreeMap<&'static str, CheckReport>,
}

/// Detail of a store check that failed.
#[derive(Debug, Serialize, ToSchema)]
pub struct StoreFailure {
    error: String,
}

async fn healthz() -> Json<Liveness> {
    Json(Liveness {
        status: CheckStatus::Up,
    })
}

/// Runs the store ping and every registered check; `gates` says which kinds decide the status.
async fn run_checks(state: &AppState, gates: impl Fn(CheckKind) -> bool) -> Response {
    let mut checks = BTreeMap::new();
    let store_report = match state.store.ping().await {
        Ok(()) => CheckReport::up(serde_json::Value::Null),
        Err(error) => CheckReport::with_detail(
            CheckStatus::Down,
            &StoreFailure {
                error: error.to_string(),
            },
        ),
    };
    let mut all_up = store_report.status == CheckStatus::Up;
    checks.insert("store", store_report);
    for check in state.readiness_checks.iter() {
        let report = check.check().await;
        if gates(check.kind()) {
            all_up &= report.status == CheckStatus::Up;
        }
        checks.insert(check.name(), report);
    }
    let (code, status) = if all_up {
        (StatusCode::OK, CheckStatus::Up)
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, CheckStatus::Down)
    };
    (code, Json(ChecksDocument { status, checks })).into_response()
}

async fn readyz(State(state): State<AppState>) -> Response {
    let requires_mcp = state.config.readiness_requires_mcp;
    run_checks(&state, |kind| match kind {
        CheckKind::Own => true,
        CheckKind::Upstreams => requires_mcp,
    })
    .await
}

/// Every readiness check, upstream MCP servers included.
#[utoipa::path(
    get,
    path = "/health",
    tag = "health",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Every check is UP", body = ChecksDocument),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 503, description = "A check is DOWN (every MCP server failing counts)", body = ChecksDocument),
    )
)]
async fn api_health(State(state): State<AppState>, _caller: Authenticated) -> Response {
    run_checks(&state, |_| true).await
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
