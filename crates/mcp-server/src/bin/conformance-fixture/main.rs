//! `conformance-fixture`: the official conformance suite's fixture tools, resources and prompts
//! served on the same stack as our knowledge-graph endpoint (guard, session binding, rmcp
//! Streamable HTTP transport), so the suite's server scenarios exercise our server code.
//!
//! Usage: `conformance-fixture [--bind 127.0.0.1:0]`. Prints `listening on http://ADDR/mcp`
//! once ready and serves until interrupted (Ctrl-C / SIGINT). Requests need no
//! token (anonymous access with every scope); only loopback hosts and origins are accepted.

mod fixtures;
mod legacy_input;
mod mrtr;
mod server;
mod tools;

use server::{FixtureServer, FixtureShared};
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{ScopeSet, WorkspaceId};
use switchboard_mcp_server::http::{McpHttpSettings, mcp_router};
use switchboard_mcp_server::origin_policy::OriginPolicy;
use switchboard_mcp_server::{
    AnonymousAccess, Authenticator, DEFAULT_MAX_REQUEST_BODY_BYTES, KgConfig, StaticTokens,
};
use tokio_util::sync::CancellationToken;

fn bind_address() -> Result<String, String> {
    let mut arguments = std::env::args().skip(1);
    let mut bind = "127.0.0.1:0".to_owned();
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--bind" => {
                bind = arguments
                    .next()
                    .ok_or("--bind needs an address such as 127.0.0.1:3000")?
            }
            "--help" | "-h" => return Err("usage: conformance-fixture [--bind 127.0.0.1:0]".into()),
            other => {
                return Err(format!(
                    "unknown argument '{other}' (usage: conformance-fixture [--bind 127.0.0.1:0])"
                ));
            }
        }
    }
    Ok(bind)
}

#[tokio::main]
async fn main() {
    let bind = match bind_address() {
        Ok(bind) => bind,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let defaults = KgConfig::default();
    let origins = OriginPolicy::new(&defaults.allowed_hosts, &defaults.allowed_origins)
        .expect("default origins parse");
    let anonymous =
        AnonymousAccess::from_scopes(ScopeSet::all(), WorkspaceId::from_string("conformance"));
    let shutdown = CancellationToken::new();
    let settings = McpHttpSettings {
        origins,
        authenticator: Authenticator::new(
            Arc::new(StaticTokens::new()),
            anonymous,
            Duration::from_secs(10),
        ),
        session_idle_timeout: Duration::from_secs(300),
        sse_keep_alive: Duration::from_secs(15),
        sse_retry: Duration::from_secs(3),
        max_request_body_bytes: DEFAULT_MAX_REQUEST_BODY_BYTES,
        sessions: switchboard_mcp_server::http::session_limits::SessionLimits::default(),
        shutdown: shutdown.clone(),
        required_scope: None,
    };
    let shared = Arc::new(FixtureShared::default());
    let router: axum::Router = mcp_router(move || FixtureServer::new(shared.clone()), settings);
    let listener = match tokio::net::TcpListener::bind(&bind).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("cannot listen on {bind}: {error}");
            std::process::exit(1);
        }
    };
    let address = listener.local_addr().expect("bound address");
    println!("listening on http://{address}/mcp");
    let _ = std::io::stdout().flush();
    let stop = shutdown.clone();
    let served = axum::serve(listener, router).with_graceful_shutdown(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = stop.cancelled() => {}
        }
    });
    if let Err(error) = served.await {
        eprintln!("server error: {error}");
        std::process::exit(1);
    }
}
