//! A protected MCP resource and its authorization server on one loopback port that issue
//! refresh tokens (the SDK's demo authorization server does not): the resource is a minimal
//! stateless MCP server answering JSON (`initialize`, `tools/list`, one tool `whoami` saying
//! which token generation called it), accepting only tokens it issued that were not expired by
//! the test; `/token` answers the code exchange and the `refresh_token` grant with a new
//! generation, and counts both. Any `code` is accepted (the host's side of the code flow is
//! tested elsewhere).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

pub struct RefreshingServer {
    pub base: String,
    shared: Arc<Mutex<Tokens>>,
}

#[derive(Default)]
struct Tokens {
    /// The `expires_in` of issued tokens.
    lifetime_secs: u64,
    /// How many MCP requests were refused.
    refusals: u32,
    generation: u32,
    valid: HashSet<String>,
    refreshes: u32,
    refuse_refresh: bool,
}

#[derive(Clone)]
struct Shared {
    base: String,
    tokens: Arc<Mutex<Tokens>>,
}

impl RefreshingServer {
    /// Tokens live an hour.
    pub async fn start() -> Self {
        Self::with_token_lifetime(3600).await
    }

    /// Tokens announce `lifetime_secs` as their `expires_in`.
    pub async fn with_token_lifetime(lifetime_secs: u64) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let tokens = Arc::new(Mutex::new(Tokens {
            lifetime_secs,
            ..Tokens::default()
        }));
        let shared = Shared {
            base: base.clone(),
            tokens: tokens.clone(),
        };
        let router = Router::new()
            .route("/mcp", post(mcp).get(not_allowed).delete(not_allowed))
            .route(
                "/.well-known/oauth-protected-resource/mcp",
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
            shared: tokens,
        }
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// Every token issued so far is refused from now on (as if expired early or revoked).
    pub fn expire_tokens(&self) {
        self.shared.lock().unwrap().valid.clear();
    }

    /// The `refresh_token` grant fails from now on (`invalid_grant`).
    pub fn refuse_refreshes(&self) {
        self.shared.lock().unwrap().refuse_refresh = true;
    }

    /// How many MCP requests were refused (401).
    pub fn refusals(&self) -> u32 {
        self.shared.lock().unwrap().refusals
    }

    /// How many `refresh_token` grants were answered.
    pub fn refreshes(&self) -> u32 {
        self.shared.lock().unwrap().refreshes
    }

    /// The access tokens issued so far (generations 1..=n).
    pub fn issued(&self) -> Vec<String> {
        let generation = self.shared.lock().unwrap().generation;
        (1..=generation).map(access_token).collect()
    }
}

fn access_token(generation: u32) -> String {
    format!("refreshing-access-token-{generation}-9b2e")
}

async fn not_allowed() -> StatusCode {
    StatusCode::METHOD_NOT_ALLOWED
}

async fn mcp(State(shared): State<Shared>, headers: HeaderMap, body: Json<Value>) -> Response {
    let bearer = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned();
    let generation = {
        let mut tokens = shared.tokens.lock().unwrap();
        let generation = tokens.valid.contains(&bearer).then(|| {
            (1..=tokens.generation)
                .find(|generation| access_token(*generation) == bearer)
                .unwrap_or_default()
        });
        if generation.is_none() {
            tokens.refusals += 1;
        }
        generation
    };
    let Some(generation) = generation else {
        let challenge = format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            shared.base
        );
        return (
            StatusCode::UNAUTHORIZED,
            [("www-authenticate", challenge)],
            "invalid token",
        )
            .into_response();
    };
    let message = body.0;
    let Some(id) = message.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match message["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"].as_str().unwrap_or("2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "refreshing", "version": "1"},
        }),
        "ping" => json!({}),
        "tools/list" => json!({"tools": [{
            "name": "whoami",
            "description": "Says which token generation called it.",
            "inputSchema": {"type": "object", "properties": {}},
        }]}),
        "tools/call" => {
            json!({"content": [{"type": "text", "text": format!("called with token generation {generation}")}]})
        }
        _ => {
            return Json(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}}))
            .into_response();
        }
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

async fn resource_metadata(State(shared): State<Shared>) -> Json<Value> {
    Json(json!({
        "resource": format!("{}/mcp", shared.base),
        "authorization_servers": [shared.base],
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
    }))
}

async fn register(Json(request): Json<Value>) -> impl IntoResponse {
    let mut answer = request;
    answer["client_id"] = json!("refreshing-client");
    answer["token_endpoint_auth_method"] = json!("none");
    (StatusCode::CREATED, Json(answer))
}

async fn token(State(shared): State<Shared>, body: String) -> Response {
    let refresh = url::form_urlencoded::parse(body.as_bytes())
        .any(|(key, value)| key == "grant_type" && value == "refresh_token");
    let mut tokens = shared.tokens.lock().unwrap();
    if refresh {
        if tokens.refuse_refresh {
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": "invalid_grant"})),
            )
                .into_response();
        }
        tokens.refreshes += 1;
    }
    tokens.generation += 1;
    let issued = access_token(tokens.generation);
    tokens.valid.insert(issued.clone());
    Json(json!({
        "access_token": issued,
        "token_type": "Bearer",
        "expires_in": tokens.lifetime_secs,
        "refresh_token": format!("refreshing-refresh-token-{}", tokens.generation),
    }))
    .into_response()
}
