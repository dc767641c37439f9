//! The dumb L7 proxy of the comparison: an HTTP reverse proxy (axum in front, a pooled
//! reqwest client behind) that forwards every request to one upstream as it is — method, path,
//! headers but the hop-by-hop ones, body — and streams the answer back (Streamable HTTP
//! answers are SSE). No auth, no policy, no records: what any gateway costs at least.

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, StatusCode, header};
use axum::response::Response;
use std::sync::Arc;

/// Largest request body forwarded (the bench's are a few hundred bytes).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

struct Proxy {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    upstream: String,
    client: reqwest::Client,
}

/// Starts the proxy on a loopback port in front of `upstream`; returns its base URL.
pub async fn start_proxy(upstream: String) -> String {
    let proxy = Arc::new(Proxy {
        upstream,
        client: reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .unwrap(),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = Router::new().fallback(forward).with_state(proxy);
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{address}")
}

/// Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1), and `Host`
/// (the upstream's is set from its URL).
fn hop_by_hop(name: &HeaderName) -> bool {
    [
        header::CONNECTION,
        header::HOST,
        header::PROXY_AUTHENTICATE,
        header::PROXY_AUTHORIZATION,
        header::TE,
        header::TRAILER,
        header::TRANSFER_ENCODING,
        header::UPGRADE,
    ]
    .contains(name)
        || name.as_str() == "keep-alive"
}

async fn forward(State(proxy): State<Arc<Proxy>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return status(StatusCode::PAYLOAD_TOO_LARGE);
    };
    let path = parts.uri.path_and_query().map_or("/", |path| path.as_str());
    let mut upstream = proxy
        .client
        .request(parts.method, format!("{}{path}", proxy.upstream))
        .body(body);
    for (name, value) in &parts.headers {
        if !hop_by_hop(name) {
            upstream = upstream.header(name, value);
        }
    }
    let Ok(answer) = upstream.send().await else {
        return status(StatusCode::BAD_GATEWAY);
    };
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if !hop_by_hop(name) && name != header::CONTENT_LENGTH {
            response = response.header(name, value);
        }
    }
    response
        .body(Body::from_stream(answer.bytes_stream()))
        .unwrap_or_else(|_| status(StatusCode::BAD_GATEWAY))
}

fn status(code: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = code;
    response
}
