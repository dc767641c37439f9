//! The answers of [`KgServer`] to each request, as ordinary async methods. The
//! `ServerHandler` methods box these futures: rmcp inlines every handler method's future into
//! the task it spawns per request, so large unboxed futures would be copied on every request.

use super::KgServer;
use crate::errors;
use crate::prompts::{self, KgPrompt};
use crate::resources::{self, KgResource};
use crate::tools::{self, KgTool};
use rmcp::ErrorData;
use rmcp::model::*;
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use switchboard_core::Scope;

impl KgServer {
    pub(super) async fn answer_list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Only what this caller may call (the scope check of `tools/call` still applies).
        let caller = Self::caller(&context)?;
        Ok(ListToolsResult::with_all_items(
            self.state.catalog.callable_with(&caller.principal.scopes),
        ))
    }

    pub(super) async fn answer_call_tool(
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

    pub(super) async fn answer_list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (_, graph) = self.admit(&context, Scope::SchemaRead, false).await?;
        Ok(ListResourcesResult::with_all_items(resources::list(&graph)))
    }

    pub(super) async fn answer_list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    pub(super) async fn answer_read_resource(
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

    pub(super) async fn answer_listen(
        &self,
        context: SubscriptionContext,
    ) -> Result<(), ErrorData> {
        let caller = Self::caller(context.request_context())?;
        if !caller.principal.allows(Scope::SchemaRead) {
            return Err(errors::missing_scope(Scope::SchemaRead, &caller));
        }
        crate::listen::serve(&self.state.graphs, &caller, context).await;
        Ok(())
    }

    #[allow(deprecated)]
    pub(super) async fn answer_subscribe(
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
    pub(super) async fn answer_unsubscribe(
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

    pub(super) async fn answer_list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    pub(super) async fn answer_get_prompt(
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

    pub(super) async fn answer_complete(
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
    pub(super) async fn answer_set_level(
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
