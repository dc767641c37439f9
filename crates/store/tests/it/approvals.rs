//! Approval requests, elicitation requests, per-bud and per-user rules, pin snapshots and
//! observed server instructions.

use crate::fixtures::{
    add_stdio_server, plain_bud, start_conversation, tool, workspace_with_owner,
};
use crate::harness::{TestStore, store_test};
use chrono::{Duration, Utc};
use serde_json::json;
use switchboard_core::{
    ApprovalId, ApprovalPolicy, ConversationId, ElicitationId, ToolCallId, UserId,
};
use switchboard_store::{
    ApprovalRequestFilter, ApprovalResolution, ApprovalStatus, ElicitationStatus,
    NewApprovalRequest, NewElicitationRequest, NewToolRule, StoreError, ToolRuleScope, UserRole,
};

store_test!(
    approval_requests_are_decided_once_and_listed,
    pending_approval_requests_expire_at_start_up,
    approval_requests_need_a_conversation_of_the_workspace,
    elicitation_requests_are_answered_once,
    both_kinds_of_pending_request_are_resolved_exactly_once_under_races,
    bud_rules_and_user_decisions_are_separate_scopes,
    rules_need_their_parents_in_the_workspace,
    pin_snapshots_and_server_instructions_round_trip
);

fn new_approval(
    conversation_id: &ConversationId,
    owner: &UserId,
    server: Option<&switchboard_store::ServerRecord>,
) -> NewApprovalRequest {
    NewApprovalRequest {
        id: ApprovalId::generate(),
        conversation_id: conversation_id.clone(),
        owner_user_id: owner.clone(),
        tool_call_id: ToolCallId::generate(),
        llm_call_id: "call_1".into(),
        server_id: server.map(|server| server.id.clone()),
        server_name: server.map_or("ephemeral".into(), |server| server.name.clone()),
        tool_name: "search".into(),
        arguments: json!({"q": "roadmap", "apiKey": "kept for the person deciding"}),
        description: "Searches".into(),
        diff: Some(json!({"changes": [{"field": "description", "before": "a", "after": "b"}]})),
        expires_at: Utc::now() + Duration::seconds(60),
    }
}

fn decided_by(user: &UserId, status: ApprovalStatus) -> ApprovalResolution {
    ApprovalResolution {
        status,
        remember: Some("once".into()),
        decided_by: user.as_str().to_owned(),
        reason: None,
    }
}

