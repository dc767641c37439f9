//! API tokens: issuing, authenticating, listing, revoking, expiry.

use crate::fixtures::{new_token, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use chrono::{TimeDelta, Utc};
use switchboard_core::{Scope, TokenId, UserId};
use switchboard_store::{NewToken, StoreError};

store_test!(
    issued_token_authenticates_as_its_user_with_its_scopes,
    unknown_and_malformed_tokens_are_refused,
    revoked_token_stops_authenticating,
    expired_token_stops_authenticating,
    token_creation_validates_its_input,
    imported_token_authenticates_and_must_be_unique,
    listing_shows_prefixes_never_secrets,
);

async fn issued_token_authenticates_as_its_user_with_its_scopes(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let issued = store
        .create_token(&workspace.id, new_token(&owner, "chat:use servers:read"))
        .await
        .unwrap();
    assert!(issued.plaintext.expose().starts_with("sb_"));
    let principal = store
        .authenticate(issued.plaintext.expose())
        .await
        .unwrap()
        .expect("token authenticates");
    assert_eq!(principal.workspace_id, workspace.id);
    assert_eq!(principal.user_id, owner.id);
    assert_eq!(principal.token_id, Some(issued.record.id.clone()));
    assert!(principal.allows(Scope::ChatUse));
    assert!(principal.allows(Scope::ServersRead));
    assert!(!principal.allows(Scope::ServersWrite));
    assert!(!principal.is_admin());
    let stored = store
        .get_token(&workspace.id, &issued.record.id)
        .await
        .unwrap();
    assert!(
        stored.last_used_at.is_some(),
        "authentication records the use"
    );
}

async fn unknown_and_malformed_tokens_are_refused(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let issued = store
        .create_token(&workspace.id, new_token(&owner, "admin"))
        .await
        .unwrap();
    let plaintext = issued.plaintext.expose();
    let last = if plaintext.ends_with('0') { '1' } else { '0' };
    let almost = format!("{}{last}", &plaintext[..plaintext.len() - 1]);
    for candidate in [
        "",
        "sb_",
        "Bearer x",
        almost.as_str(),
        &plaintext.to_uppercase(),
    ] {
        assert_eq!(
            store.authenticate(candidate).await.unwrap(),
            None,
            "{candidate}"
        );
    }
    assert_eq!(store.authenticate(&"x".repeat(5000)).await.unwrap(), None);
}

async fn revoked_token_stops_authenticating(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let issued = store
        .create_token(&workspace.id, new_token(&owner, "chat:use"))
        .await
        .unwrap();
    let other = store
        .create_token(&workspace.id, new_token(&owner, "chat:use"))
        .await
        .unwrap();
    let revoked = store
        .revoke_token(&workspace.id, &issued.record.id)
        .await
        .unwrap();
    let revoked_at = revoked.revoked_at.expect("revocation time recorded");
    assert_eq!(
        store.authenticate(issued.plaintext.expose()).await.unwrap(),
        None
    );
    // Other tokens are unaffected; revoking again keeps the first time.
    assert!(
        store
            .authenticate(other.plaintext.expose())
            .await
            .unwrap()
            .is_some()
    );
    let again = store
        .revoke_token(&workspace.id, &issued.record.id)
        .await
        .unwrap();
    assert_eq!(again.revoked_at, Some(revoked_at));
    let missing = store
        .revoke_token(&workspace.id, &TokenId::generate())
        .await
        .unwrap_err();
    assert!(
        matches!(missing, StoreError::NotFound { entity: "token" }),
        "{missing:?}"
    );
}

async fn expired_token_stops_authenticating(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let expires_at = Utc::now() + TimeDelta::hours(1);
    let issued = store
        .create_token(
            &workspace.id,
            NewToken {
                expires_at: Some(expires_at),
                ..new_token(&owner, "data:read")
            },
        )
        .await
        .unwrap();
    let plaintext = issued.plaintext.expose();
    let before = expires_at - TimeDelta::seconds(1);
    let after = expires_at + TimeDelta::seconds(1);
    assert!(
        store
            .authenticate_at(plaintext, before)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        store.authenticate_at(plaintext, expires_at).await.unwrap(),
        None
    );
    assert_eq!(store.authenticate_at(plaintext, after).await.unwrap(), None);
    assert!(store.authenticate(plaintext).await.unwrap().is_some());
    let record = store
        .get_token(&workspace.id, &issued.record.id)
        .await
        .unwrap();
    assert!(!record.is_usable_at(after));
}

async fn token_creation_validates_its_input(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let past = NewToken {
        expires_at: Some(Utc::now() - TimeDelta::minutes(1)),
        ..new_token(&owner, "chat:use")
    };
    let error = store.create_token(&workspace.id, past).await.unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::InvalidInput {
                field: "expires_at",
                ..
            }
        ),
        "{error:?}"
    );
    let no_scopes = NewToken {
        scopes: Default::default(),
        ..new_token(&owner, "chat:use")
    };
    let error = store
        .create_token(&workspace.id, no_scopes)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::InvalidInput {
                field: "scopes",
                ..
            }
        ),
        "{error:?}"
    );
    let stranger = NewToken {
        user_id: UserId::generate(),
        ..new_token(&owner, "chat:use")
    };
    let error = store
        .create_token(&workspace.id, stranger)
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::NotFound { entity: "user" }),
        "{error:?}"
    );
    // A user of another workspace cannot be given a token here.
    let (other_workspace, _) = workspace_with_owner(store, "globex").await;
    let error = store
        .create_token(&other_workspace.id, new_token(&owner, "chat:use"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::NotFound { entity: "user" }),
        "{error:?}"
    );
}

async fn imported_token_authenticates_and_must_be_unique(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let chosen = "operator-chosen-token-0123";
    let record = store
        .import_token(&workspace.id, new_token(&owner, "admin"), chosen)
        .await
        .unwrap();
    assert_eq!(record.display_prefix, "operat");
    let principal = store.authenticate(chosen).await.unwrap().unwrap();
    assert!(principal.is_admin());
    let duplicate = store
        .import_token(&workspace.id, new_token(&owner, "admin"), chosen)
        .await
        .unwrap_err();
    assert!(
        matches!(
            duplicate,
            StoreError::UniqueViolation {
                entity: "token",
                field: "token"
            }
        ),
        "{duplicate:?}"
    );
    let short = store
        .import_token(&workspace.id, new_token(&owner, "admin"), "short")
        .await
        .unwrap_err();
    assert!(
        matches!(short, StoreError::InvalidInput { field: "token", .. }),
        "{short:?}"
    );
}

async fn listing_shows_prefixes_never_secrets(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let first = store
        .create_token(&workspace.id, new_token(&owner, "chat:use"))
        .await
        .unwrap();
    let second = store
        .create_token(&workspace.id, new_token(&owner, "admin"))
        .await
        .unwrap();
    let listed = store.list_tokens(&workspace.id).await.unwrap();
    assert_eq!(listed, vec![first.record.clone(), second.record.clone()]);
    for (record, issued) in listed.iter().zip([&first, &second]) {
        assert!(
            issued
                .plaintext
                .expose()
                .starts_with(&record.display_prefix)
        );
        assert_eq!(record.display_prefix.len(), 12);
        let debug = format!("{record:?}");
        assert!(!debug.contains(&issued.plaintext.expose()[12..]), "{debug}");
    }
}
