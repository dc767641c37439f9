//! The gate's one read: a call's bud, server instructions, bud rule, workspace policy and the
//! owner's remembered decision, each only for that conversation, server, tool and owner.

use crate::fixtures::{
    add_stdio_server, new_conversation, plain_bud, start_conversation, workspace_with_owner,
};
use crate::harness::{TestStore, store_test};
use switchboard_core::{ApprovalPolicy, ConversationId, ServerId, UserId, WorkspaceId};
use switchboard_store::{
    GateInputs, GateInputsKey, GateRule, NewConversation, NewToolPolicy, NewToolRule, Store,
    StoreError, ToolRuleScope, UserRole,
};

store_test!(
    the_gates_inputs_are_read_for_exactly_one_call,
    a_conversation_without_rules_reads_as_empty_and_a_foreign_one_is_not_found
);

fn key<'a>(
    workspace_id: &'a WorkspaceId,
    conversation_id: &'a ConversationId,
    owner: &'a UserId,
    server_id: &'a ServerId,
    tool_name: &'a str,
) -> GateInputsKey<'a> {
    GateInputsKey {
        workspace_id,
        conversation_id,
        owner,
        server_id,
        tool_name,
    }
}

async fn set_rule(
    store: &Store,
    workspace_id: &WorkspaceId,
    scope: ToolRuleScope,
    server_id: &ServerId,
    tool_name: &str,
    policy: ApprovalPolicy,
    pin: &str,
) {
    store
        .set_tool_rule(
            workspace_id,
            &scope,
            NewToolRule {
                server_id: server_id.clone(),
                tool_name: tool_name.into(),
                policy,
                pin_hash: Some(pin.into()),
                updated_by: None,
            },
        )
        .await
        .unwrap();
}

async fn the_gates_inputs_are_read_for_exactly_one_call(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let bob = store
        .create_user(&workspace.id, "bob", UserRole::Member)
        .await
        .unwrap();
    let kg = add_stdio_server(store, &workspace.id, "kg").await;
    let other = add_stdio_server(store, &workspace.id, "other").await;
    let bud = store
        .create_bud(&workspace.id, plain_bud("Researcher"))
        .await
        .unwrap();
    let conversation = store
        .create_conversation(
            &workspace.id,
            NewConversation {
                bud_id: Some(bud.id.clone()),
                ..new_conversation(&alice)
            },
        )
        .await
        .unwrap();
    store
        .record_server_instructions(&workspace.id, &kg.id, Some("Use search first."))
        .await
        .unwrap();
    store
        .record_server_instructions(&workspace.id, &other.id, Some("Not these."))
        .await
        .unwrap();
    let bud_scope = || ToolRuleScope::Bud(bud.id.clone());
    set_rule(
        store,
        &workspace.id,
        bud_scope(),
        &kg.id,
        "search",
        ApprovalPolicy::AskUser,
        "bud-pin",
    )
    .await;
    set_rule(
        store,
        &workspace.id,
        bud_scope(),
        &kg.id,
        "delete",
        ApprovalPolicy::AlwaysDeny,
        "x",
    )
    .await;
    set_rule(
        store,
        &workspace.id,
        bud_scope(),
        &other.id,
        "search",
        ApprovalPolicy::AlwaysDeny,
        "x",
    )
    .await;
    let alices = ToolRuleScope::User(alice.id.clone());
    let bobs = ToolRuleScope::User(bob.id.clone());
    set_rule(
        store,
        &workspace.id,
        alices,
        &kg.id,
        "search",
        ApprovalPolicy::AlwaysAllow,
        "alice-pin",
    )
    .await;
    set_rule(
        store,
        &workspace.id,
        bobs,
        &kg.id,
        "search",
        ApprovalPolicy::AlwaysDeny,
        "bob-pin",
    )
    .await;
    store
        .set_tool_policy(
            &workspace.id,
            NewToolPolicy {
                server_id: kg.id.clone(),
                tool_name: "search".into(),
                policy: ApprovalPolicy::AlwaysAllow,
                pinned_definition_hash: Some("workspace-pin".into()),
                updated_by: Some(alice.id.clone()),
            },
        )
        .await
        .unwrap();

    let read = store
        .get_gate_inputs(key(
            &workspace.id,
            &conversation.id,
            &alice.id,
            &kg.id,
            "search",
        ))
        .await
        .unwrap();
    assert_eq!(
        read,
        GateInputs {
            bud_id: Some(bud.id.clone()),
            instructions: Some("Use search first.".into()),
            bud_rule: Some(GateRule {
                policy: ApprovalPolicy::AskUser,
                pin_hash: Some("bud-pin".into()),
                updated_by: None,
            }),
            workspace_rule: Some(GateRule {
                policy: ApprovalPolicy::AlwaysAllow,
                pin_hash: Some("workspace-pin".into()),
                updated_by: Some(alice.id.clone()),
            }),
            owner_rule: Some(GateRule {
                policy: ApprovalPolicy::AlwaysAllow,
                pin_hash: Some("alice-pin".into()),
                updated_by: None,
            }),
        }
    );
    // Bob asked about the same call: his own decision, nobody else's.
    let as_bob = store
        .get_gate_inputs(key(
            &workspace.id,
            &conversation.id,
            &bob.id,
            &kg.id,
            "search",
        ))
        .await
        .unwrap();
    assert_eq!(
        as_bob.owner_rule.map(|rule| rule.pin_hash),
        Some(Some("bob-pin".into()))
    );
    // Another tool of the server: only the bud's rule for that tool.
    let delete = store
        .get_gate_inputs(key(
            &workspace.id,
            &conversation.id,
            &alice.id,
            &kg.id,
            "delete",
        ))
        .await
        .unwrap();
    assert_eq!(
        delete.bud_rule.map(|rule| rule.policy),
        Some(ApprovalPolicy::AlwaysDeny)
    );
    assert_eq!((delete.workspace_rule, delete.owner_rule), (None, None));
    assert_eq!(delete.instructions.as_deref(), Some("Use search first."));
    // Another server: its own instructions and rules.
    let elsewhere = store
        .get_gate_inputs(key(
            &workspace.id,
            &conversation.id,
            &alice.id,
            &other.id,
            "search",
        ))
        .await
        .unwrap();
    assert_eq!(elsewhere.instructions.as_deref(), Some("Not these."));
    assert_eq!(
        elsewhere.bud_rule.map(|rule| rule.pin_hash),
        Some(Some("x".into()))
    );
    assert_eq!(
        (elsewhere.workspace_rule, elsewhere.owner_rule),
        (None, None)
    );
}

async fn a_conversation_without_rules_reads_as_empty_and_a_foreign_one_is_not_found(
    test: TestStore,
) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let (elsewhere, mallory) = workspace_with_owner(store, "elsewhere").await;
    let server = add_stdio_server(store, &workspace.id, "kg").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let read = store
        .get_gate_inputs(key(
            &workspace.id,
            &conversation.id,
            &alice.id,
            &server.id,
            "search",
        ))
        .await
        .unwrap();
    assert_eq!(
        read,
        GateInputs {
            bud_id: None,
            instructions: None,
            bud_rule: None,
            workspace_rule: None,
            owner_rule: None,
        }
    );
    let foreign = store
        .get_gate_inputs(key(
            &elsewhere.id,
            &conversation.id,
            &mallory.id,
            &server.id,
            "search",
        ))
        .await;
    assert!(
        matches!(
            foreign,
            Err(StoreError::NotFound {
                entity: "conversation"
            })
        ),
        "{foreign:?}"
    );
}
