//! `switchboard serve`: open (and migrate) the store, bootstrap an empty one, bind, serve until
//! SIGINT/SIGTERM, then drain (answers in flight finish within the grace), cancel what is left,
//! close the MCP sessions, deregister this instance and close the store.

use crate::config::Config;
use anyhow::Context;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_approvals::Approvals;
use switchboard_chat::{ChatService, OwnEndpoints};
use switchboard_core::Scope;
use switchboard_mcp_client::McpClient;
use switchboard_mcp_server::{
    KG_UPSTREAM_NAME, KgTool, KnowledgeGraphService, register_kg_upstream,
};
use switchboard_registry::ServerRegistry;
use switchboard_registry::oauth::OAuthService;
use switchboard_server::AppState;
use switchboard_server::KgSchemaContext;
use switchboard_server::oauth::OAuthStarter;
use switchboard_server::routes::mcp_servers::McpServersReadiness;
use switchboard_store::{DEFAULT_WORKSPACE_NAME, Store};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// How often this process tells the store it is alive (and sweeps the work of dead
/// instances); it is presumed dead after three missed beats.
const INSTANCE_HEARTBEAT: Duration = Duration::from_secs(5);

/// Supplies the bootstrap owner token instead of a generated one (for automation).
pub const ADMIN_TOKEN_ENV: &str = "SWITCHBOARD_ADMIN_TOKEN";

pub async fn serve(config: Config) -> anyhow::Result<()> {
    let started = Instant::now();
    let store = crate::open_store(&config, true).await?;
    // Before anything writes: the rows of this process's answers carry its instance, and the
    // start-up recoveries below touch only instances that are not alive (other replicas on
    // the same PostgreSQL database keep their work in flight).
    store
        .register_instance(INSTANCE_HEARTBEAT)
        .await
        .context("registering this instance in the store")?;
    let heartbeat = store
        .keep_instance_alive()
        .context("the instance was just registered")?;
    bootstrap(&store).await?;
    let listener = TcpListener::bind(config.server.bind)
        .await
        .with_context(|| format!("binding {}", config.server.bind))?;
    let address = listener.local_addr().context("reading the bound address")?;
    let shutdown_token = CancellationToken::new();
    let approvals = approvals(&config, &store).await?;
    // PostgreSQL replicas: another replica's decision wakes the call waiting here at once.
    let decision_listener = approvals
        .start_decision_listener(shutdown_token.clone())
        .await;
    let mcp = mcp_registry(&config, &store, &approvals)?;
    mcp.on_synced(approvals.synced_handler());
    mcp.spawn_background_refresh(shutdown_token.clone());
    // Our own /mcp: the one upstream the registry API reaches with the caller's token.
    mcp.set_own_listener(address);
    let knowledge_graph = knowledge_graph(&config, &store, &approvals, address).await?;
    // Upstream `kg` follows this listener (the port may differ from the first start's) and
    // holds the registry's own read-only token for background syncs.
    if let Err(error) = mcp.prepare_own_endpoints(&own_mcp_url(address)).await {
        tracing::warn!(%error, "could not prepare our own knowledge-graph endpoint as upstream `kg` (it may show needs_auth until the next start)");
    }
    // The chat engine has its own token: `run` cancels its answers (phase 2) before the
    // shared token ends `/mcp` sessions and background work.
    let oauth = oauth_service(&config, &store, &mcp)?;
    let engine_parts = EngineParts {
        mcp: &mcp,
        approvals: &approvals,
        knowledge_graph: &knowledge_graph,
        oauth: &oauth,
    };
    let chat = chat_engine(&config, &store, engine_parts, address).await?;
    let state = AppState::new(store.clone(), config.server.clone())
        .with_oauth(oauth)
        .with_shutdown_token(shutdown_token.clone())
        .with_mcp_registry(mcp.clone())
        .with_approvals(approvals.clone())
        .with_readiness_check(Arc::new(McpServersReadiness::new(mcp.clone())))
        .with_knowledge_graph(knowledge_graph)
        .with_chat(chat);
    let state = match single_sign_on(&config, &store, &mcp)? {
        Some(oidc) => state.with_oidc(oidc),
        None => state,
    };
    let state = match &config.registry {
        Some(registry) => state.with_directory(
            switchboard_server::directory::McpDirectory::new(registry)
                .context("starting the MCP registry client ([registry])")?,
        ),
        None => state,
    };
    let (state, apps_address) = serve_apps(&config, state).await?;
    tracing::info!(
        %address,
        %apps_address,
        backend = %store.backend_kind(),
        startup_ms = started.elapsed().as_millis() as u64,
        "listening"
    );
    // Listening before saying ready, so a signal sent right after the ready line is ours. A
    // second signal ends the drain at once.
    let stop = crate::shutdown::StopSignals::listen()
        .first_then_end_drain_on_second(state.end_drain.clone());
    println!("Switchboard is ready at http://{address}");
    // Drain (answers in flight finish within `server.shutdown_grace_secs`), then cancel the
    // rest, which saves what it produced (see `switchboard_server::serve`).
    let result = switchboard_server::run(listener, state, stop).await;
    shutdown_token.cancel();
    if let Some(decision_listener) = decision_listener {
        let _ = decision_listener.await;
    }
    // Every MCP session is closed (stdio children: stdin closed, then SIGTERM, then SIGKILL
    // of their process group) before the store goes.
    mcp.shutdown().await;
    // Their `server.disconnect` audit rows are written before the store goes.
    approvals
        .finish_audit_writes(std::time::Duration::from_secs(5))
        .await;
    // Deregistered: whatever this process still owned is recoverable by the next sweep.
    heartbeat.stop().await;
    store.close().await;
    tracing::info!("stopped");
    result.context("serving HTTP")
}

