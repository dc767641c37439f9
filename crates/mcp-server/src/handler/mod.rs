//! [`KgServer`]: the rmcp `ServerHandler` of the knowledge-graph endpoint. It finds the caller
//! (put into the HTTP request by the guard), checks the scope and rate limit, picks the caller's
//! workspace graph, and hands over to the tools, resources and prompts modules.
//!
//! One instance per MCP session (or per stateless request); all share [`KgServerState`]. The
//! answers themselves live in `answers`.

use crate::auth::Caller;
use crate::errors;
use crate::graphs::{KnowledgeGraphs, WorkspaceGraph};
use crate::rate_limit::RateLimiter;
use crate::subscriptions::Subscriptions;
use crate::tools::ToolCatalog;
use axum::http::request::Parts;
use rmcp::model::*;
use rmcp::service::{MaybeSendFuture, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use switchboard_core::Scope;

mod answers;

/// What every session of the endpoint shares.
#[derive(Debug)]
pub struct KgServerState {
    pub graphs: KnowledgeGraphs,
    pub limiter: RateLimiter,
    pub catalog: ToolCatalog,
    pub subscriptions: Arc<Subscriptions>,
    /// The `initialize`/`server/discover` answer, built once (rmcp asks for it per request).
    server_config: ServerConfig,
    next_session: AtomicU64,
}

impl KgServerState {
    pub fn new(graphs: KnowledgeGraphs, limiter: RateLimiter) -> Self {
        Self {
            graphs,
            limiter,
            catalog: ToolCatalog::default(),
            subscriptions: Arc::default(),
            server_config: server_config(),
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

const INSTRUCTIONS: &str = "Switchboard's knowledge graph. Schema tools (schema_version, schema_changelog, type_info, relationship_info, search_types) need schema:read; data tools (find_objects, search_objects, get_object, traverse, find_path, count_objects) need data:read; create_object and create_relationship need data:write. Object ids look like doc-product-roadmap; start with type_info, find_objects or search_objects (by name) to discover them.";

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

#[allow(deprecated)]
fn server_config() -> ServerConfig {
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

impl ServerHandler for KgServer {
    fn get_info(&self) -> ServerConfig {
        self.state.server_config.clone()
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.state.catalog.get(name).cloned()
    }

    fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_list_tools(request, context))
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_call_tool(request, context))
    }

    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourcesResult, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_list_resources(request, context))
    }

    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourceTemplatesResult, ErrorData>> + MaybeSendFuture + '_
    {
        Box::pin(self.answer_list_resource_templates(request, context))
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_read_resource(request, context))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        crate::listen::accepted_filter(requested)
    }

    fn listen(
        &self,
        context: SubscriptionContext,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_listen(context))
    }

    #[allow(deprecated)]
    fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_subscribe(request, context))
    }

    #[allow(deprecated)]
    fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_unsubscribe(request, context))
    }

    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListPromptsResult, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_list_prompts(request, context))
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_get_prompt(request, context))
    }

    fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CompleteResult, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_complete(request, context))
    }

    fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CustomResult, ErrorData>> + MaybeSendFuture + '_ {
        std::future::ready(Err(errors::method_not_found(&request.method)))
    }

    #[allow(deprecated)]
    fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.answer_set_level(request, context))
    }
}
