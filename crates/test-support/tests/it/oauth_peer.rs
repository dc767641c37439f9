//! The OAuth-protected interop server (`interop::OAuthProtectedServer`, the TypeScript SDK's
//! example with its demo authorization server) driven headlessly, the way the host's OAuth tests
//! drive it: 401 and discovery, Dynamic Client Registration, `/authorize` followed through its
//! redirects to the redirect URI with PKCE S256 and a resource indicator, the token exchange,
//! then MCP over Streamable HTTP with the token.

use base64::Engine;
use rand::Rng;
use reqwest::{StatusCode, header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use switchboard_test_support::interop::OAuthProtectedServer;

/// Never contacted: the flow stops at the redirect that names it, as a browser would hand the
/// URL to the host's callback.
const REDIRECT_URI: &str = "http://127.0.0.1:1/oauth/callback";

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// A PKCE verifier (RFC 7636: 43 to 128 unreserved characters) and its S256 challenge.
fn pkce_pair() -> (String, String) {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
    let mut rng = rand::rng();
    let verifier: String = (0..64)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

/// The value of one auth-param (`name="value"`) of a `WWW-Authenticate` challenge.
fn auth_param(challenge: &str, name: &str) -> Option<String> {
    let start = challenge.find(&format!("{name}=\""))? + name.len() + 2;
    let end = challenge[start..].find('"')? + start;
    Some(challenge[start..end].to_string())
}

/// POSTs one JSON-RPC message to the MCP endpoint and returns the answer's status, session id
/// and JSON-RPC message (from a JSON body or the first SSE `data:` line).
async fn mcp_post(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    message: Value,
) -> (StatusCode, Option<String>, Option<Value>, header::HeaderMap) {
    let mut request = client()
        .post(url)
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&message);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let session_id = headers
        .get("mcp-session-id")
        .map(|value| value.to_str().unwrap().to_string());
    let body = response.text().await.unwrap();
    let data = body
        .lines()
        .find_map(|line| line.strip_prefix("data:"))
        .unwrap_or(&body)
        .trim();
    (status, session_id, serde_json::from_str(data).ok(), headers)
}

async fn get_json(url: &str) -> Value {
    let response = client().get(url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "GET {url}");
    response.json().await.unwrap()
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "switchboard-test", "version": "0"}}})
}

/// Follows `/authorize` redirects (a consent page would be submitted here) until one names the
/// redirect URI; returns that URL's query.
async fn authorize(url: url::Url) -> Vec<(String, String)> {
    let mut next = url;
    for _ in 0..10 {
        let response = client().get(next.clone()).send().await.unwrap();
        assert!(
            response.status().is_redirection(),
            "/authorize answered {} instead of redirecting: {}",
            response.status(),
            response.text().await.unwrap_or_default()
        );
        let location = response.headers()[header::LOCATION].to_str().unwrap();
        next = next.join(location).unwrap();
        if next.as_str().starts_with(REDIRECT_URI) {
            return next.query_pairs().into_owned().collect();
        }
    }
    panic!("/authorize did not reach the redirect URI within 10 redirects");
}

