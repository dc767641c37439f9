//! Bearer tokens, scopes and workspace isolation through the real HTTP interface.

use crate::support::{TestServer, error_of, issue_token, json_body, other_workspace};
use reqwest::StatusCode;
use reqwest::header::WWW_AUTHENTICATE;
use serde_json::{Value, json};
use switchboard_core::{Scope, ScopeSet};

#[tokio::test]
async fn the_owner_token_works_and_me_describes_it() {
    let server = TestServer::start().await;
    let response = server
        .get("/api/me", &server.owner_token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let me: Value = response.json().await.unwrap();
    let scopes: Vec<&str> = me["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|scope| scope.as_str().unwrap())
        .collect();
    assert_eq!(scopes, ScopeSet::all().names());
    assert_eq!(me["workspace"]["name"], "default");
    assert!(
        me["workspace"]["id"]
            .as_str()
            .is_some_and(|id| !id.is_empty())
    );
}

#[tokio::test]
async fn missing_malformed_and_wrong_tokens_get_401_with_a_challenge() {
    let server = TestServer::start().await;
    let missing = server
        .client
        .get(server.url("/api/me"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    assert!(
        missing.headers()[WWW_AUTHENTICATE]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    let (code, message) = error_of(missing).await;
    assert_eq!(code, "unauthorized");
    assert!(message.contains("Authorization"), "{message}");

    let basic = server
        .client
        .get(server.url("/api/me"))
        .basic_auth("owner", Some(&server.owner_token))
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status(), StatusCode::UNAUTHORIZED);

    let wrong = server
        .get("/api/me", "sb_not_a_real_token")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(error_of(wrong).await.0, "unauthorized");
}

#[tokio::test]
async fn a_token_without_the_scope_gets_403_naming_it() {
    let server = TestServer::start().await;
    let created = server
        .client
        .post(server.url("/api/tokens"))
        .bearer_auth(&server.owner_token)
        .json(&json!({ "name": "reader", "scopes": ["chat:use", "schema:read"] }))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let created: Value = created.json().await.unwrap();
    let reader_token = created["plaintext"].as_str().unwrap().to_owned();

    // The token itself is fine…
    let me = server.get("/api/me", &reader_token).send().await.unwrap();
    assert_eq!(me.status(), StatusCode::OK);
    // …but managing tokens needs `admin`.
    let listing = server
        .get("/api/tokens", &reader_token)
        .send()
        .await
        .unwrap();
    assert_eq!(listing.status(), StatusCode::FORBIDDEN);
    let challenge = listing.headers()[WWW_AUTHENTICATE]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.contains(r#"scope="admin""#), "{challenge}");
    let (code, message) = error_of(listing).await;
    assert_eq!(code, "insufficient_scope");
    assert!(message.contains(Scope::Admin.as_str()), "{message}");
}

#[tokio::test]
async fn a_revoked_token_stops_working_at_once() {
    let server = TestServer::start().await;
    let issued = issue_token(&server, &server.owner_token, "short-lived", &["chat:use"]).await;
    let (token, token_id) = (issued.plaintext.as_str(), issued.id.as_str());
    assert_eq!(
        server.get("/api/me", token).send().await.unwrap().status(),
        StatusCode::OK
    );
    let revoked = server
        .client
        .delete(server.url(&format!("/api/tokens/{token_id}")))
        .bearer_auth(&server.owner_token)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), StatusCode::OK);
    assert_eq!(
        server.get("/api/me", token).send().await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn a_workspace_sees_and_touches_only_its_own_rows() {
    let server = TestServer::start().await;
    let (workspace_b, token_b) = other_workspace(&server.store, "tenant-b", ScopeSet::all()).await;

    let me_b: Value = json_body(server.get("/api/me", &token_b)).await;
    assert_eq!(me_b["workspace"]["id"], workspace_b.as_str());
    assert_eq!(me_b["workspace"]["name"], "tenant-b");

    let tokens_a: Value = json_body(server.get("/api/tokens", &server.owner_token)).await;
    let tokens_b: Value = json_body(server.get("/api/tokens", &token_b)).await;
    let ids = |tokens: &Value| -> Vec<String> {
        tokens
            .as_array()
            .unwrap()
            .iter()
            .map(|token| token["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (ids_a, ids_b) = (ids(&tokens_a), ids(&tokens_b));
    assert_eq!(ids_a.len(), 1);
    assert_eq!(ids_b.len(), 1);
    assert!(ids_a.iter().all(|id| !ids_b.contains(id)));

    // B cannot revoke A's token: it does not exist as far as B can tell.
    let attempt = server
        .client
        .delete(server.url(&format!("/api/tokens/{}", ids_a[0])))
        .bearer_auth(&token_b)
        .send()
        .await
        .unwrap();
    assert_eq!(attempt.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        server
            .get("/api/me", &server.owner_token)
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK,
        "A's token must survive B's attempt"
    );
}
