//! What one caller may hold at `/mcp`: sessions capped per caller (least recently used closed
//! first), `initialize` under the rate limit, sessions never used after `initialize` expired.

use crate::{DATA_READER, SCHEMA_READER, TestServer, answer_of, initialize_request, structured};
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_mcp_server::KgConfig;

/// POSTs `message` in `session`; the HTTP status and the answer (if JSON).
async fn send_in(server: &TestServer, token: &str, session: &str, message: Value) -> u16 {
    server
        .post(
            Some(token),
            &message,
            &[
                ("mcp-session-id", session),
                ("mcp-protocol-version", "2025-11-25"),
            ],
        )
        .await
        .status()
        .as_u16()
}

fn tools_list() -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
}

#[tokio::test]
async fn a_callers_sessions_are_capped_and_the_least_recently_used_is_closed() {
    let config = KgConfig {
        max_sessions_per_caller: 3,
        ..KgConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let first = server.initialize(Some(SCHEMA_READER)).await;
    let second = server.initialize(Some(SCHEMA_READER)).await;
    let third = server.initialize(Some(SCHEMA_READER)).await;
    let other_callers = server.initialize(Some(DATA_READER)).await;
    // The first is used again, so the second is now the least recently used.
    assert_eq!(
        send_in(&server, SCHEMA_READER, &first, tools_list()).await,
        200
    );
    let fourth = server.initialize(Some(SCHEMA_READER)).await;

    assert_eq!(
        send_in(&server, SCHEMA_READER, &second, tools_list()).await,
        404,
        "the least recently used session is closed"
    );
    for session in [&first, &third, &fourth] {
        assert_eq!(
            send_in(&server, SCHEMA_READER, session, tools_list()).await,
            200
        );
    }
    structured(
        &server
            .call_tool(
                Some(DATA_READER),
                &other_callers,
                "schema_version",
                json!({}),
            )
            .await,
    );
}

#[tokio::test]
async fn initialize_is_taken_from_the_rate_limit() {
    let config = KgConfig {
        rate_limit_per_minute: 60,
        rate_limit_burst: 2,
        ..KgConfig::default()
    };
    let server = TestServer::start_with(config).await;
    server.initialize(Some(SCHEMA_READER)).await;
    server.initialize(Some(SCHEMA_READER)).await;
    let refused = server
        .post(Some(SCHEMA_READER), &initialize_request("2025-11-25"), &[])
        .await;
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().get("retry-after").is_some());
    assert!(refused.headers().get("mcp-session-id").is_none());
    let answer = answer_of(refused).await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], -32003);
    assert_eq!(answer["error"]["data"]["limit_per_minute"], 60);
    // Another token has its own budget.
    server.initialize(Some(DATA_READER)).await;
}

#[tokio::test]
async fn a_session_never_used_after_initialize_is_closed_soon() {
    let config = KgConfig {
        unused_session_timeout_secs: 1,
        ..KgConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let abandoned = server.initialize(Some(SCHEMA_READER)).await;
    let used = server.initialize(Some(SCHEMA_READER)).await;
    assert_eq!(
        send_in(&server, SCHEMA_READER, &used, tools_list()).await,
        200
    );
    tokio::time::sleep(Duration::from_millis(1_600)).await;
    assert_eq!(
        send_in(&server, SCHEMA_READER, &abandoned, tools_list()).await,
        404,
        "a session with nothing after initialize is gone after the timeout"
    );
    assert_eq!(
        send_in(&server, SCHEMA_READER, &used, tools_list()).await,
        200,
        "a used session follows the idle timeout instead"
    );
}

/// Opens an anonymous session from `client` (bound to one loopback address).
async fn anonymous_session(server: &TestServer, client: &reqwest::Client) -> String {
    let response = client
        .post(server.url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize_request("2025-11-25").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned()
}

async fn anonymous_tools_list(server: &TestServer, client: &reqwest::Client, session: &str) -> u16 {
    client
        .post(server.url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(tools_list().to_string())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn anonymous_sessions_are_capped_per_peer_address() {
    let config = KgConfig {
        anonymous_scopes: "schema:read".into(),
        max_sessions_per_caller: 2,
        ..KgConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let from = |address: [u8; 4]| {
        reqwest::Client::builder()
            .local_address(std::net::IpAddr::from(address))
            .build()
            .unwrap()
    };
    let (peer_a, peer_b) = (from([127, 0, 0, 1]), from([127, 0, 0, 2]));
    let a1 = anonymous_session(&server, &peer_a).await;
    let a2 = anonymous_session(&server, &peer_a).await;
    let b1 = anonymous_session(&server, &peer_b).await;
    let a3 = anonymous_session(&server, &peer_a).await;
    assert_eq!(
        anonymous_tools_list(&server, &peer_a, &a1).await,
        404,
        "the peer's oldest session goes"
    );
    for (client, session) in [(&peer_a, &a2), (&peer_a, &a3), (&peer_b, &b1)] {
        assert_eq!(
            anonymous_tools_list(&server, client, session).await,
            200,
            "another address's sessions do not count against this one"
        );
    }
}
