//! Readiness checks beyond the store: other areas register a [`ReadinessCheck`] (for example
//! the MCP client's "UP unless every server is in ERROR" summary) and `GET /readyz` and
//! `GET /api/health` run them all. Checks must be quick and must not fail the process: they
//! only report.
//!
//! Each check says what it is about ([`CheckKind`]): Switchboard's own ability to serve
//! (store, drain) decides `/readyz`; the upstream MCP servers only decide `/api/health`, and
//! `/readyz` only when `server.readiness_requires_mcp` is set. A load balancer that gates on
//! `/readyz` must not take the UI and API offline because the MCP servers are failing: chat
//! still works without them.
//!
//! One check is always there: `shutdown`, DOWN from the moment a shutdown starts draining, so
//! a load balancer stops sending work while the answers in flight finish.

use serde::Serialize;
use tokio_util::sync::CancellationToken;
use utoipa::ToSchema;

/// Whether one dependency is usable right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum CheckStatus {
    Up,
    Down,
}

/// One check's answer as shown under `checks.<name>` in the `/readyz` document.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct CheckReport {
    pub status: CheckStatus,
    /// Each check's own detail (counts, last error); omitted when there is none.
    #[serde(skip_serializing_if = "serde_json::Value::is_null")]
    #[schema(value_type = Option<Object>)]
    pub detail: serde_json::Value,
}

impl CheckReport {
    pub fn up(detail: serde_json::Value) -> Self {
        Self {
            status: CheckStatus::Up,
            detail,
        }
    }

    pub fn down(detail: serde_json::Value) -> Self {
        Self {
            status: CheckStatus::Down,
            detail,
        }
    }

    /// A report whose detail is a typed body (serialized here, once).
    pub fn with_detail(status: CheckStatus, detail: &impl Serialize) -> Self {
        Self {
            status,
            detail: serde_json::to_value(detail).unwrap_or_default(),
        }
    }
}

/// `checks.shutdown.detail` while draining.
#[derive(Debug, Serialize, ToSchema)]
pub struct DrainingDetail {
    pub draining: bool,
    pub message: &'static str,
}

/// What a check is about, which decides whether it gates `/readyz`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckKind {
    /// Switchboard's own ability to serve: DOWN makes `/readyz` 503.
    Own,
    /// The upstream MCP servers: reported by `/readyz`, but DOWN makes it 503 only with
    /// `server.readiness_requires_mcp`; always decides `/api/health`.
    Upstreams,
}

/// A dependency `/readyz` reports on. Register one with [`crate::AppState::with_readiness_check`].
#[async_trait::async_trait]
pub trait ReadinessCheck: Send + Sync + 'static {
    /// The key under `checks` in the `/readyz` document (`"mcp_servers"`).
    fn name(&self) -> &'static str;
    /// [`CheckKind::Own`] unless the check is about upstreams.
    fn kind(&self) -> CheckKind {
        CheckKind::Own
    }
    async fn check(&self) -> CheckReport;
}

/// `checks.shutdown`: UP until a shutdown begins draining, DOWN from then on.
#[derive(Debug)]
pub(crate) struct DrainReadiness {
    draining: CancellationToken,
}

impl DrainReadiness {
    pub(crate) fn new(draining: CancellationToken) -> Self {
        Self { draining }
    }
}

#[async_trait::async_trait]
impl ReadinessCheck for DrainReadiness {
    fn name(&self) -> &'static str {
        "shutdown"
    }

    async fn check(&self) -> CheckReport {
        if self.draining.is_cancelled() {
            CheckReport::with_detail(
                CheckStatus::Down,
                &DrainingDetail {
                    draining: true,
                    message: "shutting down: answers in flight are finishing, new ones are refused",
                },
            )
        } else {
            CheckReport::up(serde_json::Value::Null)
        }
    }
}
