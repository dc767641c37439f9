//! Users: adding people to a workspace, finding and listing them, which scopes their tokens
//! may carry.

use crate::fixtures::{new_token, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use switchboard_core::{ScopeSet, UserId};
use switchboard_store::{StoreError, UserRole};

store_test!(
    users_are_created_found_and_listed_per_workspace,
    user_names_are_unique_per_workspace_and_validated,
    a_members_tokens_may_not_carry_the_admin_scope,
);

async fn users_are_created_found_and_listed_per_workspace(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let bob = store
        .create_user(&workspace.id, "bob@example.com", UserRole::Member)
        .await
        .unwrap();
    let carol = store
        .create_user(&workspace.id, "carol", UserRole::Admin)
        .await
        .unwrap();
    assert_eq!(
        (bob.name.as_str(), bob.role, &bob.workspace_id),
        ("bob@example.com", UserRole::Member, &workspace.id)
    );
    // Roles survive the round trip through the database, the admin role included.
    assert_eq!(
        store.get_user(&workspace.id, &carol.id).await.unwrap(),
        carol
    );
    assert_eq!(
        store
            .find_user_by_name(&workspace.id, "bob@example.com")
            .await
            .unwrap(),
        Some(bob.clone())
    );
    assert_eq!(
        store
            .find_user_by_name(&workspace.id, "Bob@example.com")
            .await
            .unwrap(),
        None,
        "names match exactly"
    );
    assert_eq!(
        store.list_users(&workspace.id).await.unwrap(),
        vec![owner, bob.clone(), carol]
    );

    // Another workspace neither lists nor finds them.
    let (other, other_owner) = workspace_with_owner(store, "globex").await;
    assert_eq!(
        store.list_users(&other.id).await.unwrap(),
        vec![other_owner]
    );
    assert_eq!(
        store
            .find_user_by_name(&other.id, "bob@example.com")
            .await
            .unwrap(),
        None
    );
    assert!(matches!(
        store.get_user(&other.id, &bob.id).await,
        Err(StoreError::NotFound { entity: "user" })
    ));
}

async fn user_names_are_unique_per_workspace_and_validated(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    store
        .create_user(&workspace.id, "bob", UserRole::Member)
        .await
        .unwrap();
    let duplicate = store
        .create_user(&workspace.id, "bob", UserRole::Admin)
        .await
        .unwrap_err();
    assert!(
        matches!(
            duplicate,
            StoreError::UniqueViolation {
                entity: "user",
                field: "name"
            }
        ),
        "{duplicate:?}"
    );
    assert_eq!(
        duplicate.to_string(),
        "a user with this name already exists"
    );
    // The same name in another workspace is another person.
    let (other, _) = workspace_with_owner(store, "globex").await;
    store
        .create_user(&other.id, "bob", UserRole::Member)
        .await
        .unwrap();

    for (name, reason) in [
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        (" bob2", "must not start or end with spaces"),
        ("bob\nsmith", "control characters"),
        ("a\0b", "U+0000"),
    ] {
        let error = store
            .create_user(&workspace.id, name, UserRole::Member)
            .await
            .unwrap_err();
        assert!(
            matches!(error, StoreError::InvalidInput { field: "name", .. })
                && error.to_string().contains(reason),
            "{name:?}: {error}"
        );
    }
    let long = "x".repeat(201);
    assert!(matches!(
        store
            .create_user(&workspace.id, &long, UserRole::Member)
            .await,
        Err(StoreError::InvalidInput { field: "name", .. })
    ));
    assert_eq!(store.list_users(&workspace.id).await.unwrap().len(), 2);
}

async fn a_members_tokens_may_not_carry_the_admin_scope(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let member = store
        .create_user(&workspace.id, "bob", UserRole::Member)
        .await
        .unwrap();
    let admin = store
        .create_user(&workspace.id, "carol", UserRole::Admin)
        .await
        .unwrap();
    let chat = ScopeSet::parse_list("chat:use").unwrap();
    let with_admin = ScopeSet::parse_list("chat:use admin").unwrap();
    for user in [&owner, &member, &admin] {
        assert_eq!(
            store
                .check_token_holder(&workspace.id, &user.id, &chat)
                .await
                .unwrap(),
            *user
        );
    }
    for user in [&owner, &admin] {
        store
            .check_token_holder(&workspace.id, &user.id, &with_admin)
            .await
            .unwrap();
    }
    let refused = store
        .check_token_holder(&workspace.id, &member.id, &with_admin)
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            StoreError::InvalidInput {
                field: "scopes",
                ..
            }
        ) && refused.to_string().contains("user 'bob' is a member")
            && refused.to_string().contains("`admin`"),
        "{refused}"
    );
    // Unknown users, and users of another workspace, are not found.
    let (other, other_owner) = workspace_with_owner(store, "globex").await;
    for (workspace_id, user_id) in [
        (&workspace.id, UserId::generate()),
        (&other.id, member.id.clone()),
        (&workspace.id, other_owner.id.clone()),
    ] {
        assert!(matches!(
            store
                .check_token_holder(workspace_id, &user_id, &chat)
                .await,
            Err(StoreError::NotFound { entity: "user" })
        ));
    }
    // A token issued after the check acts as that user.
    let issued = store
        .create_token(&workspace.id, new_token(&member, "chat:use"))
        .await
        .unwrap();
    let principal = store
        .authenticate(issued.plaintext.expose())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(principal.user_id, member.id);
    assert!(!principal.is_admin());

    // Issuing runs the same check, so no caller can skip it: neither a generated nor an
    // imported token may give a member `admin`, and nothing is stored when it is refused.
    let before = store.list_tokens(&workspace.id).await.unwrap().len();
    let generated = store
        .create_token(&workspace.id, new_token(&member, "chat:use admin"))
        .await
        .unwrap_err();
    let imported = store
        .import_token(
            &workspace.id,
            new_token(&member, "admin"),
            "an-operator-chosen-token",
        )
        .await
        .unwrap_err();
    for refused in [&generated, &imported] {
        assert!(
            matches!(
                refused,
                StoreError::InvalidInput {
                    field: "scopes",
                    ..
                }
            ) && refused.to_string()
                == "invalid scopes: user 'bob' is a member; only owners and admins may hold the `admin` scope",
            "{refused}"
        );
    }
    assert!(
        store
            .authenticate("an-operator-chosen-token")
            .await
            .unwrap()
            .is_none()
    );
    // A user of another workspace is not found there either way.
    let stranger = store
        .import_token(
            &workspace.id,
            new_token(&other_owner, "chat:use"),
            "another-operator-token",
        )
        .await
        .unwrap_err();
    assert!(
        matches!(stranger, StoreError::NotFound { entity: "user" }),
        "{stranger:?}"
    );
    assert_eq!(
        store.list_tokens(&workspace.id).await.unwrap().len(),
        before
    );
    // Owners and admins may.
    for user in [&owner, &admin] {
        store
            .create_token(&workspace.id, new_token(user, "chat:use admin"))
            .await
            .unwrap();
    }
}
