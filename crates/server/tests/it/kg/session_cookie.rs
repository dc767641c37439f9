//! The Knowledge graph page's reads with a single sign-on session cookie instead of a token:
//! `/api/kg` accepts the cookie from our own pages only (cross-site refused, changes need the
//! CSRF header), acts with the person's role, and stops at once when the person is
//! deactivated. `/mcp` stays bearer-only.

use crate::support::{TestServer, call, error_of};
use chrono::{Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use switchboard_store::UserRole;

/// A member of the default workspace with a session: (their id, the `Cookie` header value).
async fn signed_in_member(server: &TestServer) -> (String, String) {
    let workspace = server
        .store
        .find_workspace_by_name("default")
        .await
        .unwrap()
        .expect("the default workspace");
    let user = server
        .store
        .create_user(&workspace.id, "dora@example.com", UserRole::Member)
        .await
        .unwrap();
    let session = server
        .store
        .create_web_session(
            &workspace.id,
            &user.id,
            Utc::now() + Duration::hours(1),
            None,
        )
        .await
        .unwrap();
    (
        user.id.to_string(),
        format!("sb_session={}", session.secret),
    )
}

/// A request with `cookie` from our own origin, and the extra `headers`.
fn with_cookie(
    server: &TestServer,
    method: Method,
    path: &str,
    cookie: &str,
    headers: &[(&str, &str)],
) -> reqwest::RequestBuilder {
    let mut request = server
        .client
        .request(method, server.url(path))
        .header("cookie", cookie)
        .header("origin", format!("http://{}", server.address));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request
}

fn schema_with(type_name: &str) -> Value {
    json!({"schema": {"object_types": [{"name": type_name, "properties": [{"name": "title", "type": "string"}]}],
                      "relationship_types": []},
           "message": format!("{type_name} added")})
}

#[tokio::test]
async fn the_kg_page_reads_with_the_session_cookie_from_our_own_pages_only() {
    let server = TestServer::start().await;
    let (dora, cookie) = signed_in_member(&server).await;
    let changed = call(
        &server,
        &server.owner_token,
        Method::PUT,
        "/api/kg/schema",
        Some(schema_with("Memo")),
    )
    .await;
    assert_eq!(changed.status(), StatusCode::OK);

    // The page's reads, with the cookie and no token.
    let schema = with_cookie(&server, Method::GET, "/api/kg/schema", &cookie, &[])
        .send()
        .await
        .unwrap();
    assert_eq!(schema.status(), StatusCode::OK);
    let schema: Value = schema.json().await.unwrap();
    assert_eq!(schema["schema"]["object_types"][0]["name"], "Memo");
    let changelog = with_cookie(
        &server,
        Method::GET,
        "/api/kg/changelog?limit=5",
        &cookie,
        &[],
    )
    .send()
    .await
    .unwrap();
    assert_eq!(changelog.status(), StatusCode::OK);
    let changelog: Value = changelog.json().await.unwrap();
    assert_eq!(changelog["current_version"], schema["version"]["version"]);
    assert_eq!(changelog["changes"][0]["type_name"], "Memo");

    // Another site's page: refused, whether the browser says so or the Origin does.
    let cross_site = with_cookie(
        &server,
        Method::GET,
        "/api/kg/changelog",
        &cookie,
        &[("sec-fetch-site", "cross-site")],
    )
    .send()
    .await
    .unwrap();
    assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);
    let foreign = server
        .client
        .get(server.url("/api/kg/schema"))
        .header("cookie", &cookie)
        .header("origin", "https://attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);

    // A change with the cookie needs the CSRF header; with it, the person's role decides.
    let unmarked = with_cookie(&server, Method::PUT, "/api/kg/schema", &cookie, &[])
        .json(&schema_with("Unmarked"))
        .send()
        .await
        .unwrap();
    assert_eq!(unmarked.status(), StatusCode::FORBIDDEN);
    let (_, message) = error_of(unmarked).await;
    assert!(message.contains("X-Switchboard-CSRF"), "{message}");
    let marked = with_cookie(
        &server,
        Method::PUT,
        "/api/kg/schema",
        &cookie,
        &[("x-switchboard-csrf", "1")],
    )
    .json(&schema_with("Marked"))
    .send()
    .await
    .unwrap();
    assert_eq!(marked.status(), StatusCode::OK, "a member holds data:write");

    // `/mcp/rpc` takes bearer tokens only: the cookie is no credential there.
    let rpc = server
        .client
        .post(server.url("/mcp/rpc"))
        .header("cookie", &cookie)
        .header("x-switchboard-csrf", "1")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(rpc.status(), StatusCode::UNAUTHORIZED);

    // Deactivated: the very next read is refused.
    let path = format!("/api/people/{dora}");
    let deactivated = call(
        &server,
        &server.owner_token,
        Method::PATCH,
        &path,
        Some(json!({"active": false})),
    )
    .await;
    assert_eq!(deactivated.status(), StatusCode::OK);
    let after = with_cookie(&server, Method::GET, "/api/kg/changelog", &cookie, &[])
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_changelog_is_newest_first_and_its_limit_is_checked() {
    let server = TestServer::start().await;
    let owner = server.owner_token.clone();
    for name in ["First", "Second"] {
        let response = call(
            &server,
            &owner,
            Method::PUT,
            "/api/kg/schema",
            Some(schema_with(name)),
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    let answer: Value = call(
        &server,
        &owner,
        Method::GET,
        "/api/kg/changelog?limit=1",
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(answer["changes"].as_array().unwrap().len(), 1);
    assert!(answer["total"].as_u64().unwrap() >= 2, "{answer}");
    assert_eq!(answer["changes"][0]["version"], answer["current_version"]);
    for bad in ["limit=0", "limit=501"] {
        let response = call(
            &server,
            &owner,
            Method::GET,
            &format!("/api/kg/changelog?{bad}"),
            None,
        )
        .await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
    }
}
