//! The gate and decisions together: rules, asking, approving, denying, timing out, being
//! cancelled, remembering, deciding for someone else, parallel requests, restarts.

use crate::support::{Recorder, World, tool};
use serde_json::json;
use std::time::Duration;
use switchboard_approvals::{
    ApprovalChoice, ApprovalConfig, ApprovalError, ApprovalListing, Remember,
};
use switchboard_chat::GateDecision;
use switchboard_core::ApprovalPolicy;
use switchboard_store::ApprovalStatus;

fn short_timeout() -> ApprovalConfig {
    ApprovalConfig {
        timeout_ms: Some(300),
        ..ApprovalConfig::default()
    }
}

#[tokio::test]
async fn explicit_policies_decide_without_asking_and_no_policy_asks() {
    let world = World::new(ApprovalConfig::default()).await;
    let read = tool("read_file", "Reads a file");
    let delete = tool("delete_file", "Deletes a file");
    world.sync(&[read.clone(), delete.clone()], None).await;
    world
        .approvals
        .set_tool_policy(
            &world.admin,
            &world.server_id(),
            "read_file",
            ApprovalPolicy::AlwaysAllow,
        )
        .await
        .unwrap();
    world
        .approvals
        .set_tool_policy(
            &world.admin,
            &world.server_id(),
            "delete_file",
            ApprovalPolicy::AlwaysDeny,
        )
        .await
        .unwrap();
    let gate = world.approvals.gate();
    let recorder = Recorder::default();
    let request = world
        .request(
            &world.alice,
            &world.alices_conversation,
            &read,
            json!({"path": "/a"}),
        )
        .await;
    assert_eq!(
        gate.review(&request, &recorder.sink()).await,
        GateDecision::Allow {
            decided_by: "policy:workspace".into()
        }
    );
    let request = world
        .request(
            &world.alice,
            &world.alices_conversation,
            &delete,
            json!({"path": "/a"}),
        )
        .await;
    let GateDecision::Deny { reason, decided_by } = gate.review(&request, &recorder.sink()).await
    else {
        panic!("ALWAYS_DENY must deny");
    };
    assert_eq!(decided_by, "policy:workspace");
    assert!(reason.contains("ALWAYS_DENY"), "{reason}");
    assert!(recorder.all().is_empty(), "rules decide silently");

    // Deleting the policy brings back the default: ASK_USER.
    world
        .approvals
        .delete_tool_policy(&world.admin, &world.server_id(), "delete_file")
        .await
        .unwrap();
    let request = world
        .request(&world.alice, &world.alices_conversation, &delete, json!({}))
        .await;
    let waiting = tokio::spawn({
        let gate = gate.clone();
        let sink = recorder.sink();
        async move { gate.review(&request, &sink).await }
    });
    let asked = recorder.approval_required().await;
    assert_eq!(asked.tool, "delete_file");
    assert_eq!(asked.server, "files");
    world
        .approvals
        .decide(
            &world.alice,
            &asked.approval_id,
            ApprovalChoice::Approve,
            Remember::Once,
        )
        .await
        .unwrap();
    assert_eq!(
        waiting.await.unwrap(),
        GateDecision::Allow {
            decided_by: world.alice.user_id.as_str().into()
        }
    );
    let resolved = recorder.resolved();
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved[0].decision, "approved");
}

#[tokio::test]
async fn read_only_hints_never_grant_approval() {
    let world = World::new(ApprovalConfig::default()).await;
    let mut claims_read_only = tool("wipe_disk", "Totally harmless");
    claims_read_only.annotations = Some(json!({"readOnlyHint": true, "destructiveHint": false}));
    world.sync(&[claims_read_only.clone()], None).await;
    let gate = world.approvals.gate();
    let recorder = Recorder::default();
    let request = world
        .request(
            &world.alice,
            &world.alices_conversation,
            &claims_read_only,
            json!({}),
        )
        .await;
    request.cancellation.cancel();
    let decision = gate.review(&request, &recorder.sink()).await;
    assert!(
        matches!(decision, GateDecision::Deny { .. }),
        "{decision:?}"
    );
    assert_eq!(recorder.all().len(), 2, "it asked (and was then cancelled)");
}

