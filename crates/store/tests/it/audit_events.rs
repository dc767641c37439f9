//! Structured audit events: redaction, every search filter, paging, workspace isolation.

use crate::fixtures::workspace_with_owner;
use crate::harness::{TestStore, store_test};
use chrono::{Duration, Utc};
use serde_json::json;
use switchboard_core::UserId;
use switchboard_store::{AuditSearch, NewAuditEntry, NewAuditEvent, StoreError};

store_test!(
    audit_events_are_redacted_filtered_and_paged,
    audit_search_refuses_bad_bounds
);

fn tool_call(user: &UserId, server: &str, tool: &str, status: &str) -> NewAuditEvent {
    NewAuditEvent {
        actor: user.as_str().to_owned(),
        action: format!("tool_call.{status}"),
        target: Some(format!("{server}/{tool}")),
        user_id: Some(user.clone()),
        conversation_id: None,
        server_name: Some(server.to_owned()),
        tool_name: Some(tool.to_owned()),
        status: Some(status.to_owned()),
        duration_ms: Some(12),
        details: json!({"arguments": {"q": "x", "apiKey": "sk-live-123", "nested": {"password": "hunter2"}}}),
    }
}

async fn audit_events_are_redacted_filtered_and_paged(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let bob = UserId::from_string("bob-id");
    let before = Utc::now() - Duration::seconds(1);
    let first = store
        .append_audit_event(
            &workspace.id,
            tool_call(&alice.id, "kg", "find_objects", "completed"),
        )
        .await
        .unwrap();
    assert_eq!(first.details["arguments"]["apiKey"], "[REDACTED]");
    assert_eq!(
        first.details["arguments"]["nested"]["password"],
        "[REDACTED]"
    );
    store
        .append_audit_event(
            &workspace.id,
            tool_call(&bob, "kg", "create_object", "denied"),
        )
        .await
        .unwrap();
    store
        .append_audit_event(
            &workspace.id,
            tool_call(&alice.id, "files", "read", "failed"),
        )
        .await
        .unwrap();
    store
        .append_audit_event(
            &workspace.id,
            NewAuditEvent {
                actor: "system".into(),
                action: "server.connected".into(),
                server_name: Some("kg".into()),
                status: Some("connect".into()),
                ..NewAuditEvent::default()
            },
        )
        .await
        .unwrap();
    // An entry from the generic API shows up with empty structured columns.
    store
        .append_audit(
            &workspace.id,
            NewAuditEntry {
                actor: alice.id.as_str().to_owned(),
                action: "token.created".into(),
                target: None,
                details: json!({}),
            },
        )
        .await
        .unwrap();
    let (other_workspace, _) = workspace_with_owner(store, "globex").await;
    store
        .append_audit_event(
            &other_workspace.id,
            tool_call(&alice.id, "kg", "find_objects", "completed"),
        )
        .await
        .unwrap();

    let search = |change: fn(&mut AuditSearch)| {
        let mut search = AuditSearch::default();
        change(&mut search);
        store.search_audit(&workspace.id, search)
    };
    let all = search(|_| {}).await.unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(all[0].action, "token.created");
    assert!(all.windows(2).all(|pair| pair[0].id > pair[1].id));
    let raw = serde_json::to_string(&all.iter().map(|e| &e.details).collect::<Vec<_>>()).unwrap();
    assert!(
        !raw.contains("sk-live-123") && !raw.contains("hunter2"),
        "{raw}"
    );

    let by_server = search(|s| s.server_name = Some("kg".into())).await.unwrap();
    assert_eq!(by_server.len(), 3);
    let by_tool = search(|s| s.tool_name = Some("read".into())).await.unwrap();
    assert_eq!(by_tool.len(), 1);
    assert_eq!(by_tool[0].duration_ms, Some(12));
    let by_status = search(|s| s.status = Some("denied".into())).await.unwrap();
    assert_eq!(by_status.len(), 1);
    assert_eq!(by_status[0].user_id.as_ref().unwrap().as_str(), "bob-id");
    let by_user = search(|s| s.user = Some("bob-id".into())).await.unwrap();
    assert_eq!(by_user.len(), 1);
    let by_action_prefix = search(|s| s.action = Some("tool_call.".into()))
        .await
        .unwrap();
    assert_eq!(by_action_prefix.len(), 3);
    let by_action = search(|s| s.action = Some("server.connected".into()))
        .await
        .unwrap();
    assert_eq!(by_action.len(), 1);
    // `_` in the prefix is literal, not a wildcard.
    let no_wildcard = search(|s| s.action = Some("tool.call.".into()))
        .await
        .unwrap();
    assert!(no_wildcard.is_empty());

    let mut in_range = AuditSearch {
        from: Some(before),
        to: Some(Utc::now() + Duration::seconds(1)),
        ..AuditSearch::default()
    };
    assert_eq!(
        store
            .search_audit(&workspace.id, in_range.clone())
            .await
            .unwrap()
            .len(),
        5
    );
    in_range.from = Some(Utc::now() + Duration::seconds(1));
    in_range.to = Some(Utc::now() + Duration::seconds(2));
    assert!(
        store
            .search_audit(&workspace.id, in_range)
            .await
            .unwrap()
            .is_empty()
    );

    // Paging by id: two pages of two, then one.
    let page_one = search(|s| s.limit = 2).await.unwrap();
    let mut next = AuditSearch {
        limit: 2,
        before_id: Some(page_one[1].id),
        ..AuditSearch::default()
    };
    let page_two = store
        .search_audit(&workspace.id, next.clone())
        .await
        .unwrap();
    next.before_id = Some(page_two[1].id);
    let page_three = store.search_audit(&workspace.id, next).await.unwrap();
    let paged: Vec<i64> = page_one
        .iter()
        .chain(&page_two)
        .chain(&page_three)
        .map(|event| event.id)
        .collect();
    assert_eq!(paged, all.iter().map(|event| event.id).collect::<Vec<_>>());
}

async fn audit_search_refuses_bad_bounds(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let now = Utc::now();
    for search in [
        AuditSearch {
            limit: 0,
            ..AuditSearch::default()
        },
        AuditSearch {
            limit: 501,
            ..AuditSearch::default()
        },
    ] {
        assert!(matches!(
            store.search_audit(&workspace.id, search).await,
            Err(StoreError::InvalidInput { field: "limit", .. })
        ));
    }
    assert!(matches!(
        store
            .search_audit(
                &workspace.id,
                AuditSearch {
                    from: Some(now),
                    to: Some(now),
                    ..AuditSearch::default()
                }
            )
            .await,
        Err(StoreError::InvalidInput { field: "from", .. })
    ));
    assert!(matches!(
        store
            .append_audit_event(&workspace.id, NewAuditEvent::default())
            .await,
        Err(StoreError::InvalidInput {
            field: "action",
            ..
        })
    ));
}
