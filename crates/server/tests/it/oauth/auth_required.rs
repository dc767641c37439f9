//! `auth_required` in a chat answer: a registered server that refuses Switchboard with 401 and
//! a Bearer challenge (`needs_auth`) is announced right after `meta` with its name, id and
//! code, and the answer goes on without its tools.

use crate::support::chat::{ChatOptions, ChatServer, of_type, remote_server};
use serde_json::json;

/// An MCP endpoint that answers every request 401 with an OAuth challenge.
async fn refusing_upstream() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let metadata = format!("http://{address}/.well-known/oauth-protected-resource/mcp");
    let refusing = axum::Router::new().fallback(move || {
        let challenge = format!("Bearer resource_metadata=\"{metadata}\"");
        async move {
            (
                axum::http::StatusCode::UNAUTHORIZED,
                [("www-authenticate", challenge)],
                "sign in first",
            )
        }
    });
    tokio::spawn(async move { axum::serve(listener, refusing).await.unwrap() });
    format!("http://{address}/mcp")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_needs_sign_in_is_announced_and_the_answer_goes_on_without_it() {
    let server = ChatServer::start(ChatOptions::default()).await;
    let url = refusing_upstream().await;
    let server_id = server.register_server(remote_server("locked", &url)).await;

    let events = server.ask_and_wait(json!({"message": "hello"})).await;
    assert_eq!(events[0]["type"], "meta", "{events:#?}");
    let unavailable = events[0]["unavailable_servers"].as_array().unwrap();
    assert_eq!(unavailable.len(), 1, "{events:#?}");
    assert_eq!(unavailable[0]["code"], "needs_auth");
    assert_eq!(events[1]["type"], "auth_required", "{events:#?}");
    let announced = of_type(&events, "auth_required");
    assert_eq!(announced.len(), 1, "{events:#?}");
    let event = announced[0];
    assert_eq!(event["server"], "locked");
    assert_eq!(event["server_id"], server_id.as_str());
    assert_eq!(event["code"], "needs_auth");
    assert!(
        event["message"].as_str().unwrap().contains("locked"),
        "{event}"
    );
    // A server not configured for OAuth (auth mode `none`) cannot start a flow from the
    // stream: no URL (the UI asks the authorize API, which says why).
    assert!(event.get("authorization_url").is_none(), "{event}");
    let done = of_type(&events, "done");
    assert_eq!(done[0]["outcome"], "completed", "{events:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oauth_server_the_caller_has_not_connected_comes_with_an_authorization_url() {
    use super::fake_authorization_server::FakeAuthorizationServer;
    use switchboard_store::{AuthMode, CredentialScope, ServerAuthConfig};
    let upstream = FakeAuthorizationServer::start().await;
    let server = ChatServer::start(ChatOptions::default()).await;
    let mut registration = remote_server("linear", &upstream.mcp_url());
    registration.connection.auth = ServerAuthConfig {
        mode: Some(AuthMode::Oauth),
        credential_scope: CredentialScope::PerUser,
        ..ServerAuthConfig::default()
    };
    let server_id = server.register_server(registration).await;

    let events = server.ask_and_wait(json!({"message": "hello"})).await;
    let announced = of_type(&events, "auth_required");
    assert_eq!(announced.len(), 1, "{events:#?}");
    assert_eq!(announced[0]["server_id"], server_id.as_str());
    let url = announced[0]["authorization_url"]
        .as_str()
        .unwrap_or_else(|| panic!("{:#}", announced[0]));
    let url = url::Url::parse(url).unwrap();
    assert!(
        url.as_str()
            .starts_with(&format!("{}/authorize?", upstream.base))
    );
    let query: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["resource"], upstream.mcp_url());
    assert_eq!(of_type(&events, "done")[0]["outcome"], "completed");
}