#[tokio::test]
async fn deny_timeout_and_cancellation_each_deny_with_a_reason() {
    let world = World::new(short_timeout()).await;
    let read = tool("read_file", "Reads");
    world.sync(std::slice::from_ref(&read), None).await;
    let gate = world.approvals.gate();

    // Denied by the owner.
    let recorder = Recorder::default();
    let request = world
        .request(&world.alice, &world.alices_conversation, &read, json!({}))
        .await;
    let waiting = tokio::spawn({
        let (gate, sink) = (gate.clone(), recorder.sink());
        async move { gate.review(&request, &sink).await }
    });
    let asked = recorder.approval_required().await;
    world
        .approvals
        .decide(
            &world.alice,
            &asked.approval_id,
            ApprovalChoice::Deny,
            Remember::Once,
        )
        .await
        .unwrap();
    let GateDecision::Deny { reason, .. } = waiting.await.unwrap() else {
        panic!("denied");
    };
    assert!(reason.contains("denied"), "{reason}");

    // Nobody answers: expired after the configured timeout.
    let recorder = Recorder::default();
    let request = world
        .request(&world.alice, &world.alices_conversation, &read, json!({}))
        .await;
    let GateDecision::Deny { reason, decided_by } = gate.review(&request, &recorder.sink()).await
    else {
        panic!("expired");
    };
    assert_eq!(decided_by, "timeout");
    assert!(reason.contains("within"), "{reason}");
    let asked = recorder.approval_required().await;
    let stored = world
        .store
        .get_approval_request(&world.workspace.id, &asked.approval_id)
        .await
        .unwrap();
    assert_eq!(stored.status, ApprovalStatus::Expired);
    assert_eq!(recorder.resolved()[0].decision, "expired");
    // A decision after expiry is refused clearly.
    let late = world
        .approvals
        .decide(
            &world.alice,
            &asked.approval_id,
            ApprovalChoice::Approve,
            Remember::Once,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(late, ApprovalError::AlreadySettled(ref m) if m.contains("expired")),
        "{late:?}"
    );

    // The answer ends while it waits (client gone): cancelled.
    let recorder = Recorder::default();
    let request = world
        .request(&world.alice, &world.alices_conversation, &read, json!({}))
        .await;
    let cancel = request.cancellation.clone();
    let waiting = tokio::spawn({
        let (gate, sink) = (gate.clone(), recorder.sink());
        async move { gate.review(&request, &sink).await }
    });
    recorder.approval_required().await;
    cancel.cancel();
    let GateDecision::Deny { decided_by, .. } = waiting.await.unwrap() else {
        panic!("cancelled");
    };
    assert_eq!(decided_by, "cancelled");
    assert_eq!(recorder.resolved()[0].decision, "cancelled");
}

#[tokio::test]
async fn only_the_owner_or_an_admin_decides() {
    let world = World::new(ApprovalConfig::default()).await;
    let read = tool("read_file", "Reads");
    world.sync(std::slice::from_ref(&read), None).await;
    let gate = world.approvals.gate();
    let recorder = Recorder::default();
    let request = world
        .request(&world.alice, &world.alices_conversation, &read, json!({}))
        .await;
    let waiting = tokio::spawn({
        let (gate, sink) = (gate.clone(), recorder.sink());
        async move { gate.review(&request, &sink).await }
    });
    let asked = recorder.approval_required().await;
    let refused = world
        .approvals
        .decide(
            &world.bob,
            &asked.approval_id,
            ApprovalChoice::Approve,
            Remember::Once,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ApprovalError::Forbidden(_)),
        "{refused:?}"
    );
    // Bob does not see Alice's pending request, nor may he list her conversation's.
    assert!(
        world
            .approvals
            .list_approvals(&world.bob, ApprovalListing::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        world
            .approvals
            .list_approvals(
                &world.bob,
                ApprovalListing {
                    conversation_id: Some(world.alices_conversation.clone()),
                    ..ApprovalListing::default()
                }
            )
            .await,
        Err(ApprovalError::NotFound("conversation"))
    ));
    assert_eq!(
        world
            .approvals
            .list_approvals(&world.alice, ApprovalListing::default())
            .await
            .unwrap()
            .len(),
        1
    );
    world
        .approvals
        .decide(
            &world.admin,
            &asked.approval_id,
            ApprovalChoice::Approve,
            Remember::Once,
        )
        .await
        .unwrap();
    assert_eq!(
        waiting.await.unwrap(),
        GateDecision::Allow {
            decided_by: world.admin.user_id.as_str().into()
        }
    );
    // Deciding twice is a conflict, not a second decision.
    assert!(matches!(
        world
            .approvals
            .decide(
                &world.alice,
                &asked.approval_id,
                ApprovalChoice::Deny,
                Remember::Once
            )
            .await,
        Err(ApprovalError::AlreadySettled(_))
    ));
}

