//! Workspace isolation: with workspace A's id, no call sees, changes or deletes B's rows.
//! Every area adds its rows to `Tenant` and its probes to the test below.

use crate::fixtures::{
    http_server_with_secrets, new_conversation, new_token, new_tool_call, plain_bud, tool,
    workspace_with_owner,
};
use crate::harness::{TestStore, store_test};
use serde_json::json;
use switchboard_core::{ApprovalPolicy, ChatMessage, ToolCallState, WorkspaceId};
use switchboard_store::{
    AuditEntry, AuditQuery, BudPatch, BudRecord, ConversationPatch, ConversationRecord,
    IssuedToken, MessageRecord, MessageUpdate, NewAuditEntry, NewBud, NewConversation, NewMessage,
    NewToolPolicy, ServerPatch, ServerRecord, ServerStatus, Store, ToolCallOutcome, ToolCallRecord,
    ToolPolicyRecord, UserRecord, WorkspaceRecord,
};

store_test!(a_workspace_never_sees_another_workspaces_rows);

/// One workspace with a row in every area.
struct Tenant {
    workspace: WorkspaceRecord,
    user: UserRecord,
    token: IssuedToken,
    server: ServerRecord,
    bud: BudRecord,
    conversation: ConversationRecord,
    message: MessageRecord,
    tool_call: ToolCallRecord,
    policy: ToolPolicyRecord,
    audit: AuditEntry,
}

async fn tenant(store: &Store, name: &str) -> Tenant {
    let (workspace, user) = workspace_with_owner(store, name).await;
    let token = store
        .create_token(&workspace.id, new_token(&user, "admin"))
        .await
        .unwrap();
    let server = store
        .create_server(
            &workspace.id,
            http_server_with_secrets("shared-name", &format!("{name}-key"), "h"),
        )
        .await
        .unwrap();
    store
        .replace_server_tools(&workspace.id, &server.id, &[tool("search", name)])
        .await
        .unwrap();
    let bud = store
        .create_bud(
            &workspace.id,
            NewBud {
                system_prompt: format!("{name} prompt"),
                ..plain_bud("helper")
            },
        )
        .await
        .unwrap();
    let conversation = store
        .create_conversation(
            &workspace.id,
            NewConversation {
                bud_id: Some(bud.id.clone()),
                ..new_conversation(&user)
            },
        )
        .await
        .unwrap();
    let message = store
        .append_message(
            &workspace.id,
            &conversation.id,
            NewMessage::from_chat(ChatMessage::user(format!("{name} says hi"))),
        )
        .await
        .unwrap();
    let tool_call = store
        .create_tool_call(
            &workspace.id,
            new_tool_call(&conversation.id, Some(&server), "call_1"),
        )
        .await
        .unwrap();
    let policy = store
        .set_tool_policy(
            &workspace.id,
            NewToolPolicy {
                server_id: server.id.clone(),
                tool_name: "search".into(),
                policy: ApprovalPolicy::AlwaysAllow,
                pinned_definition_hash: None,
                updated_by: Some(user.id.clone()),
            },
        )
        .await
        .unwrap();
    let audit = store
        .append_audit(
            &workspace.id,
            NewAuditEntry {
                actor: user.id.to_string(),
                action: "server.created".into(),
                target: Some(server.id.to_string()),
                details: json!({"tenant": name}),
            },
        )
        .await
        .unwrap();
    Tenant {
        workspace,
        user,
        token,
        server,
        bud,
        conversation,
        message,
        tool_call,
        policy,
        audit,
    }
}