/// On an empty store creates workspace `default` and its owner token: the token from
/// `SWITCHBOARD_ADMIN_TOKEN` when set, else a random one printed here once.
/// Binds the MCP Apps sandbox listener (`server.apps_bind`, by default `bind`'s next port)
/// and serves it until shutdown; the state learns the origin browsers reach it at.
async fn serve_apps(
    config: &Config,
    state: AppState,
) -> anyhow::Result<(AppState, std::net::SocketAddr)> {
    let bind = config.server.apps_bind();
    let listener = TcpListener::bind(bind)
        .await
        .with_context(|| format!("binding the apps origin's listener {bind} (server.apps_bind)"))?;
    let address = listener
        .local_addr()
        .context("reading the apps listener's address")?;
    let origin = match &config.server.apps_origin {
        Some(origin) => origin.as_str().to_owned(),
        None => format!("http://{}", reachable_listener(address)),
    };
    let state = state.with_apps_origin(origin);
    let serving = state.clone();
    tokio::spawn(async move {
        if let Err(error) = switchboard_server::run_apps(listener, serving).await {
            tracing::error!(%error, "the apps origin's listener stopped");
        }
    });
    Ok((state, address))
}

async fn bootstrap(store: &Store) -> anyhow::Result<()> {
    let supplied = std::env::var(ADMIN_TOKEN_ENV)
        .ok()
        .filter(|token| !token.trim().is_empty());
    let supplied_by_operator = supplied.is_some();
    let Some(bootstrapped) = store
        .bootstrap_default(supplied)
        .await
        .with_context(|| format!("bootstrapping the empty store (check {ADMIN_TOKEN_ENV})"))?
    else {
        return Ok(());
    };
    if supplied_by_operator {
        println!(
            "Created workspace 'default' with an all-scopes owner token taken from {ADMIN_TOKEN_ENV}."
        );
    } else {
        println!(
            "Created workspace 'default'. Its all-scopes owner token is shown this once; keep it:\n\n    {}\n",
            bootstrapped.plaintext.expose()
        );
    }
    Ok(())
}

