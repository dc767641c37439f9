//! The audit log.

use crate::fixtures::workspace_with_owner;
use crate::harness::{TestStore, store_test};
use serde_json::json;
use switchboard_core::redact::REDACTED;
use switchboard_store::{AuditQuery, NewAuditEntry, StoreError};

store_test!(
    entries_are_redacted_and_listed_newest_first,
    audit_queries_are_checked
);

fn entry(action: &str, details: serde_json::Value) -> NewAuditEntry {
    NewAuditEntry {
        actor: "user-1".into(),
        action: action.into(),
        target: Some("server-1".into()),
        details,
    }
}

async fn entries_are_redacted_and_listed_newest_first(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let created = store
        .append_audit(
            &workspace.id,
            entry(
                "server.created",
                json!({"name": "kg", "headers": {"Authorization": "Bearer s3cret"}, "apiKey": "k"}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(created.details["name"], "kg");
    assert_eq!(created.details["headers"]["Authorization"], REDACTED);
    assert_eq!(created.details["apiKey"], REDACTED);
    for index in 0..5 {
        store
            .append_audit(
                &workspace.id,
                entry("tool_call.approved", json!({"index": index})),
            )
            .await
            .unwrap();
    }
    let all = store
        .list_audit(&workspace.id, AuditQuery::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 6);
    assert!(
        all.windows(2).all(|pair| pair[0].id > pair[1].id),
        "newest first"
    );
    assert_eq!(all[5], created, "stored exactly as returned (redacted)");
    let page = store
        .list_audit(
            &workspace.id,
            AuditQuery {
                limit: 2,
                before_id: Some(all[1].id),
                action: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(page, all[2..4].to_vec());
    let approvals = store
        .list_audit(
            &workspace.id,
            AuditQuery {
                action: Some("server.created".into()),
                ..AuditQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(approvals, vec![created]);
}

async fn audit_queries_are_checked(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let error = store
        .list_audit(
            &workspace.id,
            AuditQuery {
                limit: 0,
                ..AuditQuery::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::InvalidInput { field: "limit", .. }),
        "{error:?}"
    );
    let error = store
        .append_audit(&workspace.id, entry(" ", json!({})))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::InvalidInput {
                field: "action",
                ..
            }
        ),
        "{error:?}"
    );
}