#[tokio::test]
async fn parallel_requests_of_two_conversations_are_decided_separately() {
    let world = World::new(ApprovalConfig::default()).await;
    let read = tool("read_file", "Reads");
    world.sync(std::slice::from_ref(&read), None).await;
    let gate = world.approvals.gate();
    let alices = Recorder::default();
    let bobs = Recorder::default();
    let mut waiting = Vec::new();
    let mut tool_calls = Vec::new();
    for (who, conversation, recorder) in [
        (&world.alice, &world.alices_conversation, &alices),
        (&world.alice, &world.alices_conversation, &alices),
        (&world.bob, &world.bobs_conversation, &bobs),
    ] {
        let request = world.request(who, conversation, &read, json!({})).await;
        tool_calls.push(request.tool_call_id.clone());
        let (gate, sink) = (gate.clone(), recorder.sink());
        waiting.push(tokio::spawn(
            async move { gate.review(&request, &sink).await },
        ));
    }
    // The approval id of each of Alice's calls, by the call it is about.
    let alice_ids = loop {
        let asked: Vec<_> = alices
            .all()
            .into_iter()
            .filter_map(|event| match event {
                switchboard_chat::ChatEvent::ApprovalRequired(required) => Some(required),
                _ => None,
            })
            .collect();
        if asked.len() == 2 {
            break tool_calls[..2]
                .iter()
                .map(|call| {
                    asked
                        .iter()
                        .find(|required| &required.tool_call_id == call)
                        .unwrap()
                        .approval_id
                        .clone()
                })
                .collect::<Vec<_>>();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let bobs_id = bobs.approval_required().await.approval_id;
    // Decide in an order unlike the requests': each waiting call gets its own answer.
    world
        .approvals
        .decide(&world.bob, &bobs_id, ApprovalChoice::Deny, Remember::Once)
        .await
        .unwrap();
    world
        .approvals
        .decide(
            &world.alice,
            &alice_ids[1],
            ApprovalChoice::Approve,
            Remember::Once,
        )
        .await
        .unwrap();
    world
        .approvals
        .decide(
            &world.alice,
            &alice_ids[0],
            ApprovalChoice::Deny,
            Remember::Once,
        )
        .await
        .unwrap();
    let decisions: Vec<GateDecision> = futures::future::join_all(waiting)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(matches!(decisions[0], GateDecision::Deny { .. }));
    assert!(matches!(decisions[1], GateDecision::Allow { .. }));
    assert!(matches!(decisions[2], GateDecision::Deny { .. }));
    assert_eq!(
        bobs.resolved().len(),
        1,
        "Bob's stream only hears Bob's request"
    );
    assert_eq!(alices.resolved().len(), 2);
}

#[tokio::test]
async fn always_is_remembered_for_the_owner_and_always_deny_too() {
    let world = World::new(ApprovalConfig::default()).await;
    let read = tool("read_file", "Reads");
    let write = tool("write_file", "Writes");
    world.sync(&[read.clone(), write.clone()], None).await;
    let gate = world.approvals.gate();
    for (definition, choice) in [
        (&read, ApprovalChoice::Approve),
        (&write, ApprovalChoice::Deny),
    ] {
        let recorder = Recorder::default();
        let request = world
            .request(
                &world.alice,
                &world.alices_conversation,
                definition,
                json!({}),
            )
            .await;
        let waiting = tokio::spawn({
            let (gate, sink) = (gate.clone(), recorder.sink());
            async move { gate.review(&request, &sink).await }
        });
        let asked = recorder.approval_required().await;
        let outcome = world
            .approvals
            .decide(&world.alice, &asked.approval_id, choice, Remember::Always)
            .await
            .unwrap();
        assert!(outcome.remembered);
        waiting.await.unwrap();
    }
    let recorder = Recorder::default();
    let request = world
        .request(&world.alice, &world.alices_conversation, &read, json!({}))
        .await;
    assert_eq!(
        gate.review(&request, &recorder.sink()).await,
        GateDecision::Allow {
            decided_by: format!("remembered:{}", world.alice.user_id)
        }
    );
    let request = world
        .request(&world.alice, &world.alices_conversation, &write, json!({}))
        .await;
    assert!(matches!(
        gate.review(&request, &recorder.sink()).await,
        GateDecision::Deny { .. }
    ));
    assert!(recorder.all().is_empty(), "remembered decisions do not ask");
    // Bob's calls are still asked about: Alice's choice is hers.
    let request = world
        .request(&world.bob, &world.bobs_conversation, &read, json!({}))
        .await;
    request.cancellation.cancel();
    gate.review(&request, &recorder.sink()).await;
    assert!(!recorder.all().is_empty());
}

#[tokio::test]
async fn requests_pending_at_a_restart_are_expired_and_still_listed() {
    let world = World::new(ApprovalConfig::default()).await;
    let read = tool("read_file", "Reads");
    world.sync(std::slice::from_ref(&read), None).await;
    let gate = world.approvals.gate();
    let recorder = Recorder::default();
    let request = world
        .request(&world.alice, &world.alices_conversation, &read, json!({}))
        .await;
    let waiting = tokio::spawn({
        let (gate, sink) = (gate.clone(), recorder.sink());
        async move { gate.review(&request, &sink).await }
    });
    let asked = recorder.approval_required().await;
    waiting.abort(); // the process "died" with the request pending
    let recovered = world.approvals.recover_after_restart().await.unwrap();
    assert_eq!(recovered.approvals_expired, 1);
    let history = world
        .approvals
        .list_approvals(
            &world.alice,
            ApprovalListing {
                conversation_id: Some(world.alices_conversation.clone()),
                include_settled: true,
                all_users: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].id, asked.approval_id);
    assert_eq!(history[0].status, ApprovalStatus::Expired);
    assert_eq!(history[0].decided_by.as_deref(), Some("restart"));
}

#[tokio::test]
async fn a_bud_policy_overrides_the_workspace_policy_in_its_conversations() {
    let world = World::new(ApprovalConfig::default()).await;
    let read = tool("read_file", "Reads");
    world.sync(std::slice::from_ref(&read), None).await;
    let bud = world
        .store
        .create_bud(
            &world.workspace.id,
            switchboard_store::NewBud {
                name: "Careful".into(),
                system_prompt: String::new(),
                provider: None,
                model: None,
                mcp_config: json!({}),
                owner_user_id: None,
                fallbacks: Vec::new(),
            },
        )
        .await
        .unwrap();
    let buds_conversation = world
        .store
        .create_conversation(
            &world.workspace.id,
            switchboard_store::NewConversation {
                owner_user_id: world.alice.user_id.clone(),
                bud_id: Some(bud.id.clone()),
                title: "with a bud".into(),
                mcp_config_overrides: None,
                model_choice: Default::default(),
            },
        )
        .await
        .unwrap()
        .id;
    world
        .approvals
        .set_tool_policy(
            &world.admin,
            &world.server_id(),
            "read_file",
            ApprovalPolicy::AlwaysAllow,
        )
        .await
        .unwrap();
    let view = world
        .approvals
        .set_bud_policy(
            &world.admin,
            &bud.id,
            &world.server_id(),
            "read_file",
            ApprovalPolicy::AlwaysDeny,
        )
        .await
        .unwrap();
    assert_eq!(view.bud_id.as_ref(), Some(&bud.id));
    assert_eq!(view.pin_matches, Some(true));
    let gate = world.approvals.gate();
    let recorder = Recorder::default();
    let in_bud = world
        .request(&world.alice, &buds_conversation, &read, json!({}))
        .await;
    assert!(matches!(
        gate.review(&in_bud, &recorder.sink()).await,
        GateDecision::Deny { ref decided_by, .. } if decided_by == "policy:bud"
    ));
    let elsewhere = world
        .request(&world.alice, &world.alices_conversation, &read, json!({}))
        .await;
    assert!(matches!(
        gate.review(&elsewhere, &recorder.sink()).await,
        GateDecision::Allow { ref decided_by } if decided_by == "policy:workspace"
    ));
    assert_eq!(
        world
            .approvals
            .list_bud_policies(&world.workspace.id, &bud.id)
            .await
            .unwrap()
            .len(),
        1
    );
    // Without the bud's policy the workspace's applies again.
    world
        .approvals
        .delete_bud_policy(&world.admin, &bud.id, &world.server_id(), "read_file")
        .await
        .unwrap();
    let in_bud = world
        .request(&world.alice, &buds_conversation, &read, json!({}))
        .await;
    assert!(matches!(
        gate.review(&in_bud, &recorder.sink()).await,
        GateDecision::Allow { .. }
    ));
    assert!(recorder.all().is_empty());
}