/// The knowledge graph: `[kg]` settings, the sample dataset in the default workspace on first
/// start, and our own endpoint registered there as upstream `kg` (reached over loopback).
async fn knowledge_graph(
    config: &Config,
    store: &Store,
    approvals: &Approvals,
    address: std::net::SocketAddr,
) -> anyhow::Result<KnowledgeGraphService> {
    let default_workspace = store
        .find_workspace_by_name(DEFAULT_WORKSPACE_NAME)
        .await
        .context("looking up the default workspace")?
        .map(|workspace| workspace.id);
    let service = KnowledgeGraphService::for_store(
        store.clone(),
        config.kg.clone(),
        default_workspace.clone(),
    )
    .map_err(|invalid| {
        anyhow::anyhow!(
            "invalid configuration: `kg.{}`: {}",
            invalid.key,
            invalid.reason
        )
    })?;
    if service
        .load_sample_if_configured()
        .await
        .context("loading the sample knowledge graph")?
    {
        tracing::info!("loaded the sample knowledge graph into the default workspace");
    }
    if let Some(workspace) = &default_workspace {
        let url = own_mcp_url(address);
        if register_kg_upstream(store, workspace, url.as_str())
            .await
            .context("registering the knowledge-graph endpoint as upstream `kg`")?
        {
            tracing::info!(%url, "registered the knowledge-graph endpoint as upstream `kg`");
            seed_kg_policies(store, approvals, workspace).await?;
        }
    }
    Ok(service)
}

/// The built-in knowledge-graph server's read-only tools start as `ALWAYS_ALLOW` (editable like
/// any policy); its write tools keep the default. Only on first registration, so an edited or
/// deleted policy stays as the operator left it.
async fn seed_kg_policies(
    store: &Store,
    approvals: &Approvals,
    workspace: &switchboard_core::WorkspaceId,
) -> anyhow::Result<()> {
    let Some(server) = store
        .find_server_by_name(workspace, KG_UPSTREAM_NAME)
        .await
        .context("looking up upstream `kg`")?
    else {
        return Ok(());
    };
    let read_only: Vec<&str> = KgTool::ALL
        .into_iter()
        .filter(|tool| tool.required_scope() != Scope::DataWrite)
        .map(KgTool::name)
        .collect();
    let seeded = approvals
        .seed_read_only_policies(workspace, &server.id, &read_only)
        .await
        .context("seeding the kg server's read-only tool policies")?;
    tracing::info!(
        seeded,
        "read-only knowledge-graph tools set to ALWAYS_ALLOW"
    );
    Ok(())
}

/// What the chat engine is built over (the process's one of each).
struct EngineParts<'a> {
    mcp: &'a ServerRegistry,
    approvals: &'a Approvals,
    knowledge_graph: &'a KnowledgeGraphService,
    oauth: &'a OAuthService,
}

/// The chat engine (`[chat]`, `[llm]`): the process's server registry and client, the approvals
/// gate, and our own `/mcp` as the one endpoint that receives the user's token (the URL the
/// `kg` upstream is registered with). Tool calls a dead process (a previous run of this one,
/// or a replica that stopped without cleaning up) left `dispatched` become `unknown` here,
/// before anything can run them again; live replicas' calls are left alone.
async fn chat_engine(
    config: &Config,
    store: &Store,
    parts: EngineParts<'_>,
    address: std::net::SocketAddr,
) -> anyhow::Result<ChatService> {
    let EngineParts {
        mcp,
        approvals,
        knowledge_graph,
        oauth,
    } = parts;
    for warning in config.chat.warnings() {
        tracing::warn!("{warning}");
    }
    let chat = ChatService::builder(
        store.clone(),
        mcp.client().clone(),
        config.chat.clone(),
        config.llm.clone(),
    )
    .registry(mcp.clone())
    .approval_gate(approvals.gate())
    .own_endpoints(OwnEndpoints::for_listener(reachable_listener(address)))
    .schema_context(Arc::new(KgSchemaContext::new(knowledge_graph.clone())))
    .authorization(Arc::new(OAuthStarter(oauth.clone())))
    .build()
    .context("starting the chat engine")?;
    let recovered = chat
        .recover_interrupted_calls()
        .await
        .context("recovering tool calls interrupted by the previous process")?;
    if recovered > 0 {
        tracing::warn!(
            recovered,
            "tool calls interrupted by the previous process were marked unknown (dispatched) or failed (never sent); none is run again"
        );
    }
    // Calls that became tasks are not lost: their tasks are polled again (never re-run).
    chat.resume_task_calls()
        .await
        .context("following the tasks of tool calls interrupted by the previous process")?;
    // And those of replicas that die while this one runs (PostgreSQL): looked for at every
    // heartbeat, claimed by exactly one live process.
    chat.keep_adopting_task_calls(INSTANCE_HEARTBEAT);
    // A cancel asked of a task call through another replica is stored for the one that
    // follows it; each looks for those of its own calls.
    chat.keep_forwarding_task_cancels();
    Ok(chat)
}

