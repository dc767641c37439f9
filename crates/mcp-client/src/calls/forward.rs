//! Requests a gateway forwards to an upstream as they are, answered as JSON: every page of
//! `resources/list`, `resources/templates/list` and `prompts/list`, and `resources/read`,
//! `prompts/get` and `completion/complete`. They go through the caller's session and its
//! limits like a tool call (concurrency caps, timeout, size cap, cancellation); what the
//! upstream sent is passed on whole (annotations, `_meta`, icons), so a gateway client sees
//! what it would see directly.
//!
//! A list the upstream does not declare (no `resources` or `prompts` capability) is empty
//! without asking it.

use super::CallContext;
use super::request::decode;
use crate::UpstreamError;
use crate::client::McpClient;
use crate::server::UpstreamServer;
use rmcp::model::{
    ClientRequest, CompleteRequest, CompleteRequestParams, ListPromptsRequest,
    ListResourceTemplatesRequest, ListResourcesRequest, PaginatedRequestParams,
};
use serde_json::Value;
use std::collections::HashSet;

/// Most pages fetched for one list (a server looping on cursors must not hang a listing).
const MAX_PAGES: usize = 100;

/// A list a gateway aggregates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ForwardedList {
    Resources,
    ResourceTemplates,
    Prompts,
}

impl ForwardedList {
    /// The method, for messages.
    pub fn method(self) -> &'static str {
        match self {
            Self::Resources => "resources/list",
            Self::ResourceTemplates => "resources/templates/list",
            Self::Prompts => "prompts/list",
        }
    }

    /// The field of the result holding the items.
    pub fn items_field(self) -> &'static str {
        match self {
            Self::Resources => "resources",
            Self::ResourceTemplates => "resourceTemplates",
            Self::Prompts => "prompts",
        }
    }

    fn request(self, cursor: Option<String>) -> ClientRequest {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        match self {
            Self::Resources => {
                ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(params))
            }
            Self::ResourceTemplates => ClientRequest::ListResourceTemplatesRequest(
                ListResourceTemplatesRequest::with_param(params),
            ),
            Self::Prompts => {
                ClientRequest::ListPromptsRequest(ListPromptsRequest::with_param(params))
            }
        }
    }
}

impl McpClient {
    /// Every item of `list` (each as the upstream sent it), following `nextCursor`; empty
    /// when the upstream does not declare the capability.
    pub async fn list_everything(
        &self,
        server: &UpstreamServer,
        list: ForwardedList,
        context: &CallContext,
    ) -> Result<Vec<Value>, UpstreamError> {
        let (_, live) = self.session_for_call(server, context).await?;
        let declared = match list {
            ForwardedList::Resources | ForwardedList::ResourceTemplates => {
                live.description.offers_resources
            }
            ForwardedList::Prompts => live.description.offers_prompts,
        };
        if !declared {
            return Ok(Vec::new());
        }
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        for _ in 0..MAX_PAGES {
            let (result, limits) = self.send(server, list.request(cursor), context).await?;
            let mut page: Value = decode(&result, limits.max_bytes, list.method())?;
            if let Some(Value::Array(listed)) = page.get_mut(list.items_field()).map(Value::take) {
                items.extend(listed);
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if seen.insert(next.to_owned()) => cursor = Some(next.to_owned()),
                Some(_) => {
                    return Err(UpstreamError::Protocol(format!(
                        "{} repeated a cursor",
                        list.method()
                    )));
                }
                None => return Ok(items),
            }
        }
        Err(UpstreamError::Protocol(format!(
            "{} did not end within {MAX_PAGES} pages",
            list.method()
        )))
    }

    /// `resources/read`, the result as the upstream sent it.
    pub async fn read_resource_json(
        &self,
        server: &UpstreamServer,
        uri: &str,
        context: &CallContext,
    ) -> Result<Value, UpstreamError> {
        let (result, limits) = self
            .send_answering_input(server, context, super::input_required::read_resource(uri))
            .await?;
        decode(&result, limits.max_bytes, "resources/read")
    }

    /// `prompts/get`, the result as the upstream sent it.
    pub async fn get_prompt_json(
        &self,
        server: &UpstreamServer,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        context: &CallContext,
    ) -> Result<Value, UpstreamError> {
        let build = super::input_required::get_prompt(name, arguments);
        let (result, limits) = self.send_answering_input(server, context, build).await?;
        decode(&result, limits.max_bytes, "prompts/get")
    }

    /// `completion/complete` with `params` (the client's, its `ref` already naming the
    /// upstream's own prompt or template), the result as the upstream sent it.
    pub async fn complete_json(
        &self,
        server: &UpstreamServer,
        params: Value,
        context: &CallContext,
    ) -> Result<Value, UpstreamError> {
        let params: CompleteRequestParams = serde_json::from_value(params).map_err(|error| {
            UpstreamError::Protocol(format!("not a completion/complete request: {error}"))
        })?;
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        let (result, limits) = self.send(server, request, context).await?;
        decode(&result, limits.max_bytes, "completion/complete")
    }
}
