//! The gateway's resources, resource templates, prompts and completions: the rmcp handler
//! methods over [`GatewayBackend`]'s aggregated lists and routed requests. The backend names
//! the items (URIs and prompt names unambiguous per server) and maps them back; this module
//! pages the lists ([`super::pages`]) and turns the upstream's JSON answers into rmcp's
//! shapes. Advertised only when the backend serves them
//! ([`GatewayBackend::serves_resources_and_prompts`]); a session that listed them is told when
//! they change ([`super::list_changed`]), and subscriptions are [`super::resource_updates`]'.

use super::list_changed::Listing;
use super::pages::{PagedList, paged};
use super::{GatewayList, GatewayServer, to_error_data};
use rmcp::ErrorData;
use rmcp::model::*;
use rmcp::service::{RequestContext, RoleServer};
use serde::de::DeserializeOwned;
use serde_json::Value;

impl GatewayServer {
    /// One page of `list` as rmcp's result type `T`, its items read one by one.
    async fn list_page<T: PagedList>(
        &self,
        list: GatewayList,
        params: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<T, ErrorData>
    where
        T::Item: DeserializeOwned,
    {
        let request = Self::request(context)?;
        let items = self
            .backend
            .list_items(&request, list)
            .await
            .map_err(to_error_data)?;
        self.watch_list(context, &request, Listing::Items(list, &items));
        paged(list.name(), items, params, self.page_size, |item| {
            from_upstream(item, list.name())
        })
    }

    pub(super) async fn answer_list_resources(
        &self,
        params: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.list_page(GatewayList::Resources, params, &context)
            .await
    }

    pub(super) async fn answer_list_resource_templates(
        &self,
        params: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.list_page(GatewayList::ResourceTemplates, params, &context)
            .await
    }

    pub(super) async fn answer_list_prompts(
        &self,
        params: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.list_page(GatewayList::Prompts, params, &context).await
    }

    pub(super) async fn answer_read_resource(
        &self,
        params: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let request = self.admitted(&context, "resources/read")?;
        let answer = self
            .backend
            .read_resource(&request, params.uri, context.ct.clone())
            .await
            .map_err(to_error_data)?;
        let result: ReadResourceResult = from_upstream(answer, "resources/read")?;
        Ok(result.into())
    }

    pub(super) async fn answer_get_prompt(
        &self,
        params: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let request = self.admitted(&context, "prompts/get")?;
        let answer = self
            .backend
            .get_prompt(&request, params.name, params.arguments, context.ct.clone())
            .await
            .map_err(to_error_data)?;
        let result: GetPromptResult = from_upstream(answer, "prompts/get")?;
        Ok(result.into())
    }

    pub(super) async fn answer_complete(
        &self,
        params: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let request = self.admitted(&context, "completion/complete")?;
        let params = serde_json::to_value(&params)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let answer = self
            .backend
            .complete(&request, params, context.ct.clone())
            .await
            .map_err(to_error_data)?;
        from_upstream(answer, "completion/complete")
    }
}

/// An upstream's answer (or an aggregated item) in rmcp's shape.
fn from_upstream<T: DeserializeOwned>(answer: Value, method: &str) -> Result<T, ErrorData> {
    serde_json::from_value(answer).map_err(|error| {
        ErrorData::internal_error(
            format!("unreadable upstream {method} answer: {error}"),
            None,
        )
    })
}
