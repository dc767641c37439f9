//! Tests of the embedded UI routes through the router itself (no socket needed).

use super::*;
use axum::http::Request;
use tower::ServiceExt;

async fn get_with(path: &str, headers: &[(&str, &str)]) -> Response<Body> {
    let mut request = Request::builder().uri(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    router::<()>()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap()
}

async fn body_text(response: Response<Body>) -> String {
    let bytes = axum::body::to_bytes(response.into_body(), 4 * 1024 * 1024)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[tokio::test]
async fn index_points_at_the_versioned_assets_and_is_revalidated() {
    let response = get_with("/", &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[header::CACHE_CONTROL], "no-cache");
    assert!(
        response.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .contains("script-src 'self'")
    );
    let html = body_text(response).await;
    assert!(html.contains(&format!("/assets/{}/app.js", asset_version())));
    assert!(!html.contains(ASSET_BASE_PLACEHOLDER));
}

#[tokio::test]
async fn current_assets_are_immutable_and_typed() {
    let response = get_with(&format!("/assets/{}/app.js", asset_version()), &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/javascript; charset=utf-8"
    );
    assert_eq!(response.headers()[header::CACHE_CONTROL], IMMUTABLE);
    assert!(body_text(response).await.contains("import"));
    let css = get_with(&format!("/assets/{}/base.css", asset_version()), &[]).await;
    assert_eq!(
        css.headers()[header::CONTENT_TYPE],
        "text/css; charset=utf-8"
    );
}

#[tokio::test]
async fn a_stale_version_is_served_but_not_cached_forever() {
    let response = get_with("/assets/000000000000/app.js", &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[header::CACHE_CONTROL], "no-cache");
}

#[tokio::test]
async fn matching_etag_answers_not_modified_without_a_body() {
    let first = get_with(&format!("/assets/{}/base.css", asset_version()), &[]).await;
    let etag = first.headers()[header::ETAG].to_str().unwrap().to_owned();
    let second = get_with(
        &format!("/assets/{}/base.css", asset_version()),
        &[("if-none-match", &format!("W/\"nope\", {etag}"))],
    )
    .await;
    assert_eq!(second.status(), StatusCode::NOT_MODIFIED);
    assert!(body_text(second).await.is_empty());
}

#[tokio::test]
async fn unknown_and_traversing_paths_are_not_found() {
    for path in [
        "/assets/v/nope.js",
        "/assets/v/../index.html",
        "/assets/v/%2e%2e/Cargo.toml",
        "/assets/v/..%2F..%2FCargo.toml",
    ] {
        let response = get_with(path, &[]).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
    }
}

#[tokio::test]
async fn text_assets_are_gzipped_for_clients_that_accept_it() {
    let response = get_with(
        &format!("/assets/{}/lib/markdown.js", asset_version()),
        &[("accept-encoding", "gzip")],
    )
    .await;
    assert_eq!(response.headers()[header::CONTENT_ENCODING], "gzip");
}

#[test]
fn etag_matching_handles_lists_weak_tags_and_star() {
    assert!(etag_matches("\"a\", \"b\"", "\"b\""));
    assert!(etag_matches("W/\"b\"", "\"b\""));
    assert!(etag_matches("*", "\"b\""));
    assert!(!etag_matches("\"a\"", "\"b\""));
}
