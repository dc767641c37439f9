//! The URL policy on the wire: the address checked is the resolved one (a name that resolves to
//! loopback is refused even though the string looks harmless), literal and redirect targets
//! are checked, and a legacy SSE `endpoint` must stay on the SSE URL's origin.

use crate::support::{caller, everything_http, init_tracing, quick_config, remote_server};
use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use std::collections::HashMap;
use std::sync::Arc;
use switchboard_core::TransportKind;
use switchboard_mcp_client::url_policy::StaticHostLookup;
use switchboard_mcp_client::{McpClient, UrlPolicy, UrlPolicyConfig};

fn client_with(config: UrlPolicyConfig, hosts: &[(&str, &str)]) -> McpClient {
    init_tracing();
    let table = StaticHostLookup {
        hosts: hosts
            .iter()
            .map(|(name, address)| ((*name).to_owned(), vec![address.parse().unwrap()]))
            .collect::<HashMap<_, _>>(),
    };
    McpClient::builder(quick_config())
        .url_policy(UrlPolicy::with_lookup(config, Arc::new(table)))
        .build()
        .unwrap()
}

fn strict() -> UrlPolicyConfig {
    UrlPolicyConfig {
        allow_loopback: false,
        ..UrlPolicyConfig::default()
    }
}

async fn serve(router: Router) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resolved_address_is_what_gets_checked() {
    let peer = everything_http();
    let url = format!("http://mcp.example.test:{}/mcp", peer.port);
    let server = remote_server("rebind", TransportKind::StreamableHttp, &url);

    let refused = client_with(strict(), &[("mcp.example.test", "127.0.0.1")]);
    let error = refused
        .fetch_capabilities(&server, &caller("hal"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "url_policy", "{error}");
    assert!(error.to_string().contains("loopback"), "{error}");

    // The same name through the same resolver reaches the server when loopback is allowed:
    // the connection really uses the resolver's (checked) answer.
    let allowed = client_with(
        UrlPolicyConfig::default(),
        &[("mcp.example.test", "127.0.0.1")],
    );
    let snapshot = allowed
        .fetch_capabilities(&server, &caller("hal"))
        .await
        .unwrap();
    assert!(!snapshot.tools.is_empty());
    allowed.shutdown().await;

    for literal in [
        format!("http://2130706433:{}/mcp", peer.port),
        format!("http://[::ffff:127.0.0.1]:{}/mcp", peer.port),
    ] {
        let server = remote_server("literal", TransportKind::StreamableHttp, &literal);
        let error = refused
            .fetch_capabilities(&server, &caller("hal"))
            .await
            .unwrap_err();
        assert_eq!(error.code(), "url_policy", "{literal}: {error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_to_guarded_addresses_are_refused() {
    let router = Router::new().route(
        "/mcp",
        post(|| async {
            (
                StatusCode::TEMPORARY_REDIRECT,
                [(header::LOCATION, "http://169.254.169.254/latest/meta-data")],
            )
        }),
    );
    let port = serve(router).await;
    let client = client_with(UrlPolicyConfig::default(), &[]);
    let server = remote_server(
        "redirects",
        TransportKind::StreamableHttp,
        &format!("http://127.0.0.1:{port}/mcp"),
    );
    let error = client
        .fetch_capabilities(&server, &caller("hal"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "url_policy", "{error}");
    assert!(error.to_string().contains("cloud metadata"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_sse_endpoint_on_another_origin_is_refused() {
    async fn stream(endpoint: &'static str) -> impl IntoResponse {
        let body = format!("event: endpoint\ndata: {endpoint}\n\n");
        // Keep the stream open like a real server would.
        let events = futures::stream::once(async move { Ok::<_, std::io::Error>(body) })
            .chain(futures::stream::pending());
        (
            [(header::CONTENT_TYPE, "text/event-stream")],
            axum::body::Body::from_stream(events),
        )
    }
    use futures::StreamExt;
    let router = Router::new()
        .route(
            "/elsewhere",
            get(|| stream("http://attacker.example/messages")),
        )
        .route(
            "/metadata",
            get(|| stream("http://169.254.169.254/messages")),
        );
    let port = serve(router).await;
    let client = client_with(UrlPolicyConfig::default(), &[]);
    for (path, expected) in [
        ("elsewhere", "outside the SSE URL"),
        ("metadata", "outside the SSE URL"),
    ] {
        let server = remote_server(
            "sse",
            TransportKind::Sse,
            &format!("http://127.0.0.1:{port}/{path}"),
        );
        let error = client
            .fetch_capabilities(&server, &caller("hal"))
            .await
            .unwrap_err();
        assert!(error.to_string().contains(expected), "{path}: {error}");
    }
    // Same origin, but a guarded address: the policy applies to the endpoint as well.
    let strict_client = client_with(strict(), &[]);
    let server = remote_server(
        "sse",
        TransportKind::Sse,
        &format!("http://127.0.0.1:{port}/elsewhere"),
    );
    let error = strict_client
        .fetch_capabilities(&server, &caller("hal"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "url_policy");
}

/// Every request a canary listener receives, as text.
async fn canary() -> (u16, Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let recorded = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let recorded = recorded.clone();
            tokio::spawn(async move {
                let mut buffer = vec![0_u8; 16 * 1024];
                let read = tcp.read(&mut buffer).await.unwrap_or(0);
                recorded
                    .lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&buffer[..read]).into_owned());
                let _ = tcp
                    .write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n")
                    .await;
            });
        }
    });
    (port, seen)
}

/// A server's configured headers (an API key under its own name) and bearer token must never
/// reach another origin: a cross-origin redirect is not followed, and no `Referer` is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_origin_redirects_are_not_followed_so_secret_headers_stay_home() {
    let (canary_port, seen) = canary().await;
    let router = Router::new().route(
        "/mcp",
        post(move || async move {
            (
                StatusCode::TEMPORARY_REDIRECT,
                [(
                    header::LOCATION,
                    format!("http://127.0.0.1:{canary_port}/collect?from=redirect"),
                )],
            )
        }),
    );
    let port = serve(router).await;
    let client = client_with(UrlPolicyConfig::default(), &[]);
    let mut server = remote_server(
        "redirects",
        TransportKind::StreamableHttp,
        &format!("http://127.0.0.1:{port}/mcp?tenant=secret-query"),
    );
    if let switchboard_mcp_client::UpstreamEndpoint::Remote(remote) = &mut server.endpoint {
        remote
            .headers
            .insert("X-Api-Key".into(), "canary-header-secret".into());
        remote.api_key = Some("canary-bearer-secret".into());
    }
    let error = client
        .fetch_capabilities(&server, &caller("hal"))
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("another origin"), "{message}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let seen = seen.lock().unwrap().clone();
    assert!(seen.is_empty(), "the canary was reached: {seen:?}");
}