async fn a_workspace_never_sees_another_workspaces_rows(test: TestStore) {
    let store = &test.store;
    let a = tenant(store, "alpha").await;
    let b = tenant(store, "beta").await;
    let a_id: &WorkspaceId = &a.workspace.id;

    // users
    assert_eq!(store.list_users(a_id).await.unwrap(), vec![a.user.clone()]);
    assert!(
        store
            .get_user(a_id, &b.user.id)
            .await
            .unwrap_err()
            .is_not_found()
    );

    // tokens
    let a_tokens = store.list_tokens(a_id).await.unwrap();
    assert_eq!(a_tokens, vec![a.token.record.clone()]);
    assert!(
        store
            .get_token(a_id, &b.token.record.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .revoke_token(a_id, &b.token.record.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    let b_principal = store
        .authenticate(b.token.plaintext.expose())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        b_principal.workspace_id, b.workspace.id,
        "B's token still works, for B only"
    );

    // servers
    assert_eq!(
        store
            .list_servers(a_id)
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect::<Vec<_>>(),
        vec![a.server.id.clone()]
    );
    assert!(
        store
            .get_server(a_id, &b.server.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert_eq!(
        store
            .find_server_by_name(a_id, "shared-name")
            .await
            .unwrap()
            .unwrap()
            .id,
        a.server.id
    );
    assert!(
        store
            .server_secrets(a_id, &b.server.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    let patch = ServerPatch {
        is_active: Some(false),
        ..ServerPatch::default()
    };
    assert!(
        store
            .update_server(a_id, &b.server.id, 1, patch)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .record_server_status(a_id, &b.server.id, ServerStatus::Error, Some("x"))
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .delete_server(a_id, &b.server.id)
            .await
            .unwrap_err()
            .is_not_found()
    );

    // tools
    let a_tools = store.list_workspace_tools(a_id).await.unwrap();
    assert_eq!(a_tools.len(), 1);
    assert_eq!(a_tools[0].server_id, a.server.id);
    assert!(
        store
            .list_server_tools(a_id, &b.server.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .get_tool(a_id, &b.server.id, "search")
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .set_tool_enabled(a_id, &b.server.id, "search", false)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .replace_server_tools(a_id, &b.server.id, &[])
            .await
            .unwrap_err()
            .is_not_found()
    );

    // buds
    assert_eq!(store.list_buds(a_id).await.unwrap(), vec![a.bud.clone()]);
    assert!(
        store
            .get_bud(a_id, &b.bud.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .update_bud(a_id, &b.bud.id, BudPatch::default())
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .delete_bud(a_id, &b.bud.id)
            .await
            .unwrap_err()
            .is_not_found()
    );

    // conversations and messages
    let a_conversations = store.list_conversations(a_id, None).await.unwrap();
    assert_eq!(a_conversations.len(), 1);
    assert_eq!(a_conversations[0].id, a.conversation.id);
    assert!(
        store
            .list_conversations(a_id, Some(&b.user.id))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .get_conversation(a_id, &b.conversation.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .update_conversation(a_id, &b.conversation.id, ConversationPatch::default())
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .list_messages(a_id, &b.conversation.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .get_message(a_id, &b.message.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    let intrusion = NewMessage::from_chat(ChatMessage::user("intrusion"));
    assert!(
        store
            .append_message(a_id, &b.conversation.id, intrusion)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .update_message(
                a_id,
                &b.message.id,
                MessageUpdate {
                    content: Some("x".into()),
                    ..MessageUpdate::default()
                }
            )
            .await
            .unwrap_err()
            .is_not_found()
    );

    // tool calls
    assert_eq!(
        store
            .list_tool_calls(a_id, &a.conversation.id)
            .await
            .unwrap(),
        vec![a.tool_call.clone()]
    );
    assert!(
        store
            .list_tool_calls(a_id, &b.conversation.id)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .get_tool_call(a_id, &b.tool_call.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        store
            .transition_tool_call(
                a_id,
                &b.tool_call.id,
                ToolCallState::Approved,
                ToolCallOutcome::default()
            )
            .await
            .unwrap_err()
            .is_not_found()
    );

    // policies
    assert_eq!(
        store.list_tool_policies(a_id, None).await.unwrap(),
        vec![a.policy.clone()]
    );
    assert!(
        store
            .list_tool_policies(a_id, Some(&b.server.id))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .get_tool_policy(a_id, &b.server.id, "search")
            .await
            .unwrap(),
        None
    );
    assert!(
        store
            .delete_tool_policy(a_id, &b.server.id, "search")
            .await
            .unwrap_err()
            .is_not_found()
    );

    // audit
    assert_eq!(
        store.list_audit(a_id, AuditQuery::default()).await.unwrap(),
        vec![a.audit.clone()]
    );

    // Deleting A's conversation leaves B's alone.
    store
        .delete_conversation(a_id, &a.conversation.id)
        .await
        .unwrap();
    assert!(
        store
            .delete_conversation(a_id, &b.conversation.id)
            .await
            .unwrap_err()
            .is_not_found()
    );

    // B is untouched by all of the above.
    let b_id = &b.workspace.id;
    assert_eq!(store.get_bud(b_id, &b.bud.id).await.unwrap(), b.bud);
    assert_eq!(
        store.list_messages(b_id, &b.conversation.id).await.unwrap(),
        vec![b.message.clone()]
    );
    assert_eq!(
        store.get_tool_call(b_id, &b.tool_call.id).await.unwrap(),
        b.tool_call
    );
    assert_eq!(
        store.list_tool_policies(b_id, None).await.unwrap(),
        vec![b.policy.clone()]
    );
    assert_eq!(
        store.list_audit(b_id, AuditQuery::default()).await.unwrap(),
        vec![b.audit.clone()]
    );
    assert!(
        store
            .get_tool(b_id, &b.server.id, "search")
            .await
            .unwrap()
            .is_enabled
    );
    assert_eq!(
        store
            .get_conversation(b_id, &b.conversation.id)
            .await
            .unwrap()
            .title,
        b.conversation.title
    );
    assert_eq!(
        store
            .get_server(&b.workspace.id, &b.server.id)
            .await
            .unwrap(),
        b.server
    );
    assert_eq!(
        store
            .server_secrets(&b.workspace.id, &b.server.id)
            .await
            .unwrap()
            .api_key
            .as_deref(),
        Some("beta-key")
    );
    assert_eq!(
        store
            .get_token(&b.workspace.id, &b.token.record.id)
            .await
            .unwrap()
            .revoked_at,
        None
    );
}
