//! Elicitation through the responder the MCP client calls: routed to the conversation whose
//! call is running, answered (checked against the schema, defaults applied), declined, timed
//! out; refused when it cannot be attributed.

use crate::support::{Recorder, World, tool};
use serde_json::json;
use std::time::Duration;
use switchboard_approvals::{ApprovalConfig, ApprovalError, ElicitationAnswer};
use switchboard_chat::{CallReport, ChatEvent, GateDecision};
use switchboard_core::{ApprovalPolicy, ElicitationId, ToolCallState};
use switchboard_mcp_client::{ElicitationRequest, ElicitationResponse};

fn form() -> ElicitationRequest {
    ElicitationRequest {
        server_name: "files".into(),
        conversation_id: None,
        message: "Which folder?\u{1b}[2J".into(),
        requested_schema: json!({
            "type": "object",
            "properties": {
                "folder": {"type": "string", "minLength": 1},
                "recursive": {"type": "boolean", "default": true}
            },
            "required": ["folder"]
        }),
    }
}

async fn elicitation_id(recorder: &Recorder) -> (ElicitationId, String) {
    for _ in 0..500 {
        if let Some(found) = recorder.all().into_iter().find_map(|event| match event {
            ChatEvent::ElicitationRequired(required) => {
                Some((required.elicitation_id, required.message))
            }
            _ => None,
        }) {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no elicitation_required event");
}

#[tokio::test]
async fn a_form_reaches_the_running_calls_conversation_and_its_owner_answers() {
    let world = World::new(ApprovalConfig::default()).await;
    let read = tool("read_file", "Reads");
    world.sync(std::slice::from_ref(&read), None).await;
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
    let responder = world.approvals.elicitation_responder();
    // No call running: nobody to ask.
    assert_eq!(
        responder.respond(form()).await,
        ElicitationResponse::Decline
    );

    let gate = world.approvals.gate();
    let recorder = Recorder::default();
    let request = world
        .request(&world.alice, &world.alices_conversation, &read, json!({}))
        .await;
    assert!(matches!(
        gate.review(&request, &recorder.sink()).await,
        GateDecision::Allow { .. }
    ));
    let answering = tokio::spawn({
        let responder = responder.clone();
        async move { responder.respond(form()).await }
    });
    let (id, message) = elicitation_id(&recorder).await;
    assert_eq!(message, "Which folder?", "the message is sanitised");
    // Bob may not answer Alice's form; a wrong answer is refused and the form stays open.
    assert!(matches!(
        world
            .approvals
            .answer_elicitation(&world.bob, &id, ElicitationAnswer::Decline)
            .await,
        Err(ApprovalError::Forbidden(_))
    ));
    let wrong = world
        .approvals
        .answer_elicitation(
            &world.alice,
            &id,
            ElicitationAnswer::Accept(Some(json!({"folder": ""}))),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(wrong, ApprovalError::InvalidInput { ref field, .. } if field == "content"),
        "{wrong:?}"
    );
    assert_eq!(
        world
            .approvals
            .pending_elicitations(&world.alice, false)
            .await
            .unwrap()
            .len(),
        1
    );
    world
        .approvals
        .answer_elicitation(
            &world.alice,
            &id,
            ElicitationAnswer::Accept(Some(json!({"folder": "/docs"}))),
        )
        .await
        .unwrap();
    assert_eq!(
        answering.await.unwrap(),
        ElicitationResponse::Accept(json!({"folder": "/docs", "recursive": true}))
    );

    // Once the call finished, forms from that server have nowhere to go.
    gate.call_finished(&CallReport {
        request,
        decision: GateDecision::Allow {
            decided_by: "policy:workspace".into(),
        },
        final_state: ToolCallState::Completed,
        duration: Some(Duration::from_millis(5)),
        result_bytes: Some(10),
        error: None,
    })
    .await;
    assert_eq!(
        responder.respond(form()).await,
        ElicitationResponse::Decline
    );
}

#[tokio::test]
async fn forms_of_two_conversations_on_one_server_are_declined_not_guessed() {
    let world = World::new(ApprovalConfig::default()).await;
    let read = tool("read_file", "Reads");
    world.sync(std::slice::from_ref(&read), None).await;
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
    let gate = world.approvals.gate();
    for (who, conversation) in [
        (&world.alice, &world.alices_conversation),
        (&world.bob, &world.bobs_conversation),
    ] {
        let request = world.request(who, conversation, &read, json!({})).await;
        gate.review(&request, &Recorder::default().sink()).await;
    }
    assert_eq!(
        world
            .approvals
            .elicitation_responder()
            .respond(form())
            .await,
        ElicitationResponse::Decline
    );
    // When the MCP client knows whose call carried the request, it goes to that conversation.
    let mut bobs_form = form();
    bobs_form.conversation_id = Some(world.bobs_conversation.clone());
    let answering = tokio::spawn({
        let responder = world.approvals.elicitation_responder();
        async move { responder.respond(bobs_form).await }
    });
    let pending = loop {
        let pending = world
            .approvals
            .pending_elicitations(&world.bob, false)
            .await
            .unwrap();
        if !pending.is_empty() {
            break pending;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(pending[0].conversation_id, world.bobs_conversation);
    assert!(
        world
            .approvals
            .pending_elicitations(&world.alice, false)
            .await
            .unwrap()
            .is_empty()
    );
    world
        .approvals
        .answer_elicitation(&world.bob, &pending[0].id, ElicitationAnswer::Decline)
        .await
        .unwrap();
    assert_eq!(answering.await.unwrap(), ElicitationResponse::Decline);
}

#[tokio::test]
async fn an_unanswered_form_is_cancelled_and_declines_reach_the_upstream() {
    let world = World::new(ApprovalConfig {
        elicitation_timeout_secs: 1,
        ..ApprovalConfig::default()
    })
    .await;
    let read = tool("read_file", "Reads");
    world.sync(std::slice::from_ref(&read), None).await;
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
    let gate = world.approvals.gate();
    let recorder = Recorder::default();
    let request = world
        .request(&world.alice, &world.alices_conversation, &read, json!({}))
        .await;
    gate.review(&request, &recorder.sink()).await;
    let responder = world.approvals.elicitation_responder();
    assert_eq!(responder.respond(form()).await, ElicitationResponse::Cancel);
    let (expired, _) = elicitation_id(&recorder).await;
    let late = world
        .approvals
        .answer_elicitation(&world.alice, &expired, ElicitationAnswer::Cancel)
        .await
        .unwrap_err();
    assert!(matches!(late, ApprovalError::AlreadySettled(_)));

    let answering = tokio::spawn({
        let responder = responder.clone();
        async move { responder.respond(form()).await }
    });
    let id = loop {
        let ids: Vec<ElicitationId> = recorder
            .all()
            .into_iter()
            .filter_map(|event| match event {
                ChatEvent::ElicitationRequired(required) => Some(required.elicitation_id),
                _ => None,
            })
            .collect();
        if ids.len() == 2 {
            break ids[1].clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    world
        .approvals
        .answer_elicitation(&world.alice, &id, ElicitationAnswer::Decline)
        .await
        .unwrap();
    assert_eq!(answering.await.unwrap(), ElicitationResponse::Decline);
}
