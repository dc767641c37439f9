//! [`KgServer`]: the rmcp `ServerHandler` of the knowledge-graph endpoint. It finds the caller
//! (put into the HTTP request by the guard), checks the scope and rate limit, picks the caller's
//! workspace graph, and hands over to the tools, resources and prompts modules.
//!
//! One instance per MCP session (or per stateless request); all share [`KgServerState`].

use crate::auth::Caller;
use crate::errors;
use crate::graphs::{KnowledgeGraphs, WorkspaceGraph};
use crate::prompts::{self, KgPrompt};
use crate::rate_limit::RateLimiter;
use crate::resources::{self, KgResource};
use crate::subscriptions::Subscriptions;
use crate::tools::{self, KgTool, ToolCatalog};
use axum::http::request::Parts;
use rmcp::model::*;
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use switchboard_core::Scope;

/// What every session of the endpoint shares.
#[derive(Debug)]
pub struct KgServerState {
    pub graphs: KnowledgeGraphs,
    pub limiter: RateLimiter,
    pub catalog: ToolCatalog,
    pub subscriptions: Arc<Subscriptions>,
    next_session: AtomicU64,
}

impl KgServerState {
    pub fn new(graphs: KnowledgeGraphs, limiter: RateLimiter) -> Self {
        Self {
            graphs,
            limiter,
            catalog: ToolCatalog::default(),
            subscriptions: Arc::default(),
            next_session: AtomicU64::new(1),
        }
    }
}

#[derive(Clone, Debug)]
pub struct KgServer {
    state: Arc<KgServerState>,
    /// Identifies this instance's resource subscriptions.
    session: u64,
}

const INSTRUCTIONS: &str = "Switchboard's knowledge graph. Schema tools (schema_version, schema_changelog, type_info, relationship_info, search_types) need schema:read; data tools (find_objects, get_object, traverse, find_path, count_objects) need data:read; create_object and create_relationship need data:write. Object ids look like doc-product-roadmap; start with type_info or find_objects to discover them.";

impl KgServer {
    pub fn new(state: Arc<KgServerState>) -> Self {
        let session = state.next_session.fetch_add(1, Ordering::Relaxed);
        Self { state, session }
    }

    /// The caller the HTTP guard attached to this request.
    fn caller(context: &RequestContext<RoleServer>) -> Result<Arc<Caller>, ErrorData> {
        context
            .extensions
            .get::<Parts>()
            .and_then(|parts| parts.extensions.get::<Arc<Caller>>())
            .cloned()
            .ok_or_else(|| {
                ErrorData::internal_error(
                    "request reached the knowledge-graph server unauthenticated",
                    None,
                )
            })
    }

    /// Caller, scope check, rate limit and workspace graph: the common start of a request.
    async fn admit(
        &self,
        context: &RequestContext<RoleServer>,
        scope: Scope,
        rate_limited: bool,
    ) -> Result<(Arc<Caller>, Arc<WorkspaceGraph>), ErrorData> {
        let caller = Self::caller(context)?;
        if !caller.principal.allows(scope) {
            return Err(errors::missing_scope(scope, &caller));
        }
        if rate_limited {
            self.state
                .limiter
                .check(caller.key)
                .map_err(errors::rate_limited)?;
        }
        let graph = self
            .state
            .graphs
            .workspace(&caller.principal.workspace_id)
            .await
            .map_err(|error| errors::from_graph(&error))?;
        Ok((caller, graph))
    }
}

impl ServerHandler for KgServer {
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("switchboard-kg", env!("CARGO_PKG_VERSION"))
                    .with_title("Switchboard knowledge graph"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.state.catalog.get(name).cloned()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.state.catalog.tools().to_vec(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = KgTool::from_name(&request.name) else {
            return Ok(tools::unknown_tool(&request.name).into());
        };
        let (_, graph) = self.admit(&context, tool.required_scope(), true).await?;
        tools::run(tool, &graph, request.arguments)
            .await
            .map(CallToolResponse::from)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (_, graph) = self.admit(&context, Scope::SchemaRead, false).await?;
        Ok(ListResourcesResult::with_all_items(resources::list(&graph)))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(resource) = KgResource::parse(&request.uri) else {
            return Err(resources::unknown_uri(&request.uri));
        };
        let (_, graph) = self
            .admit(&context, resource.required_scope(), true)
            .await?;
        resources::read(&graph, &request.uri, &resource).map(ReadResourceResponse::from)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        crate::listen::accepted_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let caller = Self::caller(context.request_context())?;
        if !caller.principal.allows(Scope::SchemaRead) {
            return Err(errors::missing_scope(Scope::SchemaRead, &caller));
        }
        crate::listen::serve(&self.state.graphs, &caller, context).await;
        Ok(())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (caller, _) = self.admit(&context, Scope::SchemaRead, false).await?;
        self.state.subscriptions.subscribe(
            &caller.principal.workspace_id,
            self.session,
            &request.uri,
            context.peer.clone(),
        );
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = Self::caller(&context)?;
        self.state.subscriptions.unsubscribe(
            &caller.principal.workspace_id,
            self.session,
            &request.uri,
        );
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some(prompt) = KgPrompt::from_name(&request.name) else {
            let known: Vec<&str> = KgPrompt::ALL.into_iter().map(KgPrompt::name).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "Unknown prompt '{}'; this server's prompts: {}",
                    request.name,
                    known.join(", ")
                ),
                None,
            ));
        };
        let (_, graph) = self.admit(&context, prompt.required_scope(), true).await?;
        prompts::get(&graph, prompt, &request.arguments).map(GetPromptResponse::from)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let wants_type_name = match &request.r#ref {
            Reference::Prompt(prompt) => {
                prompt.name == KgPrompt::ExplainType.name() && request.argument.name == "type_name"
            }
            Reference::Resource(resource) => {
                resource.uri.starts_with(resources::TYPE_URI_PREFIX)
                    && request.argument.name == "type_name"
            }
            _ => false,
        };
        let mut values = Vec::new();
        if wants_type_name
            && let Ok((_, graph)) = self.admit(&context, Scope::SchemaRead, false).await
        {
            let prefix = request.argument.value.to_lowercase();
            values = graph
                .read()
                .schema()
                .object_types
                .iter()
                .map(|t| t.name.clone())
                .filter(|name| name.to_lowercase().starts_with(&prefix))
                .take(CompletionInfo::MAX_VALUES)
                .collect();
        }
        let completion = CompletionInfo::with_all_values(values)
            .map_err(|error| ErrorData::internal_error(error, None))?;
        Ok(CompleteResult::new(completion))
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // The server emits no log notifications of its own; accepting the level keeps clients
        // that set one working.
        Self::caller(&context)?;
        Ok(())
    }
}
