//! The server registry over a real store (SQLite in a temp dir) and real upstreams: a sync
//! persists tools, caches and the observation; states move through synced, stale, empty,
//! needs_auth and error (keeping the last good cache); a list change resyncs; usable tools
//! respect the enable switch; a test records its outcome; readiness counts errors.

use crate::support::{
    everything_js, fixture, lines, node, python, quick_config, registry_with, store,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;
use switchboard_core::{SessionScope, TransportKind};
use switchboard_mcp_client::{CallContext, Caller, McpClientConfig};
use switchboard_registry::CapabilityState;
use switchboard_store::{
    NewServer, ServerConnectionConfig, ServerRecord, ServerSecrets, ServerStatus, Store,
};

fn stdio(
    name: &str,
    command: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
) -> NewServer {
    NewServer {
        name: name.to_owned(),
        transport: TransportKind::Stdio,
        url: None,
        command: Some(command),
        args,
        connection: ServerConnectionConfig::default(),
        secrets: ServerSecrets {
            env,
            oauth_client_secret: None,
            ..ServerSecrets::default()
        },
        is_active: true,
    }
}

async fn reload(store: &Store, record: &ServerRecord) -> ServerRecord {
    store
        .get_server(&record.workspace_id, &record.id)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_persists_capabilities_and_states_follow_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let (store, workspace) = store(&dir).await;
    let config = McpClientConfig {
        capability_cache_ttl_secs: 1,
        ..quick_config()
    };
    let registry = registry_with(&store, config);
    let everything = store
        .create_server(
            &workspace,
            stdio(
                "everything",
                node(),
                vec![everything_js().to_str().unwrap().into(), "stdio".into()],
                BTreeMap::new(),
            ),
        )
        .await
        .unwrap();
    // The background pass syncs a server nobody synced yet.
    assert_eq!(registry.refresh_stale().await, 1);
    assert_eq!(
        registry.refresh_stale().await,
        0,
        "fresh caches are left alone"
    );
    let report = registry.sync_record(&everything).await;
    assert!(report.error.is_none(), "{:?}", report.error);
    assert_eq!(report.state, CapabilityState::Synced);
    assert!(report.tool_count >= 10 && report.prompt_count >= 2);

    let record = reload(&store, &everything).await;
    assert_eq!(record.status, ServerStatus::Connected);
    assert_eq!(
        store
            .list_server_tools(&workspace, &record.id)
            .await
            .unwrap()
            .len(),
        report.tool_count
    );
    let observation = store
        .get_mcp_observation(&workspace, &record.id)
        .await
        .unwrap()
        .unwrap()
        .observation;
    assert_eq!(
        observation.server_name.as_deref(),
        Some("mcp-servers/everything")
    );
    assert!(observation.protocol_version.is_some());
    let overview = registry.overview(&record).await.unwrap();
    assert_eq!(overview.capability_state, CapabilityState::Synced);
    assert_eq!(overview.tool_count, report.tool_count);

    // Disabled tools are not offered; a stale cache is refreshed before use.
    store
        .set_tool_enabled(&workspace, &record.id, "echo", false)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(
        registry.overview(&record).await.unwrap().capability_state,
        CapabilityState::Stale
    );
    let usable = registry.usable_tools(&record).await.unwrap();
    assert!(!usable.iter().any(|tool| tool.name == "echo"));
    assert_eq!(usable.len(), report.tool_count - 1);
    let refreshed = reload(&store, &record).await;
    assert!(refreshed.last_synced_at > record.last_synced_at);

    // Try a tool through the registry.
    let context = CallContext::new(Caller {
        user_id: "u1".into(),
        conversation_id: None,
    });
    let sum = registry
        .call_tool(
            &workspace,
            &record.id,
            "get-sum",
            json!({"a": 1, "b": 2}),
            &context,
            None,
        )
        .await
        .unwrap();
    assert!(sum.text_for_model().contains('3'));
    let unknown = registry
        .call_tool(&workspace, &record.id, "nope", json!({}), &context, None)
        .await
        .unwrap_err();
    assert!(
        unknown.to_string().contains("no tool named 'nope'"),
        "{unknown}"
    );
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_keep_the_last_good_cache_and_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let (store, workspace) = store(&dir).await;
    let registry = registry_with(
        &store,
        McpClientConfig {
            session_init_retries: 0,
            ..quick_config()
        },
    );
    let marker = dir.path().join("broken");
    let starts = dir.path().join("starts");
    let env = BTreeMap::from([
        ("START_LOG".to_owned(), starts.to_str().unwrap().to_owned()),
        (
            "BREAK_MARKER".to_owned(),
            marker.to_str().unwrap().to_owned(),
        ),
    ]);
    let args = vec![
        fixture("misbehaving_server.py")
            .to_str()
            .unwrap()
            .to_owned(),
        "breakable".to_owned(),
    ];
    let server = store
        .create_server(
            &workspace,
            stdio("breakable", python().to_str().unwrap().into(), args, env),
        )
        .await
        .unwrap();
    assert!(registry.sync_record(&server).await.error.is_none());
    let good = reload(&store, &server).await;
    assert_eq!(registry.usable_tools(&good).await.unwrap().len(), 2);

    // The server now refuses to start: ERROR with the message, the old cache kept (stale).
    std::fs::write(&marker, "").unwrap();
    registry.client().close_server(&server.id).await;
    let report = registry.sync_record(&good).await;
    assert_eq!(report.state, CapabilityState::Error);
    let failed = reload(&store, &server).await;
    assert_eq!(failed.status, ServerStatus::Error);
    assert!(
        failed
            .last_error
            .as_deref()
            .unwrap_or_default()
            .contains("refusing to start"),
        "{:?}",
        failed.last_error
    );
    assert_eq!(failed.tools_cache, good.tools_cache);
    let view = registry.capabilities(&workspace, &server.id).await.unwrap();
    assert!(view.stale && view.state == CapabilityState::Error && view.tools.len() == 2);
    let unusable = registry.usable_tools(&failed).await.unwrap_err();
    assert_eq!(unusable.state, CapabilityState::Error);
    let summary = registry.readiness().await.unwrap();
    assert_eq!((summary.servers, summary.in_error), (1, 1));
    assert!(!summary.is_up(), "every server is in ERROR");
    assert!(lines(&starts).len() >= 2);
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_credentials_and_empty_servers_are_shown_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let (store, workspace) = store(&dir).await;
    let registry = registry_with(&store, quick_config());
    let args = vec![
        fixture("misbehaving_server.py")
            .to_str()
            .unwrap()
            .to_owned(),
        "empty".to_owned(),
    ];
    let empty = store
        .create_server(
            &workspace,
            stdio(
                "empty",
                python().to_str().unwrap().into(),
                args,
                BTreeMap::new(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        registry.sync_record(&empty).await.state,
        CapabilityState::Empty
    );
    let unusable = registry
        .usable_tools(&reload(&store, &empty).await)
        .await
        .unwrap_err();
    assert_eq!(
        (unusable.state, unusable.code.as_str()),
        (CapabilityState::Empty, "empty")
    );

    // An HTTP upstream answering 401: needs_auth, recorded and shown.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let router = axum::Router::new().fallback(|| async {
        (
            axum::http::StatusCode::UNAUTHORIZED,
            [("www-authenticate", "Bearer realm=\"fixture\"")],
            "no",
        )
    });
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let locked = store
        .create_server(
            &workspace,
            NewServer {
                connection: ServerConnectionConfig {
                    session_scope: SessionScope::PerUser,
                    ..ServerConnectionConfig::default()
                },
                ..NewServer::remote(
                    "locked",
                    TransportKind::StreamableHttp,
                    format!("http://127.0.0.1:{port}/mcp"),
                )
            },
        )
        .await
        .unwrap();
    let report = registry.sync_record(&locked).await;
    assert_eq!(
        report.state,
        CapabilityState::NeedsAuth,
        "{:?}",
        report.error
    );
    let view = registry.capabilities(&workspace, &locked.id).await.unwrap();
    assert_eq!(view.state, CapabilityState::NeedsAuth);
    assert_eq!(view.error_code.as_deref(), Some("needs_auth"));
    let outcome = registry
        .test(&workspace, &locked.id, None, None)
        .await
        .unwrap();
    assert_eq!(outcome.unwrap_err().code(), "needs_auth");
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_our_own_endpoint_receives_the_callers_token() {
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    let (store, workspace) = store(&dir).await;
    let registry = registry_with(&store, quick_config());
    // An upstream that records the Authorization header it gets and refuses everything.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let recorded = seen.clone();
    // Every credential, with the path it was sent to.
    let seen_at: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let recorded_at = seen_at.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let router = axum::Router::new().fallback(
        move |uri: axum::http::Uri, headers: axum::http::HeaderMap| {
            let recorded = recorded.clone();
            let recorded_at = recorded_at.clone();
            async move {
                let value = headers
                    .get("authorization")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("none");
                recorded.lock().unwrap().push(value.to_owned());
                recorded_at
                    .lock()
                    .unwrap()
                    .push((uri.path().to_owned(), value.to_owned()));
                (
                    axum::http::StatusCode::UNAUTHORIZED,
                    [("www-authenticate", "Bearer")],
                    "no",
                )
            }
        },
    );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let register = |name: &str, path: &str, marked: bool| {
        let mut connection = ServerConnectionConfig::default();
        // A marked server holds the registry's own service token (see `own_credential`).
        let secrets = ServerSecrets {
            api_key: marked.then(|| format!("sb_service_token_of_{name}")),
            ..ServerSecrets::default()
        };
        if marked {
            connection.extra.insert(
                switchboard_registry::OWN_ENDPOINT_MARKER.into(),
                json!(true),
            );
        }
        NewServer {
            name: name.into(),
            transport: TransportKind::StreamableHttp,
            url: Some(format!("http://127.0.0.1:{port}{path}")),
            command: None,
            args: vec![],
            connection,
            secrets,
            is_active: true,
        }
    };
    registry.set_own_listener(format!("127.0.0.1:{port}").parse().unwrap());
    let ours = store
        .create_server(&workspace, register("kg", "/mcp", true))
        .await
        .unwrap();
    let repointed = store
        .create_server(&workspace, register("moved", "/elsewhere", true))
        .await
        .unwrap();
    let unmarked = store
        .create_server(&workspace, register("plain", "/mcp", false))
        .await
        .unwrap();

    // A server at our own URL that Switchboard did not register gets no token.
    seen.lock().unwrap().clear();
    registry
        .test(&workspace, &unmarked.id, Some("sb_user_token"), None)
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        seen.lock().unwrap().iter().all(|header| header == "none"),
        "{:?}",
        seen.lock().unwrap()
    );
    // Ours is reached at our own `/mcp` with the caller's token — also when its stored URL
    // names another address (another replica's listener, or an edited row): nothing goes
    // there.
    for server in [&ours, &repointed] {
        seen_at.lock().unwrap().clear();
        registry
            .test(&workspace, &server.id, Some("sb_user_token"), None)
            .await
            .unwrap()
            .unwrap_err();
        let sent = seen_at.lock().unwrap().clone();
        assert!(!sent.is_empty(), "{}", server.name);
        assert!(
            sent.iter()
                .all(|(path, header)| path == "/mcp" && header == "Bearer sb_user_token"),
            "{}: {sent:?}",
            server.name
        );
    }

    // The background pass syncs every active server, our own endpoint included with its own
    // service token — which goes nowhere but our own URL (the re-pointed registration is
    // reached there too) — and never with a caller's token. Refused, the made-up token is
    // replaced by a real one, which also goes to our own URL only.
    seen_at.lock().unwrap().clear();
    assert_eq!(registry.refresh_stale().await, 3);
    let sent = seen_at.lock().unwrap().clone();
    assert!(
        sent.contains(&(
            "/mcp".to_owned(),
            "Bearer sb_service_token_of_kg".to_owned()
        )),
        "{sent:?}"
    );
    for (path, header) in &sent {
        assert!(
            header == "none" || (path == "/mcp" && header.starts_with("Bearer sb_")),
            "{sent:?}"
        );
        assert!(!header.contains("user_token"), "{sent:?}");
        assert_ne!(path, "/elsewhere", "{sent:?}");
    }
    let renewed = store
        .server_secrets(&workspace, &ours.id)
        .await
        .unwrap()
        .api_key
        .unwrap();
    assert_ne!(renewed, "sb_service_token_of_kg");
    assert!(sent.contains(&("/mcp".to_owned(), format!("Bearer {renewed}"))));
    assert_eq!(registry.readiness().await.unwrap().servers, 3);

    // The service token lists capabilities only: a call without a caller's token carries none.
    store
        .replace_server_tools(
            &workspace,
            &ours.id,
            &[switchboard_core::ToolDefinition {
                name: "schema_version".into(),
                title: None,
                description: String::new(),
                input_schema: json!({"type": "object"}),
                output_schema: None,
                annotations: None,
                meta: Default::default(),
            }],
        )
        .await
        .unwrap();
    seen.lock().unwrap().clear();
    let context = CallContext::new(Caller {
        user_id: "ada".into(),
        conversation_id: None,
    });
    let _ = registry
        .call_tool(
            &workspace,
            &ours.id,
            "schema_version",
            json!({}),
            &context,
            None,
        )
        .await;
    let headers = seen.lock().unwrap().clone();
    assert!(!headers.is_empty());
    assert!(headers.iter().all(|header| header == "none"), "{headers:?}");
    registry.shutdown().await;
}
