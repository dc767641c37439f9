//! Credentials of registered servers: encrypted, returned only on request, bound to the key.

use crate::fixtures::{http_server_with_secrets, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use std::collections::BTreeMap;
use switchboard_store::{SecretCipher, ServerPatch, ServerSecrets, StoreError};

store_test!(
    secrets_are_returned_only_on_request_and_replaced_by_patches,
    secrets_do_not_open_with_another_key,
);

async fn secrets_are_returned_only_on_request_and_replaced_by_patches(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let server = store
        .create_server(
            &workspace.id,
            http_server_with_secrets("remote", "sk-live-1", "hdr-1"),
        )
        .await
        .unwrap();
    assert_eq!(server.secrets.header_names, vec!["X-Upstream-Auth"]);
    assert!(server.secrets.has_api_key);
    let debug = format!("{server:?}");
    assert!(
        !debug.contains("sk-live-1") && !debug.contains("hdr-1"),
        "{debug}"
    );
    let secrets = store
        .server_secrets(&workspace.id, &server.id)
        .await
        .unwrap();
    assert_eq!(secrets.api_key.as_deref(), Some("sk-live-1"));
    assert_eq!(secrets.headers["X-Upstream-Auth"], "hdr-1");
    // A patch without secrets keeps them.
    let renamed = store
        .update_server(
            &workspace.id,
            &server.id,
            1,
            ServerPatch {
                name: Some("remote2".into()),
                ..ServerPatch::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .server_secrets(&workspace.id, &server.id)
            .await
            .unwrap(),
        secrets
    );
    assert_eq!(renamed.secrets, server.secrets);
    // A patch with secrets replaces them all.
    let replacement = ServerSecrets {
        headers: BTreeMap::new(),
        api_key: None,
        env: BTreeMap::from([("GITHUB_TOKEN".to_owned(), "ghp_abc".to_owned())]),
        oauth_client_secret: None,
    };
    let replaced = store
        .update_server(
            &workspace.id,
            &server.id,
            2,
            ServerPatch {
                secrets: Some(replacement.clone()),
                ..ServerPatch::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(replaced.secrets.env_names, vec!["GITHUB_TOKEN"]);
    assert!(!replaced.secrets.has_api_key);
    assert_eq!(
        store
            .server_secrets(&workspace.id, &server.id)
            .await
            .unwrap(),
        replacement
    );
    // Empty secrets clear the stored ciphertext.
    store
        .update_server(
            &workspace.id,
            &server.id,
            3,
            ServerPatch {
                secrets: Some(ServerSecrets::default()),
                ..ServerPatch::default()
            },
        )
        .await
        .unwrap();
    assert!(
        store
            .server_secrets(&workspace.id, &server.id)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .get_server(&workspace.id, &server.id)
            .await
            .unwrap()
            .secrets
            == Default::default()
    );
}

async fn secrets_do_not_open_with_another_key(test: TestStore) {
    let (workspace, _) = workspace_with_owner(&test.store, "acme").await;
    let server = test
        .store
        .create_server(
            &workspace.id,
            http_server_with_secrets("remote", "sk-live-1", "hdr-1"),
        )
        .await
        .unwrap();
    let wrong_key = test.reopen_with(SecretCipher::generate()).await;
    let error = wrong_key
        .server_secrets(&workspace.id, &server.id)
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Crypto(_)), "{error:?}");
    assert!(
        error.to_string().contains("wrong encryption key"),
        "{error}"
    );
    // Everything that is not secret still reads fine.
    assert_eq!(
        wrong_key
            .get_server(&workspace.id, &server.id)
            .await
            .unwrap(),
        server
    );
    wrong_key.close().await;
}
