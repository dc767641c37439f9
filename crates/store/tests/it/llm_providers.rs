//! Named LLM providers stored through the API: per workspace, unique by name, the key sealed,
//! bound to its row and returned only on request.

use crate::fixtures::workspace_with_owner;
use crate::harness::{TestStore, store_test};
use serde_json::json;
use switchboard_store::{NewLlmProvider, SecretCipher, StoreError};

store_test!(
    providers_are_stored_by_name_with_their_key_sealed,
    provider_keys_are_bound_to_their_workspace_and_key,
);

fn claude(key: Option<&str>) -> NewLlmProvider {
    NewLlmProvider {
        name: "claude".to_owned(),
        kind: "anthropic".to_owned(),
        base_url: String::new(),
        api_key: key.map(str::to_owned),
        default_model: "claude-sonnet-4-5".to_owned(),
        api_version: String::new(),
        models: json!([{"id": "claude-sonnet-4-5", "context_window": 200000}]),
    }
}

async fn providers_are_stored_by_name_with_their_key_sealed(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let created = store
        .create_llm_provider(&workspace.id, claude(Some("sk-ant-secret-1")))
        .await
        .unwrap();
    assert!(created.has_api_key);
    assert_eq!(created.models[0]["context_window"], 200000);
    assert!(!format!("{created:?}").contains("sk-ant-secret-1"));
    assert!(!format!("{:?}", claude(Some("sk-ant-secret-1"))).contains("sk-ant-secret-1"));
    let duplicate = store
        .create_llm_provider(&workspace.id, claude(None))
        .await
        .unwrap_err();
    assert!(
        matches!(duplicate, StoreError::UniqueViolation { .. }),
        "{duplicate:?}"
    );
    assert_eq!(
        store
            .llm_provider_api_key(&workspace.id, "claude")
            .await
            .unwrap()
            .as_deref(),
        Some("sk-ant-secret-1")
    );
    let replaced = store
        .replace_llm_provider(
            &workspace.id,
            NewLlmProvider {
                default_model: "claude-opus-4-1".to_owned(),
                ..claude(None)
            },
        )
        .await
        .unwrap();
    assert!(!replaced.has_api_key);
    assert_eq!(replaced.default_model, "claude-opus-4-1");
    assert_eq!(replaced.created_at, created.created_at);
    assert_eq!(
        store
            .llm_provider_api_key(&workspace.id, "claude")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.list_llm_providers(&workspace.id).await.unwrap(),
        vec![replaced]
    );
    store
        .delete_llm_provider(&workspace.id, "claude")
        .await
        .unwrap();
    for error in [
        store
            .delete_llm_provider(&workspace.id, "claude")
            .await
            .unwrap_err(),
        store
            .get_llm_provider(&workspace.id, "claude")
            .await
            .unwrap_err(),
        store
            .replace_llm_provider(&workspace.id, claude(None))
            .await
            .unwrap_err(),
    ] {
        assert!(matches!(error, StoreError::NotFound { .. }), "{error:?}");
    }
}

async fn provider_keys_are_bound_to_their_workspace_and_key(test: TestStore) {
    let (acme, _) = workspace_with_owner(&test.store, "acme").await;
    let (other, _) = workspace_with_owner(&test.store, "other").await;
    test.store
        .create_llm_provider(&acme.id, claude(Some("sk-ant-secret-2")))
        .await
        .unwrap();
    let hidden = test
        .store
        .get_llm_provider(&other.id, "claude")
        .await
        .unwrap_err();
    assert!(matches!(hidden, StoreError::NotFound { .. }), "{hidden:?}");
    assert!(
        test.store
            .list_llm_providers(&other.id)
            .await
            .unwrap()
            .is_empty()
    );
    let wrong_key = test.reopen_with(SecretCipher::generate()).await;
    let error = wrong_key
        .llm_provider_api_key(&acme.id, "claude")
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Crypto(_)), "{error:?}");
    assert_eq!(
        wrong_key
            .get_llm_provider(&acme.id, "claude")
            .await
            .unwrap()
            .default_model,
        "claude-sonnet-4-5"
    );
}
