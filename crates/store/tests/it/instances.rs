//! Instances and answer claims: recovery touches only the work of dead instances (never a live
//! replica's, never the caller's own), a silent instance dies after three heartbeats, and an
//! answer claim refuses a live replica and is taken over from a dead one. A second `Store` on
//! the same database plays the other replica. On SQLite (one process per file) registering
//! declares every other instance dead.

use crate::fixtures::{new_tool_call, start_conversation, workspace_with_owner};
use crate::harness::{Backend, TestStore, store_test};
use chrono::{Duration, Utc};
use serde_json::json;
use std::time::Duration as StdDuration;
use switchboard_core::{
    ApprovalId, ConversationId, ElicitationId, ToolCallId, ToolCallState, WorkspaceId,
};
use switchboard_store::{
    ApprovalStatus, ConversationRecord, ElicitationStatus, NewApprovalRequest,
    NewElicitationRequest, OrphansRecovered, SecretCipher, Store, StoreError, ToolCallOutcome,
};

store_test!(
    recovery_leaves_the_work_of_live_instances_alone,
    an_instance_silent_for_three_heartbeats_is_recovered,
    an_answer_claim_refuses_a_live_replica_and_passes_from_a_dead_one
);

/// What an answer waiting in a process leaves in the store.
struct WorkInFlight {
    dispatched_call: ToolCallId,
    proposed_call: ToolCallId,
    approval: ApprovalId,
    elicitation: ElicitationId,
}

async fn work_in_flight(
    store: &Store,
    workspace_id: &WorkspaceId,
    conversation: &ConversationRecord,
) -> WorkInFlight {
    let dispatched = store
        .create_tool_call(workspace_id, new_tool_call(&conversation.id, None, "c1"))
        .await
        .unwrap();
    for state in [ToolCallState::Approved, ToolCallState::Dispatched] {
        store
            .transition_tool_call(
                workspace_id,
                &dispatched.id,
                state,
                ToolCallOutcome::default(),
            )
            .await
            .unwrap();
    }
    let proposed = store
        .create_tool_call(workspace_id, new_tool_call(&conversation.id, None, "c2"))
        .await
        .unwrap();
    let approval = store
        .create_approval_request(
            workspace_id,
            NewApprovalRequest {
                id: ApprovalId::generate(),
                conversation_id: conversation.id.clone(),
                owner_user_id: conversation.owner_user_id.clone(),
                tool_call_id: proposed.id.clone(),
                llm_call_id: "c2".into(),
                server_id: None,
                server_name: "ephemeral".into(),
                tool_name: "search".into(),
                arguments: json!({"q": "roadmap"}),
                description: "Searches".into(),
                diff: None,
                expires_at: Utc::now() + Duration::seconds(60),
            },
        )
        .await
        .unwrap();
    let elicitation = store
        .create_elicitation_request(
            workspace_id,
            NewElicitationRequest {
                id: ElicitationId::generate(),
                conversation_id: conversation.id.clone(),
                owner_user_id: conversation.owner_user_id.clone(),
                tool_call_id: Some(dispatched.id.clone()),
                server_name: "everything".into(),
                message: "Your name?".into(),
                requested_schema: json!({"type": "object"}),
                expires_at: Utc::now() + Duration::seconds(60),
            },
        )
        .await
        .unwrap();
    WorkInFlight {
        dispatched_call: dispatched.id,
        proposed_call: proposed.id,
        approval: approval.id,
        elicitation: elicitation.id,
    }
}

/// (dispatched call, proposed call, approval, elicitation) as they stand.
async fn states(
    store: &Store,
    workspace_id: &WorkspaceId,
    work: &WorkInFlight,
) -> (
    ToolCallState,
    ToolCallState,
    ApprovalStatus,
    ElicitationStatus,
) {
    (
        store
            .get_tool_call(workspace_id, &work.dispatched_call)
            .await
            .unwrap()
            .state,
        store
            .get_tool_call(workspace_id, &work.proposed_call)
            .await
            .unwrap()
            .state,
        store
            .get_approval_request(workspace_id, &work.approval)
            .await
            .unwrap()
            .status,
        store
            .get_elicitation_request(workspace_id, &work.elicitation)
            .await
            .unwrap()
            .status,
    )
}

const STILL_WAITING: (
    ToolCallState,
    ToolCallState,
    ApprovalStatus,
    ElicitationStatus,
) = (
    ToolCallState::Dispatched,
    ToolCallState::Proposed,
    ApprovalStatus::Pending,
    ElicitationStatus::Pending,
);

