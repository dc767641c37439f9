//! Single sign-on state: sign-ins in progress taken once, people linked by (issuer, subject),
//! and browser sessions checked with their person's current role and active flag.

use crate::fixtures::workspace_with_owner;
use crate::harness::{TestStore, store_test};
use chrono::{TimeDelta, Utc};
use switchboard_core::Scope;
use switchboard_store::{
    NewOidcPerson, OidcLoginSecrets, OidcLoginTake, SessionCheck, StoreError, UserAccessChange,
    UserRole,
};

store_test!(
    a_sign_in_in_progress_is_taken_once_and_expires,
    a_person_is_linked_once_by_issuer_and_subject,
    a_session_follows_its_persons_role_and_ends_with_deactivation,
);

async fn a_sign_in_in_progress_is_taken_once_and_expires(test: TestStore) {
    let store = &test.store;
    let secrets = OidcLoginSecrets {
        pkce_verifier: "verifier".into(),
        nonce: "nonce".into(),
    };
    let soon = Utc::now() + TimeDelta::minutes(10);
    store
        .save_oidc_login("state-1", &secrets, soon)
        .await
        .unwrap();
    assert_eq!(
        store.take_oidc_login("state-1").await.unwrap(),
        OidcLoginTake::Valid(secrets.clone())
    );
    assert_eq!(
        store.take_oidc_login("state-1").await.unwrap(),
        OidcLoginTake::Unknown
    );
    assert_eq!(
        store.take_oidc_login("never-issued").await.unwrap(),
        OidcLoginTake::Unknown
    );
    let past = Utc::now() - TimeDelta::seconds(1);
    store
        .save_oidc_login("state-2", &secrets, past)
        .await
        .unwrap();
    assert_eq!(
        store.take_oidc_login("state-2").await.unwrap(),
        OidcLoginTake::Expired
    );
}

async fn a_person_is_linked_once_by_issuer_and_subject(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let person = |subject: &'static str| NewOidcPerson {
        issuer: "https://id.example.com",
        subject,
        email: Some("ada@example.com"),
        name: "ada@example.com",
        role: UserRole::Member,
    };
    let ada = store
        .create_oidc_person(&workspace.id, person("sub-1"))
        .await
        .unwrap();
    assert_eq!(
        store
            .find_oidc_person(&workspace.id, "https://id.example.com", "sub-1")
            .await
            .unwrap(),
        Some(ada.clone())
    );
    // Another issuer's same subject is someone else.
    assert_eq!(
        store
            .find_oidc_person(&workspace.id, "https://other.example.com", "sub-1")
            .await
            .unwrap(),
        None
    );
    // A second first sign-in of the same identity is refused and leaves no person behind.
    let before = store.list_users(&workspace.id).await.unwrap().len();
    let again = store
        .create_oidc_person(&workspace.id, person("sub-1"))
        .await;
    assert!(
        matches!(again, Err(StoreError::UniqueViolation { .. })),
        "{again:?}"
    );
    assert_eq!(store.list_users(&workspace.id).await.unwrap().len(), before);
    // A taken name gets a number.
    let namesake = store
        .create_oidc_person(&workspace.id, person("sub-2"))
        .await
        .unwrap();
    assert_eq!(namesake.name, "ada@example.com (2)");
    assert_ne!(namesake.id, owner.id);
}

async fn a_session_follows_its_persons_role_and_ends_with_deactivation(test: TestStore) {
    let store = &test.store;
    let (workspace, _owner) = workspace_with_owner(store, "acme").await;
    let bob = store
        .create_user(&workspace.id, "bob", UserRole::Admin)
        .await
        .unwrap();
    let later = Utc::now() + TimeDelta::hours(1);
    let session = store
        .create_web_session(&workspace.id, &bob.id, later, Some("id.token.here"))
        .await
        .unwrap();
    let SessionCheck::Accepted(principal) = store.check_web_session(&session.secret).await.unwrap()
    else {
        panic!("a fresh session is accepted");
    };
    assert!(principal.allows(Scope::Admin));
    assert_eq!(principal.token_id, None);
    let demoted = UserAccessChange {
        role: Some(UserRole::Member),
        active: None,
    };
    store
        .update_user_access(&workspace.id, &bob.id, demoted)
        .await
        .unwrap();
    let SessionCheck::Accepted(principal) = store.check_web_session(&session.secret).await.unwrap()
    else {
        panic!("a demotion keeps the session");
    };
    assert!(
        !principal.allows(Scope::Admin),
        "the current role bounds the session"
    );
    assert!(principal.allows(Scope::ChatUse));
    let deactivated = UserAccessChange {
        role: None,
        active: Some(false),
    };
    store
        .update_user_access(&workspace.id, &bob.id, deactivated)
        .await
        .unwrap();
    assert_eq!(
        store.check_web_session(&session.secret).await.unwrap(),
        SessionCheck::Refused,
        "deactivation deletes the sessions"
    );
    assert_eq!(
        store
            .count_web_sessions(&workspace.id, &bob.id)
            .await
            .unwrap(),
        0
    );
    let reactivated = UserAccessChange {
        role: None,
        active: Some(true),
    };
    store
        .update_user_access(&workspace.id, &bob.id, reactivated)
        .await
        .unwrap();
    let fresh = store
        .create_web_session(&workspace.id, &bob.id, later, None)
        .await
        .unwrap();
    assert_eq!(store.end_web_session(&fresh.secret).await.unwrap(), None);
    assert_eq!(
        store.check_web_session(&fresh.secret).await.unwrap(),
        SessionCheck::Refused
    );
    let expired = store
        .create_web_session(
            &workspace.id,
            &bob.id,
            Utc::now() - TimeDelta::seconds(1),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        store.check_web_session(&expired.secret).await.unwrap(),
        SessionCheck::Refused
    );
}