/// Registers a public client, authorizes for `resource` and exchanges the code; returns the
/// token endpoint's status and answer.
async fn authorization_code_flow(metadata: &Value, resource: &str) -> (StatusCode, Value) {
    let registration = client()
        .post(metadata["registration_endpoint"].as_str().unwrap())
        .json(&json!({
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "client_name": "switchboard-test",
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(registration.status(), StatusCode::CREATED);
    let registration: Value = registration.json().await.unwrap();
    let client_id = registration["client_id"].as_str().unwrap();

    let (verifier, challenge) = pkce_pair();
    let state = format!("{:032x}", rand::rng().random::<u128>());
    let mut authorize_url =
        url::Url::parse(metadata["authorization_endpoint"].as_str().unwrap()).unwrap();
    authorize_url
        .query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", REDIRECT_URI)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", &state)
        .append_pair("scope", "mcp:tools")
        .append_pair("resource", resource);
    let callback = authorize(authorize_url).await;
    let param = |name: &str| {
        callback
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    assert_eq!(param("state").as_deref(), Some(state.as_str()));
    let code = param("code").unwrap_or_else(|| panic!("no code in the callback: {callback:?}"));

    let form = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("code", &code)
        .append_pair("code_verifier", &verifier)
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", REDIRECT_URI)
        .append_pair("resource", resource)
        .finish();
    let response = client()
        .post(metadata["token_endpoint"].as_str().unwrap())
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

/// The local addresses (hex, as `/proc/net/tcp{,6}` spell them) of the sockets listening on `port`.
fn listening_addresses(port: u16) -> Vec<String> {
    let port = format!("{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .flat_map(|table| {
            std::fs::read_to_string(table)
                .unwrap_or_default()
                .lines()
                .skip(1)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (address, local_port) = fields.get(1)?.split_once(':')?;
            (local_port == port && fields.get(3) == Some(&"0A")).then(|| address.to_string())
        })
        .collect()
}

#[tokio::test]
async fn oauth_peer_discovery_headless_authorization_then_tools_list() {
    let server = OAuthProtectedServer::start();
    let mcp_url = server.mcp_url();
    // Both servers listen on loopback only (127.0.0.1 is 0100007F in the kernel's tables).
    for port in [server.mcp_port, server.auth_port] {
        assert_eq!(listening_addresses(port), ["0100007F"], "port {port}");
    }

    // Unauthenticated: 401 naming the Protected Resource Metadata.
    let (status, _, _, headers) = mcp_post(&mcp_url, None, None, initialize()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let challenge = headers[header::WWW_AUTHENTICATE].to_str().unwrap();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    let resource_metadata_url = auth_param(challenge, "resource_metadata")
        .unwrap_or_else(|| panic!("no resource_metadata in {challenge}"));

    // RFC 9728, then RFC 8414 at the authorization server it names.
    let resource_metadata = get_json(&resource_metadata_url).await;
    assert_eq!(resource_metadata["resource"], mcp_url.as_str());
    let issuer = server.authorization_server_url();
    assert_eq!(resource_metadata["authorization_servers"], json!([issuer]));
    assert_eq!(resource_metadata["scopes_supported"], json!(["mcp:tools"]));
    let metadata = get_json(&format!("{issuer}.well-known/oauth-authorization-server")).await;
    assert_eq!(metadata["issuer"], issuer.as_str());
    assert!(
        metadata["code_challenge_methods_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("S256"))
    );

    // A token asked for another resource is refused (`--oauth-strict`).
    let other_resource = format!("http://127.0.0.1:{}/mcp", server.mcp_port);
    let (status, answer) = authorization_code_flow(&metadata, &other_resource).await;
    assert!(!status.is_success(), "token for {other_resource}: {answer}");
    assert!(answer.get("access_token").is_none(), "{answer}");

    // The real flow: a bearer token for this server, one hour, no refresh token.
    let (status, token) = authorization_code_flow(&metadata, &mcp_url).await;
    assert_eq!(status, StatusCode::OK, "{token}");
    assert_eq!(token["token_type"], "bearer");
    assert_eq!(token["expires_in"], 3600);
    assert_eq!(token["scope"], "mcp:tools");
    assert!(token.get("refresh_token").is_none(), "{token}");
    let access_token = token["access_token"].as_str().unwrap();

    // An unknown (or expired) token is refused with 500, not 401: the example's token verifier
    // throws a plain error when introspection says inactive, which the SDK's bearer middleware
    // reports as a server error. A host cannot count on a 401 to start a refresh here.
    let (status, _, _, _) = mcp_post(&mcp_url, Some("not-a-token"), None, initialize()).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    // The right token opens a session and lists the tools.
    let (status, session, answer, _) =
        mcp_post(&mcp_url, Some(access_token), None, initialize()).await;
    assert_eq!(status, StatusCode::OK, "{answer:?}");
    let session = session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _, _) =
        mcp_post(&mcp_url, Some(access_token), Some(&session), initialized).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, _, answer, _) = mcp_post(&mcp_url, Some(access_token), Some(&session), list).await;
    assert_eq!(status, StatusCode::OK);
    let answer = answer.expect("a JSON-RPC answer");
    let names: Vec<&str> = answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"greet"), "{names:?}");
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "greet", "arguments": {"name": "Ada"}}});
    let (status, _, answer, _) = mcp_post(&mcp_url, Some(access_token), Some(&session), call).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        answer.unwrap()["result"]["content"][0]["text"],
        "Hello, Ada!"
    );
}