const RECOVERED: (
    ToolCallState,
    ToolCallState,
    ApprovalStatus,
    ElicitationStatus,
) = (
    ToolCallState::Unknown,
    ToolCallState::Failed,
    ApprovalStatus::Expired,
    ElicitationStatus::Expired,
);

async fn recovery_leaves_the_work_of_live_instances_alone(test: TestStore) {
    let replica_a = &test.store;
    replica_a
        .register_instance(StdDuration::from_secs(5))
        .await
        .unwrap();
    assert!(matches!(
        replica_a.register_instance(StdDuration::from_secs(5)).await,
        Err(StoreError::Conflict(_))
    ));
    let (workspace, alice) = workspace_with_owner(replica_a, "acme").await;
    let conversation = start_conversation(replica_a, &workspace.id, &alice).await;
    let work = work_in_flight(replica_a, &workspace.id, &conversation).await;
    // A process never recovers its own work while it runs.
    assert_eq!(
        replica_a.recover_orphaned_work().await.unwrap(),
        OrphansRecovered::default()
    );
    assert_eq!(states(replica_a, &workspace.id, &work).await, STILL_WAITING);

    // Replica B starts and runs the start-up recovery.
    let replica_b = test.reopen_with(SecretCipher::generate()).await;
    replica_b
        .register_instance(StdDuration::from_secs(5))
        .await
        .unwrap();
    let at_start = (
        replica_b.recover_interrupted_tool_calls().await.unwrap(),
        replica_b.expire_pending_approval_requests().await.unwrap(),
        replica_b
            .expire_pending_elicitation_requests()
            .await
            .unwrap(),
    );
    match test.backend {
        Backend::Postgres => {
            assert_eq!(at_start, (0, 0, 0), "A is alive: nothing of it is touched");
            assert_eq!(
                states(&replica_b, &workspace.id, &work).await,
                STILL_WAITING
            );
            // A stops without cleaning up its work (its answers did not end): B's next sweep
            // recovers it.
            replica_a.deregister_instance().await.unwrap();
            let swept = replica_b.recover_orphaned_work().await.unwrap();
            assert_eq!(
                (swept.tool_calls, swept.approvals, swept.elicitations),
                (2, 1, 1)
            );
        }
        Backend::Sqlite => {
            // One process per SQLite file: the new one declares every other dead.
            assert_eq!(at_start, (2, 1, 1));
        }
    }
    assert_eq!(states(&replica_b, &workspace.id, &work).await, RECOVERED);
    let call = replica_b
        .get_tool_call(&workspace.id, &work.dispatched_call)
        .await
        .unwrap();
    assert!(call.error.unwrap().contains("restart"));
    assert_eq!(
        replica_b.recover_orphaned_work().await.unwrap(),
        OrphansRecovered::default()
    );
}

async fn an_instance_silent_for_three_heartbeats_is_recovered(test: TestStore) {
    let replica_a = &test.store;
    let heartbeat = StdDuration::from_millis(150);
    replica_a.register_instance(heartbeat).await.unwrap();
    assert!(replica_a.instance_id().is_some());
    let (workspace, alice) = workspace_with_owner(replica_a, "acme").await;
    let conversation = start_conversation(replica_a, &workspace.id, &alice).await;
    let work = work_in_flight(replica_a, &workspace.id, &conversation).await;
    let beating = replica_a.keep_instance_alive().unwrap();

    let replica_b = test.reopen_with(SecretCipher::generate()).await;
    replica_b
        .register_instance(StdDuration::from_secs(5))
        .await
        .unwrap();
    if test.backend == Backend::Sqlite {
        // The newcomer on a SQLite file took over: A's work is recovered at once.
        assert_eq!(
            replica_b.recover_orphaned_work().await.unwrap().approvals,
            1
        );
        beating.abandon();
        return;
    }
    // Well past three of A's intervals, A is alive because it keeps beating.
    tokio::time::sleep(heartbeat * 5).await;
    assert_eq!(
        replica_b.recover_orphaned_work().await.unwrap(),
        OrphansRecovered::default()
    );
    assert_eq!(
        states(&replica_b, &workspace.id, &work).await,
        STILL_WAITING
    );
    // A's heartbeats stop (a crash: no deregistration). Three intervals later it is dead.
    beating.abandon();
    tokio::time::sleep(heartbeat * 4).await;
    let swept = replica_b.recover_orphaned_work().await.unwrap();
    assert_eq!(
        (
            swept.tool_calls,
            swept.approvals,
            swept.elicitations,
            swept.instances
        ),
        (2, 1, 1, 1)
    );
    assert_eq!(states(&replica_b, &workspace.id, &work).await, RECOVERED);
    // A comes back (it was only stalled): its next heartbeat registers it again.
    replica_a.heartbeat_instance().await.unwrap();
    let claim = replica_a
        .claim_conversation_answer(&workspace.id, &conversation.id)
        .await
        .unwrap();
    assert!(claim.is_some());
    assert!(
        replica_b
            .claim_conversation_answer(&workspace.id, &conversation.id)
            .await
            .unwrap()
            .is_none(),
        "A is alive again"
    );
}

