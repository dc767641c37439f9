//! The OAuth flow's refusals, over real HTTP against a small authorization server written for
//! them (the conformance suite's `auth/*` scenarios cover the flows that succeed): a token
//! endpoint on a guarded address is refused before anything is sent, and a callback with a
//! wrong issuer, an unknown, reused or expired state stores nothing.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use switchboard_mcp_client::oauth::{
    AuthorizationStart, CallbackParams, CredentialStore, InMemoryCredentialStore,
    InMemoryStateStore, OAuthError, OAuthFlow, OAuthHttpError, PolicedOAuthHttp,
    PreregisteredClient, StateStore,
};
use switchboard_mcp_client::url_policy::StaticHostLookup;
use switchboard_mcp_client::{Url, UrlPolicy, UrlPolicyConfig};

/// What the mock authorization server says and counts.
#[derive(Default)]
struct Mock {
    base: Mutex<String>,
    token_endpoint: Mutex<String>,
    /// The `iss` the authorization endpoint puts in its redirect.
    callback_issuer: Mutex<String>,
    token_requests: AtomicUsize,
}

type Shared = Arc<Mock>;

async fn listen(address: &str, app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind(address).await.unwrap();
    let bound = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    bound
}

async fn token(State(mock): State<Shared>) -> impl IntoResponse {
    mock.token_requests.fetch_add(1, Ordering::SeqCst);
    Json(json!({"access_token": "canary-access-token", "token_type": "Bearer", "expires_in": 3600}))
}

fn routes(mock: Shared) -> Router {
    Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(|State(mock): State<Shared>| async move {
                let base = mock.base.lock().unwrap().clone();
                Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}))
            }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(|State(mock): State<Shared>| async move {
                let base = mock.base.lock().unwrap().clone();
                Json(json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": mock.token_endpoint.lock().unwrap().clone(),
                    "response_types_supported": ["code"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "authorization_response_iss_parameter_supported": true,
                }))
            }),
        )
        .route(
            "/authorize",
            get(
                |State(mock): State<Shared>, Query(query): Query<HashMap<String, String>>| async move {
                    let mut target = Url::parse(&query["redirect_uri"]).unwrap();
                    target
                        .query_pairs_mut()
                        .append_pair("code", "the-code")
                        .append_pair("state", &query["state"])
                        .append_pair("iss", &mock.callback_issuer.lock().unwrap());
                    Redirect::to(target.as_str())
                },
            ),
        )
        .route("/token", post(token))
        .route(
            "/mcp",
            post(|| async {
                let mut headers = HeaderMap::new();
                headers.insert(header::WWW_AUTHENTICATE, "Bearer".parse().unwrap());
                (StatusCode::UNAUTHORIZED, headers)
            }),
        )
        .with_state(mock)
}

/// A mock on 127.0.0.1 whose token endpoint is `token_endpoint(port)`.
async fn mock_server(token_endpoint: impl Fn(u16) -> String) -> (Shared, String) {
    let mock = Shared::default();
    let address = listen("127.0.0.1:0", routes(mock.clone())).await;
    let base = format!("http://127.0.0.1:{}", address.port());
    *mock.base.lock().unwrap() = base.clone();
    *mock.token_endpoint.lock().unwrap() = token_endpoint(address.port());
    *mock.callback_issuer.lock().unwrap() = base.clone();
    (mock, base)
}

struct Connection {
    flow: OAuthFlow,
    credentials: Arc<InMemoryCredentialStore>,
    states: Arc<InMemoryStateStore>,
}

fn connection(base: &str, policy: UrlPolicy) -> Connection {
    let credentials = Arc::new(InMemoryCredentialStore::new());
    let states = Arc::new(InMemoryStateStore::new());
    let flow = OAuthFlow::new(
        format!("{base}/mcp").parse().unwrap(),
        PolicedOAuthHttp::new(policy).unwrap(),
        credentials.clone(),
        states.clone(),
    );
    Connection {
        flow,
        credentials,
        states,
    }
}

fn start_request() -> AuthorizationStart {
    AuthorizationStart {
        redirect_uri: "http://127.0.0.1:9/oauth/callback".into(),
        client_name: "switchboard-test".into(),
        preregistered: Some(PreregisteredClient {
            client_id: "pre-registered".into(),
            client_secret: None,
            auth_method: None,
        }),
        client_metadata_url: None,
        challenge: None,
        scopes: None,
    }
}

/// Policy: loopback only through `allow_networks` (127.0.0.1), names from `hosts`.
fn policy_allowing(networks: &[&str], hosts: &[(&str, &str)]) -> UrlPolicy {
    let table = StaticHostLookup {
        hosts: hosts
            .iter()
            .map(|(name, ip)| (name.to_string(), vec![ip.parse::<IpAddr>().unwrap()]))
            .collect(),
    };
    UrlPolicy::with_lookup(
        UrlPolicyConfig {
            allow_loopback: false,
            allow_networks: networks.iter().map(|n| n.to_string()).collect(),
            ..UrlPolicyConfig::default()
        },
        Arc::new(table),
    )
}

