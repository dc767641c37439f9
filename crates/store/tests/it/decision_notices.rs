//! Decision notices between replicas: on PostgreSQL, settling an approval or elicitation
//! request announces its id on `switchboard_decisions` (once — a compare-and-set that loses
//! announces nothing), heard by a listener of another store on the same database; on SQLite
//! there is no listener.

use crate::fixtures::{start_conversation, workspace_with_owner};
use crate::harness::{Backend, TestStore, store_test};
use chrono::{Duration, Utc};
use serde_json::json;
use std::time::Duration as StdDuration;
use switchboard_core::{ApprovalId, ElicitationId, ToolCallId};
use switchboard_store::{
    ApprovalResolution, ApprovalStatus, DecisionListener, DecisionNotice, ElicitationStatus,
    ListenerEvent, NewApprovalRequest, NewElicitationRequest, SecretCipher, StoreError,
};

store_test!(
    settled_requests_are_announced_to_other_replicas,
    a_listener_whose_connection_is_killed_listens_again
);

/// The notices heard within `window` (other tests share the channel: callers look for theirs).
async fn heard_within(listener: &mut DecisionListener, window: StdDuration) -> Vec<DecisionNotice> {
    let mut heard = Vec::new();
    let deadline = tokio::time::Instant::now() + window;
    while let Ok(event) = tokio::time::timeout_at(deadline, listener.next()).await {
        if let ListenerEvent::Notice(notice) = event.expect("the listener keeps listening") {
            heard.push(notice);
        }
    }
    heard
}

async fn wait_for(listener: &mut DecisionListener, expected: &DecisionNotice) {
    let deadline = tokio::time::Instant::now() + StdDuration::from_secs(5);
    loop {
        match tokio::time::timeout_at(deadline, listener.next()).await {
            Ok(Ok(ListenerEvent::Notice(notice))) if &notice == expected => return,
            Ok(Ok(_)) => continue,
            Ok(Err(error)) => panic!("the listener failed: {error}"),
            Err(_) => panic!("no notice {expected:?} within 5 s"),
        }
    }
}

async fn settled_requests_are_announced_to_other_replicas(test: TestStore) {
    let store = &test.store;
    let mut listener = store.listen_for_decisions().await.unwrap();
    assert_eq!(
        listener.is_some(),
        test.backend == Backend::Postgres,
        "a listener exactly on PostgreSQL"
    );
    // Another replica: its own pool on the same database.
    let other_replica = test.reopen_with(SecretCipher::generate()).await;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let approval = store
        .create_approval_request(
            &workspace.id,
            NewApprovalRequest {
                id: ApprovalId::generate(),
                conversation_id: conversation.id.clone(),
                owner_user_id: alice.id.clone(),
                tool_call_id: ToolCallId::generate(),
                llm_call_id: "call_1".into(),
                server_id: None,
                server_name: "everything".into(),
                tool_name: "echo".into(),
                arguments: json!({}),
                description: "Echoes".into(),
                diff: None,
                expires_at: Utc::now() + Duration::seconds(60),
            },
        )
        .await
        .unwrap();
    let elicitation = store
        .create_elicitation_request(
            &workspace.id,
            NewElicitationRequest {
                id: ElicitationId::generate(),
                conversation_id: conversation.id.clone(),
                owner_user_id: alice.id.clone(),
                tool_call_id: None,
                server_name: "everything".into(),
                message: "Your name?".into(),
                requested_schema: json!({"type": "object"}),
                expires_at: Utc::now() + Duration::seconds(60),
            },
        )
        .await
        .unwrap();
    let approve = ApprovalResolution {
        status: ApprovalStatus::Approved,
        remember: Some("once".into()),
        decided_by: alice.id.as_str().to_owned(),
        reason: None,
    };
    let decided = other_replica
        .resolve_approval_request(&workspace.id, &approval.id, approve.clone())
        .await
        .unwrap();
    assert_eq!(decided.status, ApprovalStatus::Approved);
    other_replica
        .resolve_elicitation_request(
            &workspace.id,
            &elicitation.id,
            ElicitationStatus::Declined,
            alice.id.as_str(),
        )
        .await
        .unwrap();
    // Losing compare-and-sets change nothing and announce nothing.
    assert!(matches!(
        other_replica
            .resolve_approval_request(&workspace.id, &approval.id, approve)
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store
            .resolve_elicitation_request(
                &workspace.id,
                &elicitation.id,
                ElicitationStatus::Expired,
                "timeout"
            )
            .await,
        Err(StoreError::Conflict(_))
    ));
    let Some(listener) = listener.as_mut() else {
        return;
    };
    let approval_notice = DecisionNotice::Approval(approval.id.clone());
    let elicitation_notice = DecisionNotice::Elicitation(elicitation.id.clone());
    wait_for(listener, &approval_notice).await;
    wait_for(listener, &elicitation_notice).await;
    let later = heard_within(listener, StdDuration::from_millis(300)).await;
    assert!(
        !later.contains(&approval_notice) && !later.contains(&elicitation_notice),
        "a lost compare-and-set announced something: {later:?}"
    );
    other_replica.close().await;
}

/// The database ends the listener's session (as a restart or a proxy would): the listener
/// says so (`Reconnected`, after an error at most) and hears the next decision.
async fn a_listener_whose_connection_is_killed_listens_again(test: TestStore) {
    let store = &test.store;
    let Some(mut listener) = store.listen_for_decisions().await.unwrap() else {
        assert_eq!(test.backend, Backend::Sqlite);
        return;
    };
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let first_pid = listener.backend_pid().await.unwrap();
    let pool = test.raw_postgres_pool().await;
    let terminated: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(first_pid)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(terminated);
    let mut errors = 0;
    loop {
        match tokio::time::timeout(StdDuration::from_secs(10), listener.next())
            .await
            .expect("the listener notices its connection is gone")
        {
            Ok(ListenerEvent::Reconnected) => break,
            Ok(ListenerEvent::Notice(_)) => {}
            Err(_) if errors < 3 => errors += 1,
            Err(error) => panic!("the listener does not recover: {error}"),
        }
    }
    assert_ne!(listener.backend_pid().await.unwrap(), first_pid);
    let elicitation = store
        .create_elicitation_request(
            &workspace.id,
            NewElicitationRequest {
                id: ElicitationId::generate(),
                conversation_id: conversation.id.clone(),
                owner_user_id: alice.id.clone(),
                tool_call_id: None,
                server_name: "everything".into(),
                message: "Your name?".into(),
                requested_schema: json!({"type": "object"}),
                expires_at: Utc::now() + Duration::seconds(60),
            },
        )
        .await
        .unwrap();
    store
        .resolve_elicitation_request(
            &workspace.id,
            &elicitation.id,
            ElicitationStatus::Cancelled,
            alice.id.as_str(),
        )
        .await
        .unwrap();
    wait_for(&mut listener, &DecisionNotice::Elicitation(elicitation.id)).await;
    pool.close().await;
}
