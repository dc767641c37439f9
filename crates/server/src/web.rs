//! The browser UI: the files under `web/` embedded into the binary at compile time (so `cargo
//! build` alone yields a server with its UI, no Node or CDN at run time) and served at `/` and
//! `/assets/{version}/…`. `version` is a hash of every embedded file, so asset URLs change
//! whenever any asset does: assets are cached as immutable, `index.html` is revalidated (ETag),
//! and ES module imports — relative, no bundler — resolve under the same versioned prefix.
//! Responses carry a strict Content-Security-Policy (scripts, styles and connections from this
//! origin only) as a second line of defence behind the UI's own escaping. This module serves
//! files only; it must not know any API route.

use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use axum::routing::get;
use rust_embed::Embed;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;
use tower_http::compression::CompressionLayer;

#[derive(Embed)]
#[folder = "../../web/"]
struct WebFiles;

/// Where `index.html` says the versioned asset prefix goes.
const ASSET_BASE_PLACEHOLDER: &str = "__ASSET_BASE__";

const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; media-src data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const IMMUTABLE: &str = "public, max-age=31536000, immutable";
const REVALIDATE: &str = "no-cache";

/// `/` (the UI shell) and `/assets/{version}/{*path}`, gzip-compressed when the client accepts
/// it. The compression layer wraps only these routes: SSE and API answers are left alone.
pub fn router<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    Router::new()
        .route("/", get(index))
        .route("/index.html", get(index))
        .route("/assets/{version}/{*path}", get(asset))
        .layer(CompressionLayer::new())
}

/// [`router`], whose pages may frame `apps_origin` (MCP Apps' sandbox pages) and nothing else:
/// `frame-src` added to the policy.
pub fn router_framing<S>(apps_origin: &str) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let policy = HeaderValue::from_str(&format!(
        "{CONTENT_SECURITY_POLICY}; frame-src {apps_origin}"
    ))
    .ok();
    router().layer(axum::middleware::map_response(
        move |mut response: Response<Body>| {
            let policy = policy.clone();
            async move {
                if let Some(policy) = policy
                    && response
                        .headers()
                        .contains_key(header::CONTENT_SECURITY_POLICY)
                {
                    response
                        .headers_mut()
                        .insert(header::CONTENT_SECURITY_POLICY, policy);
                }
                response
            }
        },
    ))
}

/// The hash naming this build's assets (first 12 hex digits of a SHA-256 over every embedded
/// file's path and content hash).
pub fn asset_version() -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| {
        let mut paths: Vec<_> = WebFiles::iter().collect();
        paths.sort();
        let mut hasher = Sha256::new();
        for path in paths {
            if let Some(file) = WebFiles::get(&path) {
                hasher.update(path.as_bytes());
                hasher.update(file.metadata.sha256_hash());
            }
        }
        hex::encode(&hasher.finalize()[..6])
    })
}

fn index_html() -> &'static str {
    static INDEX: OnceLock<String> = OnceLock::new();
    INDEX.get_or_init(|| html_with_asset_base("index.html"))
}

/// An embedded HTML file with its asset prefix filled in.
fn html_with_asset_base(name: &str) -> String {
    let template = WebFiles::get(name)
        .map(|file| String::from_utf8_lossy(&file.data).into_owned())
        .unwrap_or_default();
    template.replace(
        ASSET_BASE_PLACEHOLDER,
        &format!("/assets/{}", asset_version()),
    )
}

/// Another page of `web/` (an `.html` at its top), with the UI's headers; whoever mounts it
/// chooses the URL (e.g. the API reference at `/api/docs`).
pub fn page(name: &str, request_headers: &HeaderMap) -> Response<Body> {
    if WebFiles::get(name).is_none() {
        return not_found();
    }
    let etag = format!("\"{name}-{}\"", asset_version());
    respond(
        request_headers,
        &etag,
        "text/html; charset=utf-8",
        REVALIDATE,
        Body::from(html_with_asset_base(name)),
    )
}

async fn index(request_headers: HeaderMap) -> Response<Body> {
    let etag = format!("\"index-{}\"", asset_version());
    respond(
        &request_headers,
        &etag,
        "text/html; charset=utf-8",
        REVALIDATE,
        Body::from(index_html()),
    )
}

async fn asset(
    Path((version, path)): Path<(String, String)>,
    request_headers: HeaderMap,
) -> Response<Body> {
    let Some(file) = WebFiles::get(&format!("assets/{path}")) else {
        return not_found();
    };
    let etag = format!("\"{}\"", hex::encode(&file.metadata.sha256_hash()[..12]));
    // An old page asking for an old version gets today's file, but must not cache it forever.
    let cache_control = if version == asset_version() {
        IMMUTABLE
    } else {
        REVALIDATE
    };
    respond(
        &request_headers,
        &etag,
        content_type_for(&path),
        cache_control,
        Body::from(file.data.into_owned()),
    )
}

fn respond(
    request_headers: &HeaderMap,
    etag: &str,
    content_type: &'static str,
    cache_control: &'static str,
    body: Body,
) -> Response<Body> {
    let not_modified = request_headers
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| etag_matches(value, etag));
    let mut response = if not_modified {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        response
    } else {
        let mut response = Response::new(body);
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        response
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// `If-None-Match` may list several tags, weak or strong, or `*`.
fn etag_matches(if_none_match: &str, etag: &str) -> bool {
    if_none_match
        .split(',')
        .map(|candidate| candidate.trim().trim_start_matches("W/"))
        .any(|candidate| candidate == "*" || candidate == etag)
}

fn not_found() -> Response<Body> {
    let mut response = Response::new(Body::from("no such file in the web UI"));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

fn content_type_for(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, extension)| extension) {
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("html") => "text/html; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("json") => "application/json",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
#[path = "web_tests.rs"]
mod tests;
