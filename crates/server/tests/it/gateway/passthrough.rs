//! Pass-through fidelity: the official conformance suite (0.1.16, server scenarios at
//! 2025-11-25) against the `conformance-fixture` server directly, and against the same fixture
//! registered as a Streamable HTTP upstream of a running Switchboard and reached through
//! `/gateway/servers/fixture/mcp` (one server under its own names). Every scenario that passes
//! directly must pass through the gateway, except the named [`NOT_FORWARDED`] ones, each for
//! a feature the gateway does not forward yet. The per-scenario table is printed.
//!
//! The suite's CLI cannot send an `Authorization` header (`conformance server --help` has no
//! such option), and the gateway has no anonymous access (a gateway call is always some
//! person's: their sessions, credentials, approvals and audit). So the suite talks to a tiny
//! forwarding shim ([`TokenShim`]) that adds a `gateway:use` token to every request and
//! streams the answer back untouched (status, headers and body, SSE included); `Host` and
//! `Origin` pass through as sent, so DNS-rebinding protection is the gateway's own.
//!
//! The fixture binary is `switchboard-mcp-server`'s; the workspace's test run builds it
//! (`cargo build -p switchboard-mcp-server --bin conformance-fixture` otherwise). Its tools
//! are set `ALWAYS_ALLOW` (the suite's client would otherwise be asked to approve each call
//! through elicitation, which the fixture's scenarios do not expect).

use super::wire::{connect, listed_names};
use crate::support::approvals::*;
use crate::support::chat::remote_server;
use axum::body::Body;
use axum::http::{HeaderName, Request, Response, StatusCode};
use std::path::PathBuf;
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::conformance::{
    Outcome, SuiteVersion, report, run_suite, start_fixture,
};
use switchboard_test_support::fake_openai::FakeOpenAi;
use tokio::process::Child;

/// Scenarios that pass against the fixture directly but not through the gateway, because
/// they need something the gateway does not forward yet: (scenario, why). None today: the
/// fixture's mid-call requests reach the suite's client through `input_required` rounds, and
/// its subscriptions through `subscriptions/listen`, on Switchboard's 2026-07-28 session.
const NOT_FORWARDED: &[(&str, &str)] = &[];

const SUITE: [&str; 2] = ["--spec-version", "2025-11-25"];

/// `conformance-fixture`, next to the binaries of this test run.
fn fixture_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let debug = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/debug");
    let binary = debug.join("conformance-fixture");
    assert!(
        binary.exists(),
        "{} is missing: `cargo build -p switchboard-mcp-server --bin conformance-fixture` (the workspace test run builds it)",
        binary.display()
    );
    binary
}

/// Starts the fixture on an ephemeral loopback port; returns it and its URL.
pub(super) async fn fixture_server() -> (Child, String) {
    start_fixture(&fixture_binary()).await
}

/// The fixture running, a Switchboard with it registered as the Streamable HTTP upstream
/// `fixture`, and a member with `gateway:use`; each kept alive as long as this is.
pub(super) struct FixtureBehindGateway {
    _fixture: Child,
    _model: FakeOpenAi,
    pub server: ApprovalServer,
    pub fixture_url: String,
    pub fixture_id: switchboard_core::ServerId,
    pub member: Person,
}

impl FixtureBehindGateway {
    pub(super) async fn start(member: &str) -> Self {
        let (fixture, fixture_url) = fixture_server().await;
        let model = FakeOpenAi::start().await;
        let server = ApprovalServer::start(ApprovalConfig::default(), &model.base_url()).await;
        let registered = server
            .store
            .create_server(&server.workspace_id, remote_server("fixture", &fixture_url))
            .await
            .unwrap();
        let member = server
            .person_via_api(member, "member", &["gateway:use"])
            .await;
        Self {
            _fixture: fixture,
            _model: model,
            server,
            fixture_url,
            fixture_id: registered.id,
            member,
        }
    }
}

/// Forwards every request to `target` with `Authorization: Bearer <token>` added.
struct TokenShim {
    url: String,
    _task: tokio::task::JoinHandle<()>,
}

/// Headers that belong to one hop, not to the request or answer.
const HOP_HEADERS: [&str; 4] = [
    "connection",
    "content-length",
    "transfer-encoding",
    "authorization",
];

