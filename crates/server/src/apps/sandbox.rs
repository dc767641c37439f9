//! The apps origin's one route, `GET /sandbox/{ticket}`: the app resource the ticket names,
//! as the store kept it at the sync, with the policy its `_meta.ui.csp` declares
//! ([`super::content_security_policy`]), never cached, no referrer, no powerful feature
//! (`Permissions-Policy`) beyond the ones it declares, which the frame's `allow` narrows to what the
//! person allowed. A ticket is the store-sealed [`AppSandboxTicket`], hex-encoded: it
//! opens on any replica, expires after [`TICKET_LIFETIME`], and names the resource's hash, so
//! an app changed by a later sync is refused rather than shown in its place.

use crate::error::ApiError;
use crate::state::AppState;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::time::Duration;
use switchboard_core::{ToolApp, WorkspaceId};
use switchboard_store::Store;
use switchboard_store::app_resources::AppSandboxTicket;

/// How long a sandbox URL stays valid: the UI loads it at once; reopening the conversation
/// asks for a new one.
pub const TICKET_LIFETIME: Duration = Duration::from_secs(10 * 60);

/// The router of the apps listener: the sandbox page, and 404 for anything else.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/sandbox/{ticket}", get(sandbox_page))
        .fallback(|| async { ApiError::NotFound("no such page on the apps origin".into()) })
        .layer(tower_http::compression::CompressionLayer::new())
        .with_state(state)
}

/// A URL on `apps_origin` that serves `app`'s resource of `workspace_id` until it expires,
/// with the expiry (Unix seconds).
pub fn sandbox_url(
    store: &Store,
    apps_origin: &str,
    workspace_id: &WorkspaceId,
    app: &ToolApp,
) -> Result<(String, i64), ApiError> {
    let expires_at = chrono::Utc::now().timestamp() + TICKET_LIFETIME.as_secs() as i64;
    let ticket = AppSandboxTicket {
        workspace_id: workspace_id.clone(),
        server_id: app.server_id.clone(),
        uri: app.resource_uri.clone(),
        sha256: app.resource_sha256.clone(),
        expires_at,
    };
    let sealed = store.seal_app_ticket(&ticket)?;
    Ok((
        format!("{apps_origin}/sandbox/{}", hex::encode(sealed)),
        expires_at,
    ))
}

async fn sandbox_page(
    State(state): State<AppState>,
    Path(ticket): Path<String>,
) -> Result<Response, ApiError> {
    let unknown = || ApiError::NotFound("no such app page (unknown or expired link)".into());
    let sealed = hex::decode(&ticket).map_err(|_| unknown())?;
    let ticket = state
        .store
        .open_app_ticket(&sealed)
        .map_err(|_| unknown())?;
    if ticket.expires_at < chrono::Utc::now().timestamp() {
        return Err(unknown());
    }
    let resource = state
        .store
        .get_app_resource(&ticket.workspace_id, &ticket.server_id, &ticket.uri)
        .await?;
    if resource.sha256 != ticket.sha256 {
        return Err(ApiError::Conflict(
            "the app changed since this link was made (its server was synced again)".into(),
        ));
    }
    let policy = super::content_security_policy(resource.meta.as_ref());
    let header_value = |value: &str| HeaderValue::from_str(value).map_err(ApiError::internal);
    let headers = [
        (
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        ),
        (header::CONTENT_SECURITY_POLICY, header_value(&policy)?),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (
            header::HeaderName::from_static("permissions-policy"),
            header_value(&super::permissions_policy(resource.meta.as_ref()))?,
        ),
    ];
    Ok((headers, resource.html).into_response())
}