async fn approval_requests_are_decided_once_and_listed(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let bob = store
        .create_user(&workspace.id, "bob", UserRole::Member)
        .await
        .unwrap();
    let server = add_stdio_server(store, &workspace.id, "kg").await;
    let alices = start_conversation(store, &workspace.id, &alice).await;
    let bobs = start_conversation(store, &workspace.id, &bob).await;
    let first = store
        .create_approval_request(
            &workspace.id,
            new_approval(&alices.id, &alice.id, Some(&server)),
        )
        .await
        .unwrap();
    assert_eq!(first.status, ApprovalStatus::Pending);
    assert_eq!(
        store
            .get_approval_request(&workspace.id, &first.id)
            .await
            .unwrap(),
        first
    );
    let second = store
        .create_approval_request(&workspace.id, new_approval(&alices.id, &alice.id, None))
        .await
        .unwrap();
    let bobs_request = store
        .create_approval_request(&workspace.id, new_approval(&bobs.id, &bob.id, None))
        .await
        .unwrap();

    let pending_for_alice = store
        .list_approval_requests(
            &workspace.id,
            ApprovalRequestFilter {
                owner_user_id: Some(alice.id.clone()),
                status: Some(ApprovalStatus::Pending),
                ..ApprovalRequestFilter::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        pending_for_alice
            .iter()
            .map(|request| &request.id)
            .collect::<Vec<_>>(),
        vec![&first.id, &second.id]
    );

    let approved = store
        .resolve_approval_request(
            &workspace.id,
            &first.id,
            decided_by(&alice.id, ApprovalStatus::Approved),
        )
        .await
        .unwrap();
    assert_eq!(approved.status, ApprovalStatus::Approved);
    assert_eq!(approved.decided_by.as_deref(), Some(alice.id.as_str()));
    assert!(approved.decided_at.is_some());
    // A second decision (or a timeout racing the first) loses with a conflict naming the status.
    let again = store
        .resolve_approval_request(
            &workspace.id,
            &first.id,
            ApprovalResolution {
                status: ApprovalStatus::Expired,
                remember: None,
                decided_by: "timeout".into(),
                reason: None,
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&again, StoreError::Conflict(message) if message.contains("approved")),
        "{again:?}"
    );
    assert!(matches!(
        store
            .resolve_approval_request(
                &workspace.id,
                &second.id,
                decided_by(&alice.id, ApprovalStatus::Pending)
            )
            .await,
        Err(StoreError::InvalidInput {
            field: "status",
            ..
        })
    ));

    let conversation_history = store
        .list_approval_requests(
            &workspace.id,
            ApprovalRequestFilter {
                conversation_id: Some(alices.id.clone()),
                ..ApprovalRequestFilter::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(conversation_history.len(), 2);
    assert_eq!(conversation_history[0].status, ApprovalStatus::Approved);
    let everyone_pending = store
        .list_approval_requests(
            &workspace.id,
            ApprovalRequestFilter {
                status: Some(ApprovalStatus::Pending),
                ..ApprovalRequestFilter::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(everyone_pending.len(), 2);
    assert!(everyone_pending.iter().any(|r| r.id == bobs_request.id));
    assert!(matches!(
        store
            .list_approval_requests(
                &workspace.id,
                ApprovalRequestFilter {
                    limit: 0,
                    ..ApprovalRequestFilter::default()
                }
            )
            .await,
        Err(StoreError::InvalidInput { field: "limit", .. })
    ));
}

async fn pending_approval_requests_expire_at_start_up(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let waiting = store
        .create_approval_request(
            &workspace.id,
            new_approval(&conversation.id, &alice.id, None),
        )
        .await
        .unwrap();
    let decided = store
        .create_approval_request(
            &workspace.id,
            new_approval(&conversation.id, &alice.id, None),
        )
        .await
        .unwrap();
    store
        .resolve_approval_request(
            &workspace.id,
            &decided.id,
            decided_by(&alice.id, ApprovalStatus::Denied),
        )
        .await
        .unwrap();
    assert_eq!(store.expire_pending_approval_requests().await.unwrap(), 1);
    let expired = store
        .get_approval_request(&workspace.id, &waiting.id)
        .await
        .unwrap();
    assert_eq!(expired.status, ApprovalStatus::Expired);
    assert_eq!(expired.decided_by.as_deref(), Some("restart"));
    assert!(expired.reason.unwrap().contains("restarted"));
    assert_eq!(
        store
            .get_approval_request(&workspace.id, &decided.id)
            .await
            .unwrap()
            .status,
        ApprovalStatus::Denied
    );
    assert_eq!(store.expire_pending_approval_requests().await.unwrap(), 0);
}

async fn approval_requests_need_a_conversation_of_the_workspace(test: TestStore) {
    let store = &test.store;
    let (acme, alice) = workspace_with_owner(store, "acme").await;
    let (globex, _) = workspace_with_owner(store, "globex").await;
    let conversation = start_conversation(store, &acme.id, &alice).await;
    let error = store
        .create_approval_request(&globex.id, new_approval(&conversation.id, &alice.id, None))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::NotFound {
                entity: "conversation"
            }
        ),
        "{error:?}"
    );
    let request = store
        .create_approval_request(&acme.id, new_approval(&conversation.id, &alice.id, None))
        .await
        .unwrap();
    // Another workspace cannot read or decide it.
    assert!(
        store
            .get_approval_request(&globex.id, &request.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .resolve_approval_request(
                &globex.id,
                &request.id,
                decided_by(&alice.id, ApprovalStatus::Approved)
            )
            .await
            .unwrap_err()
            .is_not_found()
    );
}

async fn elicitation_requests_are_answered_once(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let new_request = |id: ElicitationId| NewElicitationRequest {
        id,
        conversation_id: conversation.id.clone(),
        owner_user_id: alice.id.clone(),
        tool_call_id: None,
        server_name: "everything".into(),
        message: "Your name?".into(),
        requested_schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        expires_at: Utc::now() + Duration::seconds(60),
    };
    let asked = store
        .create_elicitation_request(&workspace.id, new_request(ElicitationId::generate()))
        .await
        .unwrap();
    let other = store
        .create_elicitation_request(&workspace.id, new_request(ElicitationId::generate()))
        .await
        .unwrap();
    assert_eq!(
        store
            .list_pending_elicitation_requests(&workspace.id, Some(&alice.id))
            .await
            .unwrap()
            .len(),
        2
    );
    let answered = store
        .resolve_elicitation_request(
            &workspace.id,
            &asked.id,
            ElicitationStatus::Accepted,
            alice.id.as_str(),
        )
        .await
        .unwrap();
    assert_eq!(answered.status, ElicitationStatus::Accepted);
    assert_eq!(answered.responded_by.as_deref(), Some(alice.id.as_str()));
    assert!(matches!(
        store
            .resolve_elicitation_request(&workspace.id, &asked.id, ElicitationStatus::Declined, "x")
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store.expire_pending_elicitation_requests().await.unwrap(),
        1
    );
    assert_eq!(
        store
            .get_elicitation_request(&workspace.id, &other.id)
            .await
            .unwrap()
            .status,
        ElicitationStatus::Expired
    );
    assert!(
        store
            .list_pending_elicitation_requests(&workspace.id, None)
            .await
            .unwrap()
            .is_empty()
    );
}

fn rule(server_id: &switchboard_core::ServerId, policy: ApprovalPolicy) -> NewToolRule {
    NewToolRule {
        server_id: server_id.clone(),
        tool_name: "search".into(),
        policy,
        pin_hash: Some("pin-1".into()),
        updated_by: None,
    }
}

async fn bud_rules_and_user_decisions_are_separate_scopes(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "kg").await;
    let bud = store
        .create_bud(&workspace.id, plain_bud("Researcher"))
        .await
        .unwrap();
    let bud_scope = ToolRuleScope::Bud(bud.id.clone());
    let user_scope = ToolRuleScope::User(alice.id.clone());
    let set = store
        .set_tool_rule(
            &workspace.id,
            &bud_scope,
            NewToolRule {
                updated_by: Some(alice.id.clone()),
                ..rule(&server.id, ApprovalPolicy::AlwaysDeny)
            },
        )
        .await
        .unwrap();
    assert_eq!(set.scope, bud_scope);
    assert_eq!(set.policy, ApprovalPolicy::AlwaysDeny);
    assert_eq!(set.updated_by.as_ref(), Some(&alice.id));
    assert_eq!(
        store
            .get_tool_rule(&workspace.id, &user_scope, &server.id, "search")
            .await
            .unwrap(),
        None
    );
    let remembered = store
        .set_tool_rule(
            &workspace.id,
            &user_scope,
            rule(&server.id, ApprovalPolicy::AlwaysAllow),
        )
        .await
        .unwrap();
    assert_eq!(remembered.updated_by.as_ref(), Some(&alice.id));
    assert_eq!(remembered.pin_hash.as_deref(), Some("pin-1"));
    // Replacing keeps one row per tool.
    let replaced = store
        .set_tool_rule(
            &workspace.id,
            &user_scope,
            NewToolRule {
                pin_hash: Some("pin-2".into()),
                ..rule(&server.id, ApprovalPolicy::AlwaysAllow)
            },
        )
        .await
        .unwrap();
    assert_eq!(replaced.pin_hash.as_deref(), Some("pin-2"));
    assert_eq!(replaced.created_at, remembered.created_at);
    assert_eq!(
        store
            .list_tool_rules(&workspace.id, &user_scope)
            .await
            .unwrap(),
        vec![replaced]
    );
    assert_eq!(
        store
            .list_tool_rules(&workspace.id, &bud_scope)
            .await
            .unwrap(),
        vec![set]
    );
    let for_server = store
        .list_server_tool_rules(&workspace.id, &server.id)
        .await
        .unwrap();
    assert_eq!(
        for_server
            .iter()
            .map(|rule| rule.scope.clone())
            .collect::<Vec<_>>(),
        vec![bud_scope.clone(), user_scope.clone()]
    );
    // Someone else cannot record a decision in Alice's name.
    let bob = store
        .create_user(&workspace.id, "bob", UserRole::Member)
        .await
        .unwrap();
    assert!(matches!(
        store
            .set_tool_rule(
                &workspace.id,
                &user_scope,
                NewToolRule {
                    updated_by: Some(bob.id.clone()),
                    ..rule(&server.id, ApprovalPolicy::AlwaysAllow)
                }
            )
            .await,
        Err(StoreError::InvalidInput {
            field: "updated_by",
            ..
        })
    ));
    store
        .delete_tool_rule(&workspace.id, &bud_scope, &server.id, "search")
        .await
        .unwrap();
    assert!(
        store
            .delete_tool_rule(&workspace.id, &bud_scope, &server.id, "search")
            .await
            .unwrap_err()
            .is_not_found()
    );
    // Deleting the bud or server removes its rules.
    store
        .set_tool_rule(
            &workspace.id,
            &bud_scope,
            rule(&server.id, ApprovalPolicy::AskUser),
        )
        .await
        .unwrap();
    store.delete_bud(&workspace.id, &bud.id).await.unwrap();
    assert!(
        store
            .list_tool_rules(&workspace.id, &bud_scope)
            .await
            .unwrap()
            .is_empty()
    );
    store
        .delete_server(&workspace.id, &server.id)
        .await
        .unwrap();
    assert!(
        store
            .list_tool_rules(&workspace.id, &user_scope)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn rules_need_their_parents_in_the_workspace(test: TestStore) {
    let store = &test.store;
    let (acme, alice) = workspace_with_owner(store, "acme").await;
    let (globex, _) = workspace_with_owner(store, "globex").await;
    let acme_server = add_stdio_server(store, &acme.id, "kg").await;
    let user_scope = ToolRuleScope::User(alice.id.clone());
    // Alice and the server are acme's: globex cannot attach a rule to them.
    let error = store
        .set_tool_rule(
            &globex.id,
            &user_scope,
            rule(&acme_server.id, ApprovalPolicy::AlwaysAllow),
        )
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error:?}");
    let error = store
        .set_tool_rule(
            &acme.id,
            &ToolRuleScope::Bud("no-such-bud".into()),
            rule(&acme_server.id, ApprovalPolicy::AlwaysAllow),
        )
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error:?}");
}

async fn pin_snapshots_and_server_instructions_round_trip(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "kg").await;
    let definition = switchboard_core::ToolDefinition {
        annotations: Some(json!({"readOnlyHint": true})),
        output_schema: Some(json!({"type": "object"})),
        ..tool("search", "Searches the graph")
    };
    assert_eq!(
        store
            .get_tool_pin_snapshot(&workspace.id, &server.id, "h1")
            .await
            .unwrap(),
        None
    );
    store
        .save_tool_pin_snapshot(
            &workspace.id,
            &server.id,
            "h1",
            &definition,
            Some("Be nice"),
        )
        .await
        .unwrap();
    // The hash names its content: saving again changes nothing.
    store
        .save_tool_pin_snapshot(&workspace.id, &server.id, "h1", &tool("other", "x"), None)
        .await
        .unwrap();
    let snapshot = store
        .get_tool_pin_snapshot(&workspace.id, &server.id, "h1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(snapshot.definition, definition);
    assert_eq!(snapshot.instructions.as_deref(), Some("Be nice"));

    assert_eq!(
        store
            .get_server_instructions(&workspace.id, &server.id)
            .await
            .unwrap(),
        None
    );
    store
        .record_server_instructions(&workspace.id, &server.id, Some("Use carefully"))
        .await
        .unwrap();
    store
        .record_server_instructions(&workspace.id, &server.id, None)
        .await
        .unwrap();
    let observed = store
        .get_server_instructions(&workspace.id, &server.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(observed.instructions, None);
    let (globex, _) = workspace_with_owner(store, "globex").await;
    assert!(
        store
            .record_server_instructions(&globex.id, &server.id, Some("x"))
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .save_tool_pin_snapshot(&globex.id, &server.id, "h2", &definition, None)
            .await
            .unwrap_err()
            .is_not_found()
    );
}

/// The lifecycle approval and elicitation requests share (the store's one pending-request
/// piece): of eight concurrent resolutions exactly one wins and the others are told the status
/// that won; another workspace sees neither request; a resolution cannot be `pending`.
async fn both_kinds_of_pending_request_are_resolved_exactly_once_under_races(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let (elsewhere, _) = workspace_with_owner(store, "globex").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let approval = store
        .create_approval_request(
            &workspace.id,
            new_approval(&conversation.id, &alice.id, None),
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

    assert!(matches!(
        store
            .resolve_approval_request(
                &workspace.id,
                &approval.id,
                decided_by(&alice.id, ApprovalStatus::Pending)
            )
            .await,
        Err(StoreError::InvalidInput { .. })
    ));
    assert!(matches!(
        store
            .resolve_elicitation_request(
                &workspace.id,
                &elicitation.id,
                ElicitationStatus::Pending,
                "x"
            )
            .await,
        Err(StoreError::InvalidInput { .. })
    ));

    let mut approval_races = tokio::task::JoinSet::new();
    for index in 0..8 {
        let status = if index % 2 == 0 {
            ApprovalStatus::Approved
        } else {
            ApprovalStatus::Denied
        };
        let (store, workspace_id, id) = (store.clone(), workspace.id.clone(), approval.id.clone());
        let resolution = decided_by(&alice.id, status);
        approval_races.spawn(async move {
            store
                .resolve_approval_request(&workspace_id, &id, resolution)
                .await
        });
    }
    let approval_results = approval_races.join_all().await;
    let won: Vec<_> = approval_results
        .iter()
        .filter_map(|result| result.as_ref().ok())
        .collect();
    assert_eq!(won.len(), 1, "{approval_results:?}");
    let winner = won[0].status.as_str();
    for result in &approval_results {
        if let Err(error) = result {
            assert!(
                matches!(error, StoreError::Conflict(message) if message == &format!("the approval request is already {winner}")),
                "{error:?}"
            );
        }
    }

    let mut elicitation_races = tokio::task::JoinSet::new();
    for index in 0..8 {
        let status = if index % 2 == 0 {
            ElicitationStatus::Accepted
        } else {
            ElicitationStatus::Declined
        };
        let (store, workspace_id, id) =
            (store.clone(), workspace.id.clone(), elicitation.id.clone());
        let responded_by = alice.id.as_str().to_owned();
        elicitation_races.spawn(async move {
            store
                .resolve_elicitation_request(&workspace_id, &id, status, &responded_by)
                .await
        });
    }
    let elicitation_results = elicitation_races.join_all().await;
    let won: Vec<_> = elicitation_results
        .iter()
        .filter_map(|result| result.as_ref().ok())
        .collect();
    assert_eq!(won.len(), 1, "{elicitation_results:?}");
    let winner = won[0].status.as_str();
    for result in &elicitation_results {
        if let Err(error) = result {
            assert!(
                matches!(error, StoreError::Conflict(message) if message == &format!("the elicitation request is already {winner}")),
                "{error:?}"
            );
        }
    }

    assert!(matches!(
        store
            .get_approval_request(&elsewhere.id, &approval.id)
            .await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store
            .resolve_elicitation_request(
                &elsewhere.id,
                &elicitation.id,
                ElicitationStatus::Cancelled,
                "x"
            )
            .await,
        Err(StoreError::NotFound { .. })
    ));
    // Nothing is left pending, so a recovery sweep changes nothing.
    assert_eq!(store.expire_pending_approval_requests().await.unwrap(), 0);
    assert_eq!(
        store.expire_pending_elicitation_requests().await.unwrap(),
        0
    );
}
