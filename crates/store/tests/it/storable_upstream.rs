//! U+0000 in what upstream servers, models and people send (tool definitions, capability caches,
//! server reports, instructions, pin snapshots, elicitation requests, knowledge-graph text) is
//! stored as U+FFFD on both backends, and a tool definition hashes the same before and after.
//! Server configuration (URL, command, arguments, settings, secret names) refuses it instead:
//! nothing could use it.

use crate::fixtures::{add_stdio_server, start_conversation, stdio_server, workspace_with_owner};
use crate::harness::{TestStore, store_test};
use chrono::{Duration, DurationRound, TimeDelta, Utc};
use serde_json::json;
use switchboard_core::{ApprovalPolicy, ElicitationId, ToolDefinition};
use switchboard_kg::{ObjectRecord, sample_graph};
use switchboard_store::{
    ElicitationStatus, McpObservation, NewElicitationRequest, NewToolPolicy, NewToolRule,
    ServerPatch, ServerStatus, ServerSync, StoreError, StoredKnowledgeGraph, SyncStatus,
    ToolRuleScope, definition_hash,
};

store_test!(
    upstream_tool_definitions_caches_and_reports_keep_no_nul,
    pin_snapshots_and_instructions_keep_no_nul,
    elicitation_requests_keep_no_nul,
    knowledge_graph_text_keeps_no_nul,
    server_configuration_with_nul_is_refused,
    tool_names_with_nul_are_looked_up_as_stored,
);

const R: char = '\u{FFFD}';

fn tool_with_nul() -> ToolDefinition {
    ToolDefinition {
        name: "search".into(),
        title: Some("Se\0arch".into()),
        description: "Finds\0things".into(),
        input_schema: json!({"type": "object", "properties": {"q\0": {"type": "string", "description": "query\0"}}}),
        output_schema: Some(json!({"type": "object", "description": "out\0"})),
        annotations: Some(json!({"note": "a\0"})),
        meta: Default::default(),
    }
}

fn tool_as_stored() -> ToolDefinition {
    ToolDefinition {
        name: "search".into(),
        title: Some(format!("Se{R}arch")),
        description: format!("Finds{R}things"),
        input_schema: json!({"type": "object", "properties": {format!("q{R}"): {"type": "string", "description": format!("query{R}")}}}),
        output_schema: Some(json!({"type": "object", "description": format!("out{R}")})),
        annotations: Some(json!({"note": format!("a{R}")})),
        meta: Default::default(),
    }
}

