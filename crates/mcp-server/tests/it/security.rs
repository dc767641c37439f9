//! The transport's security rules on the wire: authentication, Host/Origin checks, batches,
//! parse errors, routing headers, and sessions bound to the token that created them.

use crate::{DATA_READER, SCHEMA_READER, TestServer, answer_of, initialize_request};
use serde_json::{Value, json};
use switchboard_mcp_server::KgConfig;

#[tokio::test]
async fn missing_or_bad_tokens_get_401_with_a_challenge() {
    let server = TestServer::start().await;
    let response = server
        .post(None, &initialize_request("2025-11-25"), &[])
        .await;
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Bearer realm=\"switchboard\""
    );
    let response = server
        .post(
            Some("no-such-token"),
            &initialize_request("2025-11-25"),
            &[],
        )
        .await;
    assert_eq!(response.status(), 401);
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32001);
    let basic = server
        .post(
            None,
            &initialize_request("2025-11-25"),
            &[("authorization", "Basic dXNlcjpwYXNz")],
        )
        .await;
    assert_eq!(basic.status(), 401);
}

#[tokio::test]
async fn anonymous_scopes_let_tokenless_requests_in() {
    let config = KgConfig {
        anonymous_scopes: "schema:read".into(),
        ..KgConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let session = server.initialize(None).await;
    let answer = server
        .call_tool(None, &session, "schema_version", json!({}))
        .await;
    assert_eq!(crate::structured(&answer)["sequence"], 4);
    let denied = server
        .call_tool(None, &session, "find_objects", json!({"type": "Document"}))
        .await;
    assert_eq!(denied["error"]["code"], -32001);
    assert_eq!(
        denied["error"]["data"]["user_scopes"],
        json!(["schema:read"])
    );
    // A bad token is still refused: anonymous access is only for requests without one.
    let response = server
        .post(Some("bogus"), &initialize_request("2025-11-25"), &[])
        .await;
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused_before_authentication() {
    let server = TestServer::start().await;
    let evil_host = server
        .post(
            None,
            &initialize_request("2025-11-25"),
            &[("host", "evil.example.com")],
        )
        .await;
    assert_eq!(evil_host.status(), 403);
    let evil_origin = server
        .post(
            Some(DATA_READER),
            &initialize_request("2025-11-25"),
            &[("origin", "http://evil.example.com")],
        )
        .await;
    assert_eq!(evil_origin.status(), 403);
    let local_origin = format!("http://{}", server.base.trim_start_matches("http://"));
    let allowed = server
        .post(
            Some(DATA_READER),
            &initialize_request("2025-11-25"),
            &[("origin", &local_origin)],
        )
        .await;
    assert_eq!(allowed.status(), 200);
}

#[tokio::test]
async fn batches_parse_errors_and_invalid_messages_are_jsonrpc_errors() {
    let server = TestServer::start().await;
    let batch =
        json!([initialize_request("2025-11-25"), {"jsonrpc": "2.0", "id": 2, "method": "ping"}]);
    let response = server.post(Some(DATA_READER), &batch, &[]).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("batches are not supported")
    );

    let response = server
        .post_raw(Some(DATA_READER), "{\"jsonrpc\": \"2.0\", \"id\": 1, ", &[])
        .await;
    assert_eq!(response.status(), 400);
    assert_eq!(
        response.json::<Value>().await.unwrap()["error"]["code"],
        -32700
    );

    let response = server
        .post(
            Some(DATA_READER),
            &json!({"jsonrpc": "2.0", "id": 9, "params": {}}),
            &[],
        )
        .await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600);
    assert_eq!(body["id"], 9);
}

#[tokio::test]
async fn unknown_methods_are_32601() {
    let server = TestServer::start().await;
    let session = server.initialize(Some(DATA_READER)).await;
    let request = json!({"jsonrpc": "2.0", "id": 3, "method": "graph/teleport", "params": {}});
    let response = server
        .post(
            Some(DATA_READER),
            &request,
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "2025-11-25"),
            ],
        )
        .await;
    assert_eq!(answer_of(response).await["error"]["code"], -32601);
}

#[tokio::test]
async fn routing_headers_must_match_the_body() {
    let server = TestServer::start().await;
    let session = server.initialize(Some(DATA_READER)).await;
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "schema_version", "arguments": {}}});
    let headers = |method: &'static str, name: &'static str| {
        [
            ("mcp-session-id", session.clone()),
            ("mcp-method", method.to_owned()),
            ("mcp-name", name.to_owned()),
        ]
    };
    for (method, name) in [
        ("tools/list", "schema_version"),
        ("tools/call", "type_info"),
    ] {
        let extra = headers(method, name);
        let extra: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let response = server.post(Some(DATA_READER), &call, &extra).await;
        assert_eq!(response.status(), 400, "{method} {name}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["id"], 5);
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("does not match"),
            "{body}"
        );
    }
    let extra = headers("tools/call", "schema_version");
    let extra: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let response = server.post(Some(DATA_READER), &call, &extra).await;
    assert_eq!(response.status(), 200);
    assert!(answer_of(response).await["result"]["structuredContent"]["version"].is_string());
}

#[tokio::test]
async fn sessions_belong_to_the_token_that_created_them() {
    let server = TestServer::start().await;
    let session = server.initialize(Some(DATA_READER)).await;
    assert_eq!(session.len(), 36, "random UUID session ids");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let own = server
        .post(Some(DATA_READER), &list, &[("mcp-session-id", &session)])
        .await;
    assert_eq!(own.status(), 200);
    let stolen = server
        .post(Some(SCHEMA_READER), &list, &[("mcp-session-id", &session)])
        .await;
    assert_eq!(stolen.status(), 404);
    let stream = server
        .http
        .get(server.url())
        .bearer_auth(SCHEMA_READER)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 404);
    let foreign_delete = server.delete_session(SCHEMA_READER, &session).await;
    assert_eq!(foreign_delete.status(), 404);
    let delete = server.delete_session(DATA_READER, &session).await;
    assert_eq!(delete.status(), 202);
    let after = server
        .post(Some(DATA_READER), &list, &[("mcp-session-id", &session)])
        .await;
    assert_eq!(after.status(), 404, "a deleted session is gone");
}

#[tokio::test]
async fn an_unsupported_protocol_version_header_is_refused() {
    let server = TestServer::start().await;
    let session = server.initialize(Some(DATA_READER)).await;
    let list = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
    let refused = server
        .post(
            Some(DATA_READER),
            &list,
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "1999-01-01"),
            ],
        )
        .await;
    assert_eq!(refused.status(), 400);
    let text = refused.text().await.unwrap();
    assert!(text.contains("1999-01-01"), "names the version: {text}");
    let accepted = server
        .post(
            Some(DATA_READER),
            &list,
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "2025-11-25"),
            ],
        )
        .await;
    assert_eq!(accepted.status(), 200);
}
