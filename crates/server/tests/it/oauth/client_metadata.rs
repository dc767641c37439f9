//! `GET /oauth/client-metadata.json`: public, cacheable, and naming itself as `client_id` and
//! the callback as the one redirect URI, under `server.public_url` (its path kept as a prefix).

use crate::support::{TestServer, test_config};
use serde_json::{Value, json};
use switchboard_server::{PublicUrl, ServerConfig};

#[tokio::test]
async fn the_document_names_itself_and_the_callback_under_the_public_url() {
    let config = ServerConfig {
        public_url: PublicUrl::parse("https://chat.example.com/switchboard").unwrap(),
        ..test_config()
    };
    let server = TestServer::start_with(config, |router| router, |state| state).await;
    // No bearer token: authorization servers fetch it anonymously.
    let response = server
        .client
        .get(server.url("/oauth/client-metadata.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert!(
        headers[reqwest::header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    assert_eq!(
        headers[reqwest::header::CACHE_CONTROL],
        "public, max-age=3600"
    );
    let document: Value = response.json().await.unwrap();
    assert_eq!(
        document,
        json!({
            "client_id": "https://chat.example.com/switchboard/oauth/client-metadata.json",
            "client_name": "Switchboard",
            "client_uri": "https://chat.example.com/switchboard",
            "redirect_uris": ["https://chat.example.com/switchboard/oauth/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        })
    );
}

#[tokio::test]
async fn the_default_public_url_is_the_default_listener() {
    let server = TestServer::start().await;
    let document: Value = server
        .client
        .get(server.url("/oauth/client-metadata.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        document["client_id"],
        "http://127.0.0.1:8080/oauth/client-metadata.json"
    );
    assert_eq!(
        document["redirect_uris"],
        json!(["http://127.0.0.1:8080/oauth/callback"])
    );
}