async fn upstream_tool_definitions_caches_and_reports_keep_no_nul(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "everything").await;

    let tools = store
        .replace_server_tools(&workspace.id, &server.id, &[tool_with_nul()])
        .await
        .unwrap();
    assert_eq!(tools[0].definition(), tool_as_stored());
    // The hash is the same whether computed on what the upstream sent or on what is stored,
    // so the next sync of the same definition changes nothing (a pin does not drift).
    assert_eq!(tools[0].definition_hash, definition_hash(&tool_with_nul()));
    assert_eq!(tools[0].definition_hash, definition_hash(&tool_as_stored()));
    let again = store
        .replace_server_tools(&workspace.id, &server.id, &[tool_with_nul()])
        .await
        .unwrap();
    assert_eq!(again, tools);
    assert_eq!(
        store
            .get_tool(&workspace.id, &server.id, "search")
            .await
            .unwrap(),
        tools[0]
    );

    store
        .record_server_status(
            &workspace.id,
            &server.id,
            ServerStatus::Error,
            Some("refused\0"),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .get_server(&workspace.id, &server.id)
            .await
            .unwrap()
            .last_error,
        Some(format!("refused{R}"))
    );
    store
        .record_server_sync(
            &workspace.id,
            &server.id,
            ServerSync {
                sync_status: SyncStatus::Synced,
                tools: Some(json!([{"name": "search", "description": "d\0"}])),
                resources: Some(json!([{"uri": "file:///a", "name": "r\0"}])),
                prompts: Some(json!([{"name": "p", "arguments": [{"k\0": "v\0"}]}])),
                synced_at: Utc::now(),
                error: None,
            },
        )
        .await
        .unwrap();
    let synced = store.get_server(&workspace.id, &server.id).await.unwrap();
    assert_eq!(
        synced.tools_cache.unwrap()[0]["description"],
        format!("d{R}")
    );
    assert_eq!(synced.resources_cache.unwrap()[0]["name"], format!("r{R}"));
    assert_eq!(
        synced.prompts_cache.unwrap()[0]["arguments"][0][format!("k{R}")],
        format!("v{R}")
    );
    assert_eq!(synced.last_error, None);
    store
        .record_server_sync(
            &workspace.id,
            &server.id,
            ServerSync {
                sync_status: SyncStatus::Failed,
                tools: None,
                resources: None,
                prompts: None,
                synced_at: Utc::now(),
                error: Some("bad\0answer".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .get_server(&workspace.id, &server.id)
            .await
            .unwrap()
            .last_error,
        Some(format!("bad{R}answer"))
    );

    store
        .record_mcp_observation(
            &workspace.id,
            &server.id,
            &McpObservation {
                protocol_version: Some("2025-06-18\0".into()),
                server_name: Some("every\0thing".into()),
                server_version: Some("1\0".into()),
                error_code: Some("timeout\0".into()),
            },
        )
        .await
        .unwrap();
    let observed = store
        .get_mcp_observation(&workspace.id, &server.id)
        .await
        .unwrap()
        .unwrap()
        .observation;
    assert_eq!(
        observed,
        McpObservation {
            protocol_version: Some(format!("2025-06-18{R}")),
            server_name: Some(format!("every{R}thing")),
            server_version: Some(format!("1{R}")),
            error_code: Some(format!("timeout{R}")),
        }
    );
}

async fn pin_snapshots_and_instructions_keep_no_nul(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "everything").await;
    store
        .save_tool_pin_snapshot(
            &workspace.id,
            &server.id,
            "h1",
            &tool_with_nul(),
            Some("Be\0nice"),
        )
        .await
        .unwrap();
    let snapshot = store
        .get_tool_pin_snapshot(&workspace.id, &server.id, "h1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(snapshot.definition, tool_as_stored());
    assert_eq!(snapshot.instructions, Some(format!("Be{R}nice")));

    store
        .record_server_instructions(&workspace.id, &server.id, Some("Use\0carefully"))
        .await
        .unwrap();
    assert_eq!(
        store
            .get_server_instructions(&workspace.id, &server.id)
            .await
            .unwrap()
            .unwrap()
            .instructions,
        Some(format!("Use{R}carefully"))
    );
}

async fn elicitation_requests_keep_no_nul(test: TestStore) {
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let conversation = start_conversation(store, &workspace.id, &alice).await;
    let asked = store
        .create_elicitation_request(
            &workspace.id,
            NewElicitationRequest {
                id: ElicitationId::generate(),
                conversation_id: conversation.id.clone(),
                owner_user_id: alice.id.clone(),
                tool_call_id: None,
                server_name: "every\0thing".into(),
                message: "Your\0name?".into(),
                requested_schema: json!({"type": "object", "properties": {"n\0": {"title": "Name\0"}}}),
                expires_at: Utc::now() + Duration::seconds(60),
            },
        )
        .await
        .unwrap();
    assert_eq!(asked.server_name, format!("every{R}thing"));
    assert_eq!(asked.message, format!("Your{R}name?"));
    assert_eq!(
        asked.requested_schema,
        json!({"type": "object", "properties": {format!("n{R}"): {"title": format!("Name{R}")}}})
    );
    assert_eq!(
        store
            .get_elicitation_request(&workspace.id, &asked.id)
            .await
            .unwrap(),
        asked
    );
    let answered = store
        .resolve_elicitation_request(
            &workspace.id,
            &asked.id,
            ElicitationStatus::Declined,
            "user\0",
        )
        .await
        .unwrap();
    assert_eq!(answered.responded_by, Some(format!("user{R}")));
}

async fn knowledge_graph_text_keeps_no_nul(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    // PostgreSQL keeps microseconds.
    let graph = sample_graph(
        Utc::now()
            .duration_trunc(TimeDelta::microseconds(1))
            .unwrap(),
    );
    let data = graph.export();
    let mut versions = graph.history().versioned_schemas().to_vec();
    versions[0].version.message = Some("first\0".into());
    versions[0].schema.object_types[0].description = "described\0".into();
    let mut changelog = graph.history().changelog().to_vec();
    changelog[0].change.description = "added\0".into();
    let sample = StoredKnowledgeGraph {
        generation: 0,
        versions,
        changelog,
        objects: data.objects,
        relationships: data.relationships,
    };
    assert!(
        store
            .kg_save_new_graph(&workspace.id, &sample)
            .await
            .unwrap()
            .is_some()
    );
    let note = ObjectRecord {
        id: "note-nul".into(),
        object_type: sample.objects[0].object_type.clone(),
        properties: json!({"title": "no\0te", "tags": ["t\0"]})
            .as_object()
            .cloned()
            .unwrap(),
        ..sample.objects[0].clone()
    };
    store
        .kg_insert_records(&workspace.id, 1, &[note], &[])
        .await
        .unwrap();

    let loaded = store.kg_load(&workspace.id).await.unwrap().unwrap();
    assert_eq!(
        loaded.versions[0].version.message,
        Some(format!("first{R}"))
    );
    assert_eq!(
        loaded.versions[0].schema.object_types[0].description,
        format!("described{R}")
    );
    assert_eq!(loaded.changelog[0].change.description, format!("added{R}"));
    let stored_note = loaded
        .objects
        .iter()
        .find(|object| object.id == "note-nul")
        .unwrap();
    assert_eq!(stored_note.properties["title"], format!("no{R}te"));
    assert_eq!(stored_note.properties["tags"][0], format!("t{R}"));
    // Everything else round-trips as it was.
    assert_eq!(loaded.objects.len(), sample.objects.len() + 1);
    assert_eq!(loaded.versions[1..], sample.versions[1..]);
}

async fn server_configuration_with_nul_is_refused(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let refused_field = |error: StoreError| match error {
        StoreError::InvalidInput { field, reason } => {
            assert!(reason.contains("U+0000"), "{reason}");
            field
        }
        other => panic!("{other:?}"),
    };
    let mut with_nul_arg = stdio_server("everything");
    with_nul_arg.args.push("--x\0".into());
    let mut with_nul_command = stdio_server("everything");
    with_nul_command.command = Some("np\0x".into());
    let mut with_nul_setting = stdio_server("everything");
    with_nul_setting
        .connection
        .extra
        .insert("retry".into(), json!({"mode": "fa\0st"}));
    let mut with_nul_env_name = stdio_server("everything");
    with_nul_env_name
        .secrets
        .env
        .insert("TOK\0EN".into(), "v".into());
    for (new_server, field) in [
        (with_nul_arg, "args"),
        (with_nul_command, "command"),
        (with_nul_setting, "connection"),
        (with_nul_env_name, "secrets.env"),
    ] {
        let error = store
            .create_server(&workspace.id, new_server)
            .await
            .unwrap_err();
        assert_eq!(refused_field(error), field);
    }
    assert!(store.list_servers(&workspace.id).await.unwrap().is_empty());

    let server = add_stdio_server(store, &workspace.id, "everything").await;
    let error = store
        .update_server(
            &workspace.id,
            &server.id,
            server.version,
            ServerPatch {
                args: Some(vec!["a\0".into()]),
                ..ServerPatch::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(refused_field(error), "args");
    assert_eq!(
        store.get_server(&workspace.id, &server.id).await.unwrap(),
        server
    );
}

async fn tool_names_with_nul_are_looked_up_as_stored(test: TestStore) {
    // A tool name from an upstream is a key of the catalog, of policies and of rules: whichever
    // form a caller passes (as sent, or as stored), it finds the same row.
    let store = &test.store;
    let (workspace, alice) = workspace_with_owner(store, "acme").await;
    let server = add_stdio_server(store, &workspace.id, "everything").await;
    let mut odd = tool_with_nul();
    odd.name = "se\0arch".into();
    store
        .replace_server_tools(&workspace.id, &server.id, &[odd])
        .await
        .unwrap();
    let stored_name = format!("se{R}arch");
    let found = store
        .get_tool(&workspace.id, &server.id, "se\0arch")
        .await
        .unwrap();
    assert_eq!(found.name, stored_name);
    let disabled = store
        .set_tool_enabled(&workspace.id, &server.id, "se\0arch", false)
        .await
        .unwrap();
    assert!(!disabled.is_enabled);

    let policy = store
        .set_tool_policy(
            &workspace.id,
            NewToolPolicy {
                server_id: server.id.clone(),
                tool_name: "se\0arch".into(),
                policy: ApprovalPolicy::AlwaysAllow,
                pinned_definition_hash: Some(found.definition_hash.clone()),
                updated_by: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(policy.tool_name, stored_name);
    assert_eq!(
        store
            .get_tool_policy(&workspace.id, &server.id, &stored_name)
            .await
            .unwrap(),
        Some(policy)
    );
    store
        .delete_tool_policy(&workspace.id, &server.id, "se\0arch")
        .await
        .unwrap();

    let scope = ToolRuleScope::User(alice.id.clone());
    let rule = store
        .set_tool_rule(
            &workspace.id,
            &scope,
            NewToolRule {
                server_id: server.id.clone(),
                tool_name: "se\0arch".into(),
                policy: ApprovalPolicy::AlwaysDeny,
                pin_hash: None,
                updated_by: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(rule.tool_name, stored_name);
    assert_eq!(
        store
            .get_tool_rule(&workspace.id, &scope, &server.id, "se\0arch")
            .await
            .unwrap(),
        Some(rule)
    );
    store
        .delete_tool_rule(&workspace.id, &scope, &server.id, &stored_name)
        .await
        .unwrap();
    assert_eq!(
        store
            .get_tool_rule(&workspace.id, &scope, &server.id, "se\0arch")
            .await
            .unwrap(),
        None
    );
}
