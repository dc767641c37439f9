//! `/api/me/tokens`: a member creates, lists and revokes their own tokens through the real
//! API; a token carries at most the caller's scopes (named when refused), a revoked one stops
//! at its next request, and other people's tokens are neither listed nor revocable (404). Each
//! creation and revocation is audited.

use crate::support::{TestServer, error_of, json_of, person_with_token, send};
use serde_json::json;
use switchboard_store::{DEFAULT_WORKSPACE_NAME, UserRole};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_manages_their_own_tokens_within_their_scopes() {
    let server = TestServer::start().await;
    let owner = server.owner_token.clone();
    let workspace = server
        .store
        .find_workspace_by_name(DEFAULT_WORKSPACE_NAME)
        .await
        .unwrap()
        .unwrap()
        .id;
    let (bob_id, bob) = person_with_token(
        &server.store,
        &workspace,
        "bob",
        UserRole::Member,
        "chat:use servers:read",
    )
    .await;

    // Beyond the caller's own scopes: refused, naming them.
    let (code, message) = error_of(
        send(
            &server,
            "POST",
            "/api/me/tokens",
            &bob,
            Some(json!({
                "name": "too wide", "scopes": ["servers:read", "servers:write", "admin"],
            })),
        )
        .await,
    )
    .await;
    assert_eq!(code, "invalid_request", "{message}");
    assert!(message.contains("servers:write, admin"), "{message}");

    let issued = json_of(
        send(
            &server,
            "POST",
            "/api/me/tokens",
            &bob,
            Some(json!({
                "name": "laptop", "scopes": ["servers:read"],
            })),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(issued["token"]["user_id"], bob_id.to_string());
    let laptop = issued["plaintext"].as_str().unwrap().to_owned();
    let laptop_id = issued["token"]["id"].as_str().unwrap().to_owned();
    // The new token works, with its own scopes only.
    let me = json_of(send(&server, "GET", "/api/me", &laptop, None).await, 200).await;
    assert_eq!(me["scopes"], json!(["servers:read"]));

    // Bob sees his tokens, not the owner's; the owner's are not his to revoke.
    let listed = json_of(
        send(&server, "GET", "/api/me/tokens", &bob, None).await,
        200,
    )
    .await;
    let mut names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|token| token["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["bob's token", "laptop"]);
    let owners = json_of(
        send(&server, "GET", "/api/me/tokens", &owner, None).await,
        200,
    )
    .await;
    let owner_token_id = owners[0]["id"].as_str().unwrap().to_owned();
    let foreign = send(
        &server,
        "DELETE",
        &format!("/api/me/tokens/{owner_token_id}"),
        &bob,
        None,
    )
    .await;
    assert_eq!(foreign.status(), 404);
    assert_eq!(
        send(&server, "GET", "/api/me", &owner, None).await.status(),
        200
    );

    // Revoked: refused at its next request.
    let revoked = json_of(
        send(
            &server,
            "DELETE",
            &format!("/api/me/tokens/{laptop_id}"),
            &bob,
            None,
        )
        .await,
        200,
    )
    .await;
    assert!(revoked["revoked_at"].is_string(), "{revoked}");
    assert_eq!(
        send(&server, "GET", "/api/me", &laptop, None)
            .await
            .status(),
        401
    );

    // Both changes are in the audit log, as bob's.
    let audit = json_of(
        send(
            &server,
            "GET",
            "/api/audit?action=token.created",
            &owner,
            None,
        )
        .await,
        200,
    )
    .await;
    assert!(
        audit.to_string().contains(&laptop_id),
        "token.created is audited: {audit}"
    );
    let audit = json_of(
        send(
            &server,
            "GET",
            "/api/audit?action=token.revoked",
            &owner,
            None,
        )
        .await,
        200,
    )
    .await;
    assert!(audit.to_string().contains(&laptop_id), "{audit}");
}