/// Approvals, policies, elicitation and the audit log (`[approval]`). Requests left pending by a
/// dead process are marked expired so their conversations show what happened (live replicas'
/// requests keep waiting). The chat
/// engine's gate must be `approvals.gate()` (the state's instance).
async fn approvals(config: &Config, store: &Store) -> anyhow::Result<Approvals> {
    let approvals =
        Approvals::new(store.clone(), config.approval.clone()).context("invalid configuration")?;
    let recovered = approvals
        .recover_after_restart()
        .await
        .context("expiring approval requests left by the previous process")?;
    if recovered.approvals_expired + recovered.elicitations_expired > 0 {
        tracing::warn!(
            approvals = recovered.approvals_expired,
            elicitations = recovered.elicitations_expired,
            "requests pending when the previous process stopped were marked expired"
        );
    }
    Ok(approvals)
}

/// OAuth connections to remote MCP servers: every discovery, registration, token and
/// revocation request under the registered servers' URL policy; redirect URI and client
/// metadata document under `server.public_url`. The registry is given the service, so the
/// upstreams of OAuth servers carry their connections' tokens.
fn oauth_service(
    config: &Config,
    store: &Store,
    mcp: &ServerRegistry,
) -> anyhow::Result<OAuthService> {
    let policy = mcp
        .client()
        .url_policy_for(switchboard_mcp_client::url_policy::ServerOrigin::Registered)
        .clone();
    let instance = format!("switchboard-{}", std::process::id());
    let service = OAuthService::new(
        store.clone(),
        policy,
        switchboard_server::oauth::settings(&config.server.public_url, &instance),
    )
    .context("starting the OAuth client")?;
    // The upstreams of OAuth servers carry their connections' tokens.
    mcp.set_oauth(service.clone());
    Ok(service)
}

/// Single sign-on with the `[oidc]` provider, its requests under the registered servers' URL
/// policy (an admin-configured URL, like theirs).
fn single_sign_on(
    config: &Config,
    store: &Store,
    mcp: &ServerRegistry,
) -> anyhow::Result<Option<switchboard_server::oidc::OidcService>> {
    let Some(oidc) = config.oidc.clone() else {
        return Ok(None);
    };
    let policy = mcp
        .client()
        .url_policy_for(switchboard_mcp_client::url_policy::ServerOrigin::Registered)
        .clone();
    let service =
        switchboard_server::oidc::service(oidc, &config.server.public_url, policy, store.clone())
            .context("starting single sign-on")?;
    Ok(Some(service))
}

/// The listener as this process reaches itself: loopback when bound to every interface.
fn reachable_listener(address: std::net::SocketAddr) -> std::net::SocketAddr {
    let host = if address.ip().is_unspecified() {
        std::net::IpAddr::from([127, 0, 0, 1])
    } else {
        address.ip()
    };
    std::net::SocketAddr::new(host, address.port())
}

/// Our own `/mcp` at the listener, as upstream `kg` is registered.
fn own_mcp_url(address: std::net::SocketAddr) -> switchboard_mcp_client::Url {
    switchboard_mcp_client::Url::parse(&format!("http://{}/mcp", reachable_listener(address)))
        .expect("an http URL made of a socket address parses")
}

/// The MCP client side: sessions to upstream servers (`[mcp]`) and the server registry over the
/// store. Chat and approvals must use this same client (`mcp.client()`); upstreams' forms
/// (`elicitation/create`) go to `approvals`.
fn mcp_registry(
    config: &Config,
    store: &Store,
    approvals: &Approvals,
) -> anyhow::Result<ServerRegistry> {
    let client = McpClient::builder(config.mcp.clone())
        .elicitation(approvals.elicitation_responder())
        .on_session_event(approvals.session_event_handler())
        .build()
        .context("starting the MCP client")?;
    Ok(ServerRegistry::new(client, store.clone()))
}
