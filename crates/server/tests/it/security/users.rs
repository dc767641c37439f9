//! `/api/users` and `POST /api/tokens {user_id}` through the real HTTP interface: an admin adds
//! people and issues tokens that act as them; input is refused naming the field; a member's
//! token never carries `admin`; users of other workspaces stay invisible.

use crate::support::{TestServer, error_of, other_workspace};
use reqwest::StatusCode;
use serde_json::{Value, json};
use switchboard_core::ScopeSet;

async fn post(server: &TestServer, token: &str, path: &str, body: Value) -> reqwest::Response {
    server
        .client
        .post(server.url(path))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn get_json(server: &TestServer, token: &str, path: &str) -> Value {
    let response = server.get(path, token).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "GET {path}");
    response.json().await.unwrap()
}

/// Creates a user and returns its JSON (asserting 201).
async fn create_user(server: &TestServer, body: Value) -> Value {
    let response = post(server, &server.owner_token, "/api/users", body).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    response.json().await.unwrap()
}

/// Issues a token for `user_id` and returns its plaintext (asserting 201).
async fn token_for(server: &TestServer, user_id: &str, scopes: &[&str]) -> String {
    let response = post(
        server,
        &server.owner_token,
        "/api/tokens",
        json!({"name": "laptop", "scopes": scopes, "user_id": user_id}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let created: Value = response.json().await.unwrap();
    assert_eq!(created["token"]["user_id"], user_id);
    created["plaintext"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_admin_adds_a_member_and_issues_a_token_that_acts_as_them() {
    let server = TestServer::start().await;
    let owner = get_json(&server, &server.owner_token, "/api/me").await;

    let bob = create_user(&server, json!({"name": "bob@example.com"})).await;
    assert_eq!(bob["name"], "bob@example.com");
    assert_eq!(bob["role"], "member", "member unless asked otherwise");
    let bob_id = bob["id"].as_str().unwrap();
    let carol = create_user(&server, json!({"name": "Carol", "role": "admin"})).await;
    assert_eq!(carol["role"], "admin");

    let users = get_json(&server, &server.owner_token, "/api/users").await;
    let listed: Vec<(&str, &str)> = users
        .as_array()
        .unwrap()
        .iter()
        .map(|user| {
            (
                user["name"].as_str().unwrap(),
                user["role"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        vec![
            ("owner", "owner"),
            ("bob@example.com", "member"),
            ("Carol", "admin")
        ]
    );
    assert_eq!(users[0]["id"], owner["user_id"]);
    assert!(
        users
            .as_array()
            .unwrap()
            .iter()
            .all(|user| user["internal"] == false),
        "people are not internal: {users}"
    );

    // A token for Bob acts as Bob, with the scopes asked for and no more.
    let bob_token = token_for(&server, bob_id, &["chat:use"]).await;
    let me = get_json(&server, &bob_token, "/api/me").await;
    assert_eq!(me["user_id"], bob_id);
    assert_eq!(me["scopes"], json!(["chat:use"]));
    let response = server.get("/api/users", &bob_token).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(error_of(response).await.0, "insufficient_scope");
    let response = post(
        &server,
        &bob_token,
        "/api/users",
        json!({"name": "mallory"}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);

    // Without user_id a token still acts as its creator; the list says whose each one is.
    let response = post(
        &server,
        &server.owner_token,
        "/api/tokens",
        json!({"name": "ci", "scopes": ["servers:read"]}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let own: Value = response.json().await.unwrap();
    assert_eq!(own["token"]["user_id"], owner["user_id"]);
    let tokens = get_json(&server, &server.owner_token, "/api/tokens").await;
    assert!(
        tokens
            .as_array()
            .unwrap()
            .iter()
            .any(|token| token["user_id"] == bob_id && token["name"] == "laptop"),
        "{tokens}"
    );

    // An admin user's token may carry `admin`, and then manages users itself.
    let carol_token = token_for(&server, carol["id"].as_str().unwrap(), &["admin"]).await;
    let seen_by_carol = get_json(&server, &carol_token, "/api/users").await;
    assert_eq!(seen_by_carol.as_array().unwrap().len(), 3);

    // Both the new user and the token issued for them are in the audit log.
    let audit = get_json(&server, &server.owner_token, "/api/audit?action=user.").await;
    let created: Vec<&Value> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["action"] == "user.created")
        .collect();
    assert_eq!(created.len(), 2, "{audit}");
    let audit = get_json(&server, &server.owner_token, "/api/audit?action=token.").await;
    assert!(
        audit["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|entry| entry["details"]["user_id"] == bob_id),
        "{audit}"
    );
}

#[tokio::test]
async fn user_and_token_input_is_refused_naming_the_field() {
    let server = TestServer::start().await;
    let refused = |body: Value| {
        let server = &server;
        async move {
            let response = post(server, &server.owner_token, "/api/users", body).await;
            let status = response.status();
            let (code, message) = error_of(response).await;
            (status, code, message)
        }
    };
    for (body, expected) in [
        (json!({}), "name: required"),
        (json!({"role": "admin"}), "name: required"),
        (json!({"name": ""}), "invalid name: must not be empty"),
        (
            json!({"name": "  bob"}),
            "invalid name: must not start or end with spaces",
        ),
        (
            json!({"name": "bob\nsmith"}),
            "invalid name: must not contain control characters",
        ),
        (
            json!({"name": "x".repeat(201)}),
            "invalid name: must be at most 200 characters",
        ),
        (
            json!({"name": "bob", "role": "owner"}),
            "role: must be member or admin",
        ),
        (
            json!({"name": "bob", "role": "root"}),
            "role: unknown role 'root' (expected member or admin)",
        ),
    ] {
        let (status, code, message) = refused(body.clone()).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"),
            "{body}: {message}"
        );
        assert!(message.starts_with(expected), "{body}: {message}");
    }
    let (status, _, message) = refused(json!({"name": "bob", "password": "x"})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(message.contains("unknown field `password`"), "{message}");
    assert_eq!(
        get_json(&server, &server.owner_token, "/api/users")
            .await
            .as_array()
            .unwrap()
            .len(),
        1,
        "nothing refused was stored"
    );

    // Names are unique in the workspace.
    let bob = create_user(&server, json!({"name": "bob"})).await;
    let (status, code, message) = refused(json!({"name": "bob", "role": "admin"})).await;
    assert_eq!((status, code.as_str()), (StatusCode::CONFLICT, "conflict"));
    assert_eq!(
        message,
        "a user named 'bob' already exists in this workspace"
    );

    // A member's token may not carry `admin`; a token needs a user of this workspace.
    let token_refused = |body: Value| {
        let server = &server;
        async move {
            let response = post(server, &server.owner_token, "/api/tokens", body).await;
            let status = response.status();
            (status, error_of(response).await.1)
        }
    };
    let (status, message) = token_refused(
        json!({"name": "bob-admin", "scopes": ["chat:use", "admin"], "user_id": bob["id"]}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        message,
        "invalid scopes: user 'bob' is a member; only owners and admins may hold the `admin` scope"
    );
    let (other_workspace_id, other_token) =
        other_workspace(&server.store, "globex", ScopeSet::all()).await;
    let stranger = server
        .store
        .list_users(&other_workspace_id)
        .await
        .unwrap()
        .remove(0);
    for user_id in ["no-such-user", stranger.id.as_str()] {
        let (status, message) =
            token_refused(json!({"name": "ghost", "scopes": ["chat:use"], "user_id": user_id}))
                .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            message,
            format!("user_id: no user with id '{user_id}' in this workspace (see GET /api/users)")
        );
    }

    // The other workspace neither lists Bob nor can issue him a token.
    let theirs = get_json(&server, &other_token, "/api/users").await;
    assert_eq!(theirs.as_array().unwrap().len(), 1);
    assert!(!theirs.to_string().contains("bob"), "{theirs}");
    let response = post(
        &server,
        &other_token,
        "/api/tokens",
        json!({"name": "steal", "scopes": ["chat:use"], "user_id": bob["id"]}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
}