#[tokio::test]
async fn a_token_endpoint_on_a_cloud_metadata_address_is_refused() {
    let (mock, base) = mock_server(|_| "http://169.254.169.254/latest/token".into()).await;
    let connection = connection(&base, policy_allowing(&["127.0.0.1/32"], &[]));
    let pending = connection.flow.start(start_request()).await.unwrap();
    let callback = connection
        .flow
        .authorize_headlessly(&pending.authorization_url)
        .await
        .unwrap();
    let error = connection
        .flow
        .finish(&pending.client, &callback)
        .await
        .unwrap_err();
    assert!(
        matches!(error, OAuthError::Http(OAuthHttpError::Refused { .. })),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message
            .contains("http://169.254.169.254/latest/token was refused by the outbound URL policy")
            && message.contains("cloud metadata"),
        "{message}"
    );
    assert_eq!(mock.token_requests.load(Ordering::SeqCst), 0);
    assert!(connection.credentials.load().await.unwrap().is_none());
}

#[tokio::test]
async fn a_token_endpoint_whose_name_resolves_to_a_guarded_address_gets_nothing() {
    // The token endpoint listens on 127.0.0.2; its name resolves there.
    let guarded = Shared::default();
    let token_app = Router::new()
        .route("/token", post(token))
        .with_state(guarded.clone());
    let token_address = listen("127.0.0.2:0", token_app).await;
    let port = token_address.port();
    let (_, base) = mock_server(move |_| format!("http://tokens.example:{port}/token")).await;
    let hosts = [("tokens.example", "127.0.0.2")];

    // Under a policy that opens only 127.0.0.1, nothing reaches 127.0.0.2.
    let refused = connection(&base, policy_allowing(&["127.0.0.1/32"], &hosts));
    let pending = refused.flow.start(start_request()).await.unwrap();
    let callback = refused
        .flow
        .authorize_headlessly(&pending.authorization_url)
        .await
        .unwrap();
    let error = refused
        .flow
        .finish(&pending.client, &callback)
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("tokens.example")
            && message.contains("refused by the outbound URL policy"),
        "{message}"
    );
    assert_eq!(guarded.token_requests.load(Ordering::SeqCst), 0);

    // The control: with 127.0.0.2 allowed the same flow reaches it and stores the token.
    let allowed = connection(
        &base,
        policy_allowing(&["127.0.0.1/32", "127.0.0.2/32"], &hosts),
    );
    let pending = allowed.flow.start(start_request()).await.unwrap();
    let callback = allowed
        .flow
        .authorize_headlessly(&pending.authorization_url)
        .await
        .unwrap();
    allowed
        .flow
        .finish(&pending.client, &callback)
        .await
        .unwrap();
    assert_eq!(guarded.token_requests.load(Ordering::SeqCst), 1);
    assert_eq!(
        allowed.flow.access_token(&pending.client).await.unwrap(),
        "canary-access-token"
    );
}

#[tokio::test]
async fn a_callback_from_another_issuer_or_with_a_bad_state_stores_nothing() {
    let (mock, base) = mock_server(|port| format!("http://127.0.0.1:{port}/token")).await;
    let connection = connection(&base, UrlPolicy::new(UrlPolicyConfig::default()));
    let pending = connection.flow.start(start_request()).await.unwrap();

    // A forged issuer: refused, no token request, and the state survives for the real callback.
    *mock.callback_issuer.lock().unwrap() = "https://evil.example".into();
    let forged = connection
        .flow
        .authorize_headlessly(&pending.authorization_url)
        .await
        .unwrap();
    let error = connection
        .flow
        .finish(&pending.client, &forged)
        .await
        .unwrap_err();
    assert!(
        matches!(error, OAuthError::IssuerMismatch { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("https://evil.example"),
        "{error}"
    );
    assert_eq!(mock.token_requests.load(Ordering::SeqCst), 0);
    assert!(connection.credentials.load().await.unwrap().is_none());

    // An unknown state.
    let unknown = CallbackParams {
        state: Some("not-a-state-we-issued".into()),
        ..forged.clone()
    };
    let error = connection
        .flow
        .finish(&pending.client, &unknown)
        .await
        .unwrap_err();
    assert!(matches!(error, OAuthError::UnknownState), "{error:?}");

    // The genuine callback works once; used again, its state is unknown.
    *mock.callback_issuer.lock().unwrap() = base.clone();
    let genuine = connection
        .flow
        .authorize_headlessly(&pending.authorization_url)
        .await
        .unwrap();
    connection
        .flow
        .finish(&pending.client, &genuine)
        .await
        .unwrap();
    assert_eq!(mock.token_requests.load(Ordering::SeqCst), 1);
    let error = connection
        .flow
        .finish(&pending.client, &genuine)
        .await
        .unwrap_err();
    assert!(matches!(error, OAuthError::UnknownState), "{error:?}");
    assert_eq!(mock.token_requests.load(Ordering::SeqCst), 1);

    // An expired state (older than 10 minutes).
    let expiring = connection.flow.start(start_request()).await.unwrap();
    let mut state = connection
        .states
        .load(&expiring.state)
        .await
        .unwrap()
        .unwrap();
    state.created_at -= 601;
    connection
        .states
        .save(&expiring.state, state)
        .await
        .unwrap();
    let callback = connection
        .flow
        .authorize_headlessly(&expiring.authorization_url)
        .await
        .unwrap();
    let error = connection
        .flow
        .finish(&expiring.client, &callback)
        .await
        .unwrap_err();
    assert!(matches!(error, OAuthError::StateExpired), "{error:?}");
    assert_eq!(mock.token_requests.load(Ordering::SeqCst), 1);
}
