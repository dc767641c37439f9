//! A client for the official MCP conformance suite (`conformance client --command …`), built on
//! this crate's public stack (`McpClient` over Streamable HTTP). The suite starts a mock server
//! per scenario, runs this program with the server URL as the last argument, and names the
//! scenario in `MCP_CONFORMANCE_SCENARIO`.
//!
//! Every scenario connects and lists tools; some then call a fixture tool:
//! `tools_call` → `add_numbers`, `elicitation-sep1034-client-defaults` →
//! `test_client_elicitation_defaults` (answered with the schema defaults), `sse-retry` →
//! `test_reconnection` (the answer arrives on a resumed stream).
//!
//! The `auth/*` scenarios run the `oauth` module headlessly: on a 401 the flow starts from the
//! challenge, the authorization URL is fetched without following its redirect, the callback
//! parameters are read from its `Location` and the flow finishes; the client then connects with
//! the token, lists tools and calls them, stepping up (at most twice) on a 403
//! `insufficient_scope`. `auth/client-credentials-basic` uses the client credentials grant with
//! the credentials the suite passes in `MCP_CONFORMANCE_CONTEXT`, as does `auth/pre-registration`.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use switchboard_core::{ServerId, SessionScope, TransportKind, UserId, WorkspaceId};
use switchboard_mcp_client::oauth::{
    AuthorizationStart, InMemoryCredentialStore, InMemoryStateStore, OAuthFlow, PolicedOAuthHttp,
    PreregisteredClient, challenged_scopes,
};
use switchboard_mcp_client::{
    AcceptSchemaDefaults, CallContext, Caller, McpClient, McpClientConfig, RemoteEndpoint,
    UpstreamEndpoint, UpstreamError, UpstreamServer, UrlPolicy, UrlPolicyConfig,
};

/// The Client ID Metadata Document URL the suite expects a CIMD-capable client to use.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// Authorizations per run: the first and at most two step-ups.
const MAX_AUTHORIZATIONS: usize = 3;

/// What the suite passes in `MCP_CONFORMANCE_CONTEXT`.
#[derive(Debug, Default, serde::Deserialize)]
struct Context {
    client_id: Option<String>,
    client_secret: Option<String>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    tracing_subscriber_init();
    let Some(url) = std::env::args()
        .next_back()
        .filter(|argument| argument.starts_with("http"))
    else {
        eprintln!("usage: conformance-client <server-url>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let outcome = if scenario.starts_with("auth/") {
        run_auth(&url, &scenario).await
    } else {
        run(&url, &scenario).await
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("scenario '{scenario}' failed: {error}");
            ExitCode::FAILURE
        }
    }
}

fn tracing_subscriber_init() {
    // Logs go to stderr only when asked for; the suite reads the exit code.
    if std::env::var_os("RUST_LOG").is_some() {
        eprintln!("RUST_LOG is set; this client does not install a log subscriber");
    }
}

fn server_for(
    url: &str,
    token: Option<String>,
) -> Result<UpstreamServer, Box<dyn std::error::Error>> {
    Ok(UpstreamServer {
        id: ServerId::from("conformance"),
        workspace_id: WorkspaceId::from("conformance"),
        name: "conformance".to_owned(),
        endpoint: UpstreamEndpoint::Remote(RemoteEndpoint {
            transport: TransportKind::StreamableHttp,
            url: url.parse()?,
            headers: BTreeMap::new(),
            api_key: token,
        }),
        session_scope: SessionScope::Shared,
        timeout_ms: None,
        init_timeout_ms: None,
        origin: switchboard_mcp_client::ServerOrigin::Registered,
    })
}

async fn run(url: &str, scenario: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = McpClient::builder(McpClientConfig::default())
        .elicitation(Arc::new(AcceptSchemaDefaults))
        .build()?;
    let server = server_for(url, None)?;
    let caller = Caller {
        user_id: UserId::from("conformance"),
        conversation_id: None,
    };
    let capabilities = client.fetch_capabilities(&server, &caller).await?;
    let call = |tool_name: &'static str, arguments: Value| {
        let client = client.clone();
        let server = server.clone();
        let caller = caller.clone();
        let tool = capabilities
            .tools
            .iter()
            .find(|tool| tool.name == tool_name)
            .cloned();
        async move {
            let tool = tool.ok_or_else(|| format!("the server lists no tool '{tool_name}'"))?;
            let result = client
                .call_tool(&server, &tool, arguments, &CallContext::new(caller))
                .await?;
            println!("{tool_name}: {}", result.text_for_model());
            Ok::<_, Box<dyn std::error::Error>>(())
        }
    };
    match scenario {
        "tools_call" => call("add_numbers", json!({"a": 5, "b": 3})).await?,
        "elicitation-sep1034-client-defaults" => {
            call("test_client_elicitation_defaults", json!({})).await?
        }
        "sse-retry" => call("test_reconnection", json!({})).await?,
        _ => {}
    }
    client.shutdown().await;
    Ok(())
}

