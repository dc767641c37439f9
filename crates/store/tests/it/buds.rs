//! Buds (assistant profiles).

use crate::fixtures::{new_conversation, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use serde_json::json;
use switchboard_core::BudId;
use switchboard_store::{BudFallback, BudPatch, NewBud, NewConversation, StoreError};

store_test!(
    buds_are_created_changed_listed_and_deleted,
    bud_input_is_checked
);

fn researcher() -> NewBud {
    NewBud {
        name: "Researcher".into(),
        system_prompt: "You research carefully.".into(),
        provider: Some("openai".into()),
        model: Some("gpt-4.1-mini".into()),
        mcp_config: json!({"servers": ["kg"], "tools": {"kg": ["search"]}}),
        owner_user_id: None,
        fallbacks: vec![BudFallback {
            provider: "claude".into(),
            model: Some("claude-sonnet-4-5".into()),
        }],
    }
}

async fn buds_are_created_changed_listed_and_deleted(test: TestStore) {
    let store = &test.store;
    let (workspace, owner) = workspace_with_owner(store, "acme").await;
    let bud = store.create_bud(&workspace.id, researcher()).await.unwrap();
    assert_eq!(store.get_bud(&workspace.id, &bud.id).await.unwrap(), bud);
    let writer = store
        .create_bud(
            &workspace.id,
            NewBud {
                name: "Writer".into(),
                provider: None,
                model: None,
                ..researcher()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        store.list_buds(&workspace.id).await.unwrap(),
        vec![bud.clone(), writer]
    );
    let patch = BudPatch {
        system_prompt: Some("Be brief.".into()),
        model: Some(None),
        fallbacks: Some(vec![BudFallback {
            provider: "local".into(),
            model: None,
        }]),
        ..BudPatch::default()
    };
    let updated = store
        .update_bud(&workspace.id, &bud.id, patch)
        .await
        .unwrap();
    assert_eq!(updated.system_prompt, "Be brief.");
    assert_eq!(updated.model, None);
    assert_eq!(updated.provider.as_deref(), Some("openai"));
    assert_eq!(updated.fallbacks[0].provider, "local");
    assert_eq!(bud.fallbacks[0].model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(
        store.get_bud(&workspace.id, &bud.id).await.unwrap(),
        updated
    );

    // A conversation started from the bud survives the bud's deletion.
    let conversation = store
        .create_conversation(
            &workspace.id,
            NewConversation {
                bud_id: Some(bud.id.clone()),
                ..new_conversation(&owner)
            },
        )
        .await
        .unwrap();
    store.delete_bud(&workspace.id, &bud.id).await.unwrap();
    let after = store
        .get_conversation(&workspace.id, &conversation.id)
        .await
        .unwrap();
    assert_eq!(after.bud_id, None);
    let again = store.delete_bud(&workspace.id, &bud.id).await.unwrap_err();
    assert!(
        matches!(again, StoreError::NotFound { entity: "bud" }),
        "{again:?}"
    );
}

async fn bud_input_is_checked(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let not_object = store
        .create_bud(
            &workspace.id,
            NewBud {
                mcp_config: json!(["kg"]),
                ..researcher()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            not_object,
            StoreError::InvalidInput {
                field: "mcp_config",
                ..
            }
        ),
        "{not_object:?}"
    );
    let blank = store
        .create_bud(
            &workspace.id,
            NewBud {
                name: " ".into(),
                ..researcher()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(blank, StoreError::InvalidInput { field: "name", .. }),
        "{blank:?}"
    );
    let missing = store
        .update_bud(&workspace.id, &BudId::generate(), BudPatch::default())
        .await
        .unwrap_err();
    assert!(missing.is_not_found());
}
