//! The official MCP conformance suite (software we did not write) against our server stack:
//! (a) the knowledge-graph endpoint with anonymous scopes, on every protocol-level scenario,
//! and (b) the `conformance-fixture` binary, on every active scenario — at 2025-11-25 with
//! suite 0.1.16 (interop/node_modules) and at 2026-07-28 with suite 0.2.0-alpha.12
//! (interop/conformance-next). Each run prints its per-scenario summary.
//!
//! Needs `bash interop/install.sh` (the test command runs it); missing peers fail the test.
//! The suite is run by `switchboard_test_support::conformance`.

use crate::TestServer;
use std::path::Path;
use switchboard_mcp_server::KgConfig;
use switchboard_test_support::conformance::{
    Outcome, SuiteVersion, report, run_suite, start_fixture,
};
use tokio::process::Child;

/// Scenarios that need no fixture tools: the kg endpoint must pass all of them.
const PROTOCOL_SCENARIOS_2025_11_25: [&str; 12] = [
    "server-initialize",
    "ping",
    "logging-set-level",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "resources-list",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "server-sse-multiple-streams",
];
const PROTOCOL_SCENARIOS_2026_07_28: [&str; 8] = [
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "resources-list",
    "prompts-list",
    "dns-rebinding-protection",
    "http-header-validation",
];
const DNS_REBINDING: &str = "dns-rebinding-protection";
const SERVER_STATELESS: &str = "server-stateless";
/// Checks of server-stateless that call the suite's diagnostic fixture tool
/// `test_missing_capability`, which only the fixture server has.
const FIXTURE_ONLY_STATELESS_CHECKS: [&str; 2] = [
    "sep-2575-missing-capability-http-400",
    "sep-2575-server-rejects-undeclared-capability",
];
/// Active scenarios of suite 0.1.16 at 2025-11-25.
const ACTIVE_SCENARIOS_2025_11_25: usize = 30;

fn assert_all_pass(outcome: &Outcome, scenarios: &[&str]) {
    for scenario in scenarios {
        match outcome.scenarios.get(*scenario) {
            Some((passed, 0)) if *passed > 0 => {}
            Some((passed, failed)) => panic!(
                "{scenario}: {passed} passed, {failed} failed\n{}",
                outcome.summary
            ),
            None => panic!("{scenario} did not run\n{}", outcome.summary),
        }
    }
}

async fn kg_server() -> TestServer {
    let config = KgConfig {
        anonymous_scopes: "schema:read data:read".into(),
        ..KgConfig::default()
    };
    TestServer::start_with(config).await
}

/// Starts the fixture on an ephemeral loopback port; returns it and its URL.
async fn fixture_server() -> (Child, String) {
    start_fixture(Path::new(env!("CARGO_BIN_EXE_conformance-fixture"))).await
}

#[tokio::test]
async fn kg_endpoint_passes_protocol_level_scenarios() {
    let server = kg_server().await;
    let url = server.url();
    let stable = run_suite(
        SuiteVersion::Stable,
        &url,
        &["--spec-version", "2025-11-25"],
    )
    .await;
    report("kg endpoint, 2025-11-25 (suite 0.1.16)", &stable);
    assert_all_pass(&stable, &PROTOCOL_SCENARIOS_2025_11_25);
    assert_all_pass(&stable, &[DNS_REBINDING]);
    let next = run_suite(SuiteVersion::Next, &url, &["--requirements", "2026-07-28"]).await;
    report("kg endpoint, 2026-07-28 (suite 0.2.0-alpha.12)", &next);
    assert_all_pass(&next, &PROTOCOL_SCENARIOS_2026_07_28);
    // server-stateless also probes fixture-only diagnostic tools; every protocol check passes.
    let mut stateless = next.failed_checks_of(SERVER_STATELESS).to_vec();
    stateless.sort();
    assert_eq!(stateless, FIXTURE_ONLY_STATELESS_CHECKS, "{}", next.summary);
}

#[tokio::test]
async fn fixture_server_passes_every_active_scenario() {
    let (_fixture, url) = fixture_server().await;
    let stable = run_suite(
        SuiteVersion::Stable,
        &url,
        &["--spec-version", "2025-11-25"],
    )
    .await;
    report("conformance fixture, 2025-11-25 (suite 0.1.16)", &stable);
    assert_eq!(
        stable.scenarios.len(),
        ACTIVE_SCENARIOS_2025_11_25,
        "{}",
        stable.summary
    );
    assert!(stable.failing().is_empty(), "{}", stable.summary);
    let next = run_suite(SuiteVersion::Next, &url, &["--requirements", "2026-07-28"]).await;
    report(
        "conformance fixture, 2026-07-28 (suite 0.2.0-alpha.12)",
        &next,
    );
    assert!(
        next.failing().is_empty(),
        "failing at 2026-07-28: {:?}\n{}",
        next.failing(),
        next.summary
    );
}
