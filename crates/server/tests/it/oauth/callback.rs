//! The host's side of the authorization code flow over HTTP: `POST …/oauth/authorize` answers
//! an authorization URL with PKCE S256, a fresh `state`, the resource indicator and the exact
//! redirect URI; `GET /oauth/callback` refuses an unknown, reused or expired state and an
//! answer from another issuer, storing nothing, and stores the tokens of a good one (never
//! showing them, sealed in the database) before sending the browser back to the servers page.

use super::fake_authorization_server::{
    CANARY_ACCESS_TOKEN, CANARY_REFRESH_TOKEN, FakeAuthorizationServer,
};
use crate::support::{TestServer, error_of, holds_in_any_form, issue_token, send, test_config};
use std::collections::HashMap;
use switchboard_core::{ServerId, UserId, WorkspaceId};
use switchboard_mcp_client::url_policy::ServerOrigin;
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_registry::oauth::OAuthService;
use switchboard_server::oauth::settings;
use switchboard_store::{
    AuthMode, CredentialScope, NewOAuthState, NewServer, ServerAuthConfig, ServerConnectionConfig,
    ServerSecrets,
};

/// A server with the OAuth service wired as the binary wires it.
async fn start() -> TestServer {
    TestServer::start_with(
        test_config(),
        |router| router,
        |state| {
            let client = McpClient::new(McpClientConfig::default()).unwrap();
            let policy = client.url_policy_for(ServerOrigin::Registered).clone();
            let oauth = OAuthService::new(
                state.store.clone(),
                policy,
                settings(&state.config.public_url, "test"),
            )
            .unwrap();
            state.with_oauth(oauth)
        },
    )
    .await
}

/// Registers `url` as an OAuth server whose people each connect their own account.
async fn register_oauth_server(server: &TestServer, url: &str) -> (WorkspaceId, ServerId) {
    let workspace_id = owner_workspace(server).await;
    let connection = ServerConnectionConfig {
        auth: ServerAuthConfig {
            mode: Some(AuthMode::Oauth),
            credential_scope: CredentialScope::PerUser,
            ..ServerAuthConfig::default()
        },
        ..ServerConnectionConfig::default()
    };
    let record = server
        .store
        .create_server(
            &workspace_id,
            NewServer {
                name: "linear".to_owned(),
                transport: switchboard_core::TransportKind::StreamableHttp,
                url: Some(url.to_owned()),
                command: None,
                args: Vec::new(),
                connection,
                secrets: ServerSecrets::default(),
                is_active: true,
            },
        )
        .await
        .unwrap();
    (workspace_id, record.id)
}

async fn owner_workspace(server: &TestServer) -> WorkspaceId {
    let me: serde_json::Value =
        crate::support::json_body(server.get("/api/me", &server.owner_token)).await;
    WorkspaceId::from(me["workspace"]["id"].as_str().unwrap().to_owned())
}

async fn owner_user(server: &TestServer) -> UserId {
    let me: serde_json::Value =
        crate::support::json_body(server.get("/api/me", &server.owner_token)).await;
    UserId::from(me["user_id"].as_str().unwrap().to_owned())
}

async fn authorize(server: &TestServer, token: &str, server_id: &ServerId) -> url::Url {
    let response = send(
        server,
        "POST",
        &format!("/api/mcp/servers/{server_id}/oauth/authorize"),
        token,
        Some(serde_json::json!({})),
    )
    .await;
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = response.json().await.unwrap();
    url::Url::parse(body["authorization_url"].as_str().unwrap()).unwrap()
}

