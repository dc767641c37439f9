//! A protected MCP resource and its authorization server on one loopback port, just enough of
//! RFC 9728, RFC 8414, RFC 7591 and the token endpoint for the host's side of the flow: the
//! resource answers 401 with its metadata URL; the authorization server registers any client,
//! names itself as `iss`, and issues a canary access token for any code, recording each token
//! request so tests can check what was (and was not) exchanged.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// The access token every exchange issues: it must never appear anywhere but in the store.
pub const CANARY_ACCESS_TOKEN: &str = "canary-access-token-3c1f9a";
/// The refresh token it issues with it.
pub const CANARY_REFRESH_TOKEN: &str = "canary-refresh-token-77d2";

pub struct FakeAuthorizationServer {
    pub base: String,
    token_requests: Arc<Mutex<Vec<String>>>,
}

impl FakeAuthorizationServer {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let token_requests = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared {
            base: base.clone(),
            token_requests: token_requests.clone(),
        };
        let router = Router::new()
            .route("/mcp", post(refuse).get(refuse))
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(resource_metadata),
            )
            .route(
                "/.well-known/oauth-protected-resource",
                get(resource_metadata),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                get(server_metadata),
            )
            .route("/register", post(register))
            .route("/token", post(token))
            .with_state(shared);
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Self {
            base,
            token_requests,
        }
    }

    /// The MCP endpoint to register.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// The bodies of the token requests received so far.
    pub fn token_requests(&self) -> Vec<String> {
        self.token_requests.lock().unwrap().clone()
    }
}

#[derive(Clone)]
struct Shared {
    base: String,
    token_requests: Arc<Mutex<Vec<String>>>,
}

async fn refuse(State(shared): State<Shared>) -> impl IntoResponse {
    let challenge = format!(
        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
        shared.base
    );
    (
        StatusCode::UNAUTHORIZED,
        [("www-authenticate", challenge)],
        "sign in first",
    )
}

async fn resource_metadata(State(shared): State<Shared>) -> Json<Value> {
    Json(json!({
        "resource": format!("{}/mcp", shared.base),
        "authorization_servers": [shared.base],
        "scopes_supported": ["tools:read"],
    }))
}

async fn server_metadata(State(shared): State<Shared>) -> Json<Value> {
    let base = &shared.base;
    Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
    }))
}

async fn register(Json(request): Json<Value>) -> impl IntoResponse {
    let mut answer = request;
    answer["client_id"] = json!("registered-client");
    answer["token_endpoint_auth_method"] = json!("none");
    (StatusCode::CREATED, Json(answer))
}

async fn token(State(shared): State<Shared>, body: String) -> Json<Value> {
    shared.token_requests.lock().unwrap().push(body);
    Json(json!({
        "access_token": CANARY_ACCESS_TOKEN,
        "token_type": "Bearer",
        "expires_in": 3600,
        "refresh_token": CANARY_REFRESH_TOKEN,
        "scope": "tools:read",
    }))
}