impl TokenShim {
    async fn start(target: String, token: String) -> Self {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let handler = move |request: Request<Body>| {
            let (client, target, token) = (client.clone(), target.clone(), token.clone());
            async move { forward(&client, &target, &token, request).await }
        };
        let app = axum::Router::new().fallback(handler);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { url, _task: task }
    }
}

async fn forward(
    client: &reqwest::Client,
    target: &str,
    token: &str,
    request: Request<Body>,
) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let mut outgoing = client
        .request(parts.method, target)
        .bearer_auth(token)
        .body(body);
    for (name, value) in &parts.headers {
        if !HOP_HEADERS.contains(&name.as_str()) {
            outgoing = outgoing.header(name, value);
        }
    }
    let answer = match outgoing.send().await {
        Ok(answer) => answer,
        Err(error) => {
            return Response::builder()
                .status(StatusCode::BAD_GATEWAY)
                .body(Body::from(error.to_string()))
                .unwrap();
        }
    };
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if !HOP_HEADERS.contains(&name.as_str()) {
            response = response.header(HeaderName::from(name), value);
        }
    }
    response
        .body(Body::from_stream(answer.bytes_stream()))
        .unwrap()
}

fn passed(outcome: &Outcome, scenario: &str) -> bool {
    matches!(outcome.scenarios.get(scenario), Some((passed, 0)) if *passed > 0)
}

fn table(direct: &Outcome, gateway: &Outcome) -> String {
    let mark = |outcome: &Outcome, scenario: &str| match outcome.scenarios.get(scenario) {
        Some((passed, 0)) => format!("pass ({passed})"),
        Some((passed, failed)) => format!("FAIL ({passed}/{})", passed + failed),
        None => "did not run".to_owned(),
    };
    let mut lines = vec![
        "| scenario | direct | gateway |".to_owned(),
        "|---|---|---|".to_owned(),
    ];
    for scenario in direct.scenarios.keys() {
        lines.push(format!(
            "| {scenario} | {} | {} |",
            mark(direct, scenario),
            mark(gateway, scenario)
        ));
    }
    lines.join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_that_passes_directly_passes_through_the_per_server_gateway() {
    let stack = FixtureBehindGateway::start("carol").await;
    let (server, fixture_id, carol) = (&stack.server, &stack.fixture_id, &stack.member);

    // The fixture's own tool names, unprefixed; each allowed by rule.
    let client = connect(server, "/gateway/servers/fixture/mcp", &carol.token).await;
    let tools = listed_names(&client).await;
    assert!(tools.contains(&"test_simple_text".to_owned()), "{tools:?}");
    assert!(tools.iter().all(|name| !name.contains("__")), "{tools:?}");
    client.cancel().await.unwrap();
    for tool in &tools {
        server.set_policy(fixture_id, tool, "ALWAYS_ALLOW").await;
    }
    let unknown = connect(server, "/gateway/servers/no-such-server/mcp", &carol.token).await;
    let error = unknown.list_all_tools().await.unwrap_err().to_string();
    assert!(error.contains("unknown server: no-such-server"), "{error}");
    unknown.cancel().await.unwrap();

    let shim = TokenShim::start(
        server.url("/gateway/servers/fixture/mcp"),
        carol.token.clone(),
    )
    .await;
    let (direct, gateway) = tokio::join!(
        run_suite(SuiteVersion::Stable, &stack.fixture_url, &SUITE),
        run_suite(SuiteVersion::Stable, &shim.url, &SUITE),
    );
    report("conformance fixture, directly", &direct);
    report(
        "conformance fixture, through the per-server gateway",
        &gateway,
    );
    println!("\n{}", table(&direct, &gateway));

    let lost: Vec<&str> = direct
        .scenarios
        .keys()
        .map(String::as_str)
        .filter(|scenario| passed(&direct, scenario) && !passed(&gateway, scenario))
        .filter(|scenario| !NOT_FORWARDED.iter().any(|(name, _)| name == scenario))
        .collect();
    let details: Vec<String> = lost
        .iter()
        .map(|scenario| format!("{scenario}: {:?}", gateway.failed_checks_of(scenario)))
        .collect();
    assert!(
        lost.is_empty(),
        "passed directly, not through the gateway: {details:#?}"
    );
    for (scenario, why) in NOT_FORWARDED {
        assert!(
            passed(&direct, scenario) && !passed(&gateway, scenario),
            "{scenario} is listed as not forwarded ({why}) but passes through the gateway now, or fails directly: remove it from NOT_FORWARDED"
        );
    }
}