/// Follows `GET /oauth/callback?{query}` one hop; returns the UI query it redirects to.
async fn callback(server: &TestServer, query: &str) -> HashMap<String, String> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = client
        .get(server.url(&format!("/oauth/callback?{query}")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let (page, ui_query) = location.split_once("#/servers?").expect(&location);
    assert_eq!(page, "http://127.0.0.1:8080/");
    url::form_urlencoded::parse(ui_query.as_bytes())
        .into_owned()
        .collect()
}

fn query_of(url: &url::Url) -> HashMap<String, String> {
    url.query_pairs().into_owned().collect()
}

async fn connected(
    server: &TestServer,
    workspace: &WorkspaceId,
    id: &ServerId,
    user: &UserId,
) -> bool {
    server
        .store
        .oauth_connection_summary(workspace, id, Some(user))
        .await
        .unwrap()
        .is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorize_answers_a_pkce_s256_url_for_the_resource_with_the_exact_redirect_uri() {
    let upstream = FakeAuthorizationServer::start().await;
    let server = start().await;
    let (_, server_id) = register_oauth_server(&server, &upstream.mcp_url()).await;
    let url = authorize(&server, &server.owner_token, &server_id).await;
    assert_eq!(
        url.as_str().split('?').next().unwrap(),
        format!("{}/authorize", upstream.base)
    );
    let query = query_of(&url);
    assert_eq!(query["response_type"], "code");
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["code_challenge"].len(), 43, "{query:?}");
    assert!(query["state"].len() >= 16, "{query:?}");
    assert_eq!(query["resource"], upstream.mcp_url());
    assert_eq!(
        query["redirect_uri"],
        "http://127.0.0.1:8080/oauth/callback"
    );
    assert_eq!(query["client_id"], "registered-client");
    // Two starts, two states.
    let again = authorize(&server, &server.owner_token, &server_id).await;
    assert_ne!(query_of(&again)["state"], query["state"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_good_callback_stores_the_tokens_once_and_a_reused_state_is_refused() {
    let upstream = FakeAuthorizationServer::start().await;
    let server = start().await;
    let (workspace, server_id) = register_oauth_server(&server, &upstream.mcp_url()).await;
    let user = owner_user(&server).await;
    let url = authorize(&server, &server.owner_token, &server_id).await;
    let state = query_of(&url)["state"].clone();
    let answer = format!("code=the-code&state={state}&iss={}", upstream.base);

    let ui = callback(&server, &answer).await;
    assert_eq!(
        ui.get("oauth").map(String::as_str),
        Some("connected"),
        "{ui:?}"
    );
    assert_eq!(ui["server"], "linear");
    assert!(connected(&server, &workspace, &server_id, &user).await);
    let exchanges = upstream.token_requests();
    assert_eq!(exchanges.len(), 1);
    assert!(exchanges[0].contains("code_verifier="), "{}", exchanges[0]);
    assert!(exchanges[0].contains("resource="), "{}", exchanges[0]);

    // The same answer again: the state was used.
    let ui = callback(&server, &answer).await;
    assert_eq!(ui["oauth"], "error", "{ui:?}");
    assert!(ui["reason"].contains("already used"), "{ui:?}");
    assert_eq!(upstream.token_requests().len(), 1, "no second exchange");

    // The views never show the token.
    let views = server
        .get("/api/mcp/servers", &server.owner_token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!views.contains(CANARY_ACCESS_TOKEN));
    // Nor do the database's files hold either token unsealed.
    let raw = server.raw_database_bytes();
    assert!(
        holds_in_any_form(&raw, &upstream.mcp_url()),
        "the raw read sees plain columns"
    );
    for token in [CANARY_ACCESS_TOKEN, CANARY_REFRESH_TOKEN] {
        assert!(
            !holds_in_any_form(&raw, token),
            "{token} is in the database"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_expired_and_foreign_issuer_callbacks_store_nothing() {
    let upstream = FakeAuthorizationServer::start().await;
    let server = start().await;
    let (workspace, server_id) = register_oauth_server(&server, &upstream.mcp_url()).await;
    let user = owner_user(&server).await;

    let ui = callback(&server, "code=x&state=never-issued").await;
    assert_eq!(ui["oauth"], "error");
    assert!(ui["reason"].contains("unknown"), "{ui:?}");
    let ui = callback(&server, "code=x").await;
    assert_eq!(ui["oauth"], "error");
    assert!(ui["reason"].contains("state"), "{ui:?}");

    // A state whose ten minutes are over.
    server
        .store
        .save_oauth_state(
            &workspace,
            NewOAuthState {
                state_key: "an-old-state-of-the-owner".to_owned(),
                server_id: server_id.clone(),
                user_id: user.clone(),
                shared: false,
                payload: serde_json::json!({}),
                expires_at: chrono::Utc::now() - chrono::TimeDelta::minutes(1),
            },
        )
        .await
        .unwrap();
    let ui = callback(&server, "code=x&state=an-old-state-of-the-owner").await;
    assert_eq!(ui["oauth"], "error");
    assert!(ui["reason"].contains("10 minutes"), "{ui:?}");

    // An answer claiming to come from another issuer (RFC 9207 mix-up defence).
    let url = authorize(&server, &server.owner_token, &server_id).await;
    let state = query_of(&url)["state"].clone();
    let ui = callback(
        &server,
        &format!("code=x&state={state}&iss=https://evil.example"),
    )
    .await;
    assert_eq!(ui["oauth"], "error");
    assert!(ui["reason"].contains("evil.example"), "{ui:?}");
    assert_eq!(ui["server"], "linear");

    // The authorization server said no.
    let url = authorize(&server, &server.owner_token, &server_id).await;
    let state = query_of(&url)["state"].clone();
    let ui = callback(&server, &format!("error=access_denied&state={state}")).await;
    assert_eq!(ui["oauth"], "error");
    assert!(ui["reason"].contains("access_denied"), "{ui:?}");

    assert!(
        upstream.token_requests().is_empty(),
        "no code was exchanged"
    );
    assert!(!connected(&server, &workspace, &server_id, &user).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_connection_is_for_admins_and_a_plain_server_is_not_oauth() {
    let upstream = FakeAuthorizationServer::start().await;
    let server = start().await;
    let workspace = owner_workspace(&server).await;
    let shared = server
        .store
        .create_server(
            &workspace,
            NewServer {
                connection: ServerConnectionConfig {
                    auth: ServerAuthConfig {
                        mode: Some(AuthMode::Oauth),
                        credential_scope: CredentialScope::Shared,
                        ..ServerAuthConfig::default()
                    },
                    ..ServerConnectionConfig::default()
                },
                ..NewServer::remote(
                    "shared",
                    switchboard_core::TransportKind::StreamableHttp,
                    upstream.mcp_url(),
                )
            },
        )
        .await
        .unwrap();
    let member = issue_token(&server, &server.owner_token, "member", &["chat:use"]).await;
    let response = send(
        &server,
        "POST",
        &format!("/api/mcp/servers/{}/oauth/authorize", shared.id),
        &member.plaintext,
        Some(serde_json::json!({})),
    )
    .await;
    assert_eq!(response.status(), 403);
    assert_eq!(error_of(response).await.0, "admin_only");
    authorize(&server, &server.owner_token, &shared.id).await;

    let plain = server
        .store
        .create_server(
            &workspace,
            crate::support::chat::remote_server("plain", &upstream.mcp_url()),
        )
        .await
        .unwrap();
    let response = send(
        &server,
        "POST",
        &format!("/api/mcp/servers/{}/oauth/authorize", plain.id),
        &server.owner_token,
        Some(serde_json::json!({})),
    )
    .await;
    assert_eq!(response.status(), 409);
    assert_eq!(error_of(response).await.0, "not_oauth");
}