/// An `auth/*` scenario (see the module doc).
async fn run_auth(url: &str, scenario: &str) -> Result<(), Box<dyn std::error::Error>> {
    let context: Context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let server_url: switchboard_mcp_client::Url = url.parse()?;
    let flow = OAuthFlow::new(
        server_url.clone(),
        PolicedOAuthHttp::new(UrlPolicy::new(UrlPolicyConfig::default()))?,
        Arc::new(InMemoryCredentialStore::new()),
        Arc::new(InMemoryStateStore::new()),
    );
    let client = McpClient::builder(McpClientConfig::default()).build()?;
    let caller = Caller {
        user_id: UserId::from("conformance"),
        conversation_id: None,
    };
    let mut token = None;
    if scenario == "auth/client-credentials-basic" {
        let (id, secret) = context_credentials(&context)?;
        flow.client_credentials(id, secret, Vec::new()).await?;
        token = Some(flow.stored_access_token().await?);
    }
    let mut authorizations = 0;
    let mut granted: Vec<String> = Vec::new();
    loop {
        let server = server_for(url, token.clone())?;
        let error = match use_server(&client, &server, &caller).await {
            Ok(()) => break,
            Err(error) => error,
        };
        if error.code() != "needs_auth" || authorizations == MAX_AUTHORIZATIONS {
            return Err(error.into());
        }
        let challenge = error.auth_challenge().map(|c| c.www_authenticate.clone());
        let scopes = challenge
            .as_deref()
            .filter(|_| error.auth_challenge().is_some_and(|c| c.insufficient_scope))
            .map(|header| union(&granted, &challenged_scopes(header, &server_url)));
        let start = AuthorizationStart {
            redirect_uri: REDIRECT_URI.to_owned(),
            client_name: "switchboard-conformance".to_owned(),
            preregistered: preregistered(scenario, &context)?,
            client_metadata_url: Some(CLIENT_METADATA_URL.to_owned()),
            challenge,
            scopes,
        };
        let pending = flow.start(start).await?;
        let callback = flow
            .authorize_headlessly(&pending.authorization_url)
            .await?;
        let grant = flow.finish(&pending.client, &callback).await?;
        granted = grant.scopes;
        token = Some(flow.access_token(&pending.client).await?);
        authorizations += 1;
    }
    client.shutdown().await;
    Ok(())
}

/// Connects, lists tools and calls each one (with arguments a schema asks for).
async fn use_server(
    client: &McpClient,
    server: &UpstreamServer,
    caller: &Caller,
) -> Result<(), UpstreamError> {
    let capabilities = client.fetch_capabilities(server, caller).await?;
    for tool in &capabilities.tools {
        client
            .call_tool(server, tool, json!({}), &CallContext::new(caller.clone()))
            .await?;
    }
    Ok(())
}

fn context_credentials(context: &Context) -> Result<(&str, &str), Box<dyn std::error::Error>> {
    match (&context.client_id, &context.client_secret) {
        (Some(id), Some(secret)) => Ok((id, secret)),
        _ => Err("MCP_CONFORMANCE_CONTEXT carries no client_id and client_secret".into()),
    }
}

fn preregistered(
    scenario: &str,
    context: &Context,
) -> Result<Option<PreregisteredClient>, Box<dyn std::error::Error>> {
    if scenario != "auth/pre-registration" {
        return Ok(None);
    }
    let (id, secret) = context_credentials(context)?;
    Ok(Some(PreregisteredClient {
        client_id: id.to_owned(),
        client_secret: Some(secret.to_owned()),
        auth_method: None,
    }))
}

fn union(granted: &[String], challenged: &[String]) -> Vec<String> {
    let mut scopes = granted.to_vec();
    for scope in challenged {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    scopes
}