async fn an_answer_claim_refuses_a_live_replica_and_passes_from_a_dead_one(test: TestStore) {
    let replica_a = &test.store;
    replica_a
        .register_instance(StdDuration::from_secs(5))
        .await
        .unwrap();
    let (workspace, alice) = workspace_with_owner(replica_a, "acme").await;
    let conversation = start_conversation(replica_a, &workspace.id, &alice).await;
    let first = replica_a
        .claim_conversation_answer(&workspace.id, &conversation.id)
        .await
        .unwrap()
        .expect("a free conversation is claimed");
    assert_eq!(first.instance_id.as_ref(), replica_a.instance_id());
    // Its own leftover claim is stale for the process that holds it: taken over, and the late
    // release of the first answer does not free the second.
    let second = replica_a
        .claim_conversation_answer(&workspace.id, &conversation.id)
        .await
        .unwrap()
        .expect("this instance's own claim is taken over");
    assert_ne!(first.answer_id, second.answer_id);
    assert!(!replica_a.release_conversation_answer(&first).await.unwrap());
    assert_eq!(
        replica_a
            .list_answers_in_flight(&workspace.id)
            .await
            .unwrap(),
        vec![second.clone()]
    );
    assert!(matches!(
        replica_a
            .claim_conversation_answer(&workspace.id, &ConversationId::generate())
            .await,
        Err(StoreError::NotFound {
            entity: "conversation"
        })
    ));

    let replica_b = test.reopen_with(SecretCipher::generate()).await;
    replica_b
        .register_instance(StdDuration::from_secs(5))
        .await
        .unwrap();
    if test.backend == Backend::Postgres {
        assert_eq!(
            replica_b
                .claim_conversation_answer(&workspace.id, &conversation.id)
                .await
                .unwrap(),
            None,
            "A answers there"
        );
        assert_eq!(
            replica_b
                .list_answers_in_flight(&workspace.id)
                .await
                .unwrap(),
            vec![second.clone()],
            "B sees A's answer in flight"
        );
        // A's answer ends: B may answer.
        assert!(
            replica_a
                .release_conversation_answer(&second)
                .await
                .unwrap()
        );
        let on_b = replica_b
            .claim_conversation_answer(&workspace.id, &conversation.id)
            .await
            .unwrap()
            .expect("released");
        assert!(
            replica_a
                .claim_conversation_answer(&workspace.id, &conversation.id)
                .await
                .unwrap()
                .is_none(),
            "B answers there"
        );
        // B stops (its heartbeat task ends and deregisters it) without releasing its claim:
        // A takes the conversation over.
        let beating = replica_b.keep_instance_alive().unwrap();
        beating.stop().await;
        assert!(
            replica_a
                .list_answers_in_flight(&workspace.id)
                .await
                .unwrap()
                .is_empty(),
            "a dead instance's answer is not in flight"
        );
        let taken = replica_a
            .claim_conversation_answer(&workspace.id, &conversation.id)
            .await
            .unwrap()
            .expect("a dead instance's claim passes");
        assert!(!replica_b.release_conversation_answer(&on_b).await.unwrap());
        assert!(replica_a.release_conversation_answer(&taken).await.unwrap());
    } else {
        // SQLite: B's registration declared A dead, so its claim passes at once.
        assert!(
            replica_b
                .claim_conversation_answer(&workspace.id, &conversation.id)
                .await
                .unwrap()
                .is_some()
        );
    }
    // Deleting the conversation removes its claim.
    replica_a
        .delete_conversation(&workspace.id, &conversation.id)
        .await
        .unwrap();
    assert!(
        replica_a
            .list_answers_in_flight(&workspace.id)
            .await
            .unwrap()
            .is_empty()
    );
}
