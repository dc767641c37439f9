//! The gateway's own health, check `gateway` of `/readyz` (and `/api/health`): present when
//! the gateway is served (a chat engine is configured), DOWN while building a caller's offer
//! fails inside Switchboard (store, chat engine — not an upstream, which only leaves its
//! server out of the offer) — from such a failure until the next successful build, for at
//! most [`FAILURE_WINDOW`] without a new attempt. Its detail says how many offers are cached
//! and the last failure. It is Switchboard's own ability to serve gateway clients, so it
//! gates `/readyz` ([`CheckKind::Own`]).

use crate::readiness::{CheckKind, CheckReport, CheckStatus, ReadinessCheck};
use serde::Serialize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::sync::LockUnpoisoned;
use utoipa::ToSchema;

/// A failed build keeps the check DOWN this long unless a build succeeds first.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(60);

/// Shared by the gateway (which reports) and its readiness check (which reads).
#[derive(Clone, Debug, Default)]
pub struct GatewayHealth {
    state: Arc<Mutex<HealthState>>,
}

#[derive(Debug, Default)]
struct HealthState {
    cached_offers: usize,
    offers_built: u64,
    /// The last failed build since the last successful one.
    failure: Option<(Instant, String)>,
}

/// `checks.gateway.detail`.
#[derive(Debug, Serialize, ToSchema)]
pub struct GatewayReadinessDetail {
    /// Callers (token and bud) whose offer is cached.
    pub cached_offers: usize,
    /// Offers built since the start.
    pub offers_built: u64,
    /// Why the last build failed, while the check is DOWN.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
}

impl GatewayHealth {
    pub(super) fn built(&self, cached_offers: usize) {
        let mut state = self.state.lock_unpoisoned();
        state.cached_offers = cached_offers;
        state.offers_built += 1;
        state.failure = None;
    }

    pub(super) fn build_failed(&self, reason: &str) {
        self.state.lock_unpoisoned().failure = Some((Instant::now(), reason.to_owned()));
    }

    fn report(&self, now: Instant) -> CheckReport {
        let state = self.state.lock_unpoisoned();
        let failure = state
            .failure
            .as_ref()
            .filter(|(at, _)| now.saturating_duration_since(*at) < FAILURE_WINDOW)
            .map(|(_, reason)| reason.clone());
        let status = match failure {
            Some(_) => CheckStatus::Down,
            None => CheckStatus::Up,
        };
        CheckReport::with_detail(
            status,
            &GatewayReadinessDetail {
                cached_offers: state.cached_offers,
                offers_built: state.offers_built,
                last_failure: failure,
            },
        )
    }
}

/// Check `gateway`, registered with the chat engine (`AppState::with_chat`).
#[derive(Debug)]
pub struct GatewayReadiness {
    health: GatewayHealth,
}

impl GatewayReadiness {
    pub fn new(health: GatewayHealth) -> Self {
        Self { health }
    }
}

#[async_trait::async_trait]
impl ReadinessCheck for GatewayReadiness {
    fn name(&self) -> &'static str {
        "gateway"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Own
    }

    async fn check(&self) -> CheckReport {
        self.health.report(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_build_is_down_until_a_build_succeeds_or_the_window_passes() {
        let health = GatewayHealth::default();
        let now = Instant::now();
        assert_eq!(health.report(now).status, CheckStatus::Up);
        health.build_failed("the store is gone");
        let down = health.report(Instant::now());
        assert_eq!(down.status, CheckStatus::Down);
        assert_eq!(down.detail["last_failure"], "the store is gone");
        let later = Instant::now() + FAILURE_WINDOW;
        assert_eq!(health.report(later).status, CheckStatus::Up);
        health.build_failed("again");
        health.built(3);
        let up = health.report(Instant::now());
        assert_eq!(up.status, CheckStatus::Up);
        assert_eq!(up.detail["cached_offers"], 3);
        assert_eq!(up.detail["offers_built"], 1);
        assert!(up.detail.get("last_failure").is_none());
    }
}
