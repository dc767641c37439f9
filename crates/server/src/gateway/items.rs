//! The gateway's resources, resource templates, prompts and completions for one caller: the
//! lists aggregated by the chat engine (`ChatService::gateway_list`) from the servers of the
//! caller's offer — the same servers its tools come from — kept with the offer ([`Offer`]:
//! rebuilt when it is) once every server answered, and the requests routed back through the
//! names those lists gave (`switchboard://server/uri`, `server__prompt`; at
//! `/gateway/servers/{server}/mcp` the server's own URIs and names).

use super::ChatGateway;
use super::offers::Offer;
use serde_json::Value;
use std::sync::Arc;
use switchboard_chat::{GatewayListing, GatewayNaming, only_target, upstream_uri};
use switchboard_mcp_client::{ForwardedList, UpstreamError};
use switchboard_mcp_server::gateway::{GatewayError, GatewayList, GatewayRequest};
use tokio_util::sync::CancellationToken;

impl ChatGateway {
    /// `list` for the caller of `offer`: kept with the offer, or listed now.
    pub(super) async fn listing(
        &self,
        request: &GatewayRequest,
        offer: &Offer,
        list: GatewayList,
    ) -> Arc<GatewayListing> {
        let cell = offer.listing_cell(list);
        if let Some(listing) = cell.get() {
            return listing.clone();
        }
        let listing = Arc::new(
            self.chat
                .gateway_list(
                    &request.caller.principal,
                    &offer.tools,
                    forwarded(list),
                    offer.naming,
                )
                .await,
        );
        // A partial listing (a server did not answer) is served, not kept.
        if listing.failed.is_empty() {
            let _ = cell.set(listing.clone());
        }
        listing
    }

    pub(super) async fn read(
        &self,
        request: &GatewayRequest,
        uri: String,
        cancellation: CancellationToken,
    ) -> Result<Value, GatewayError> {
        let offer = self.offer(request).await?;
        let read = self
            .chat
            .gateway_read_resource(
                &request.caller.principal,
                &offer.tools,
                &uri,
                offer.naming,
                cancellation,
            )
            .await
            .map_err(upstream_error)?;
        read.ok_or(GatewayError::UnknownResource(uri))
    }

    pub(super) async fn prompt(
        &self,
        request: &GatewayRequest,
        name: String,
        arguments: Option<serde_json::Map<String, Value>>,
        cancellation: CancellationToken,
    ) -> Result<Value, GatewayError> {
        let offer = self.offer(request).await?;
        let listing = self.listing(request, &offer, GatewayList::Prompts).await;
        let Some((server, prompt)) = listing.prompts.get(&name) else {
            return Err(GatewayError::UnknownPrompt(name));
        };
        self.chat
            .gateway_get_prompt(
                &request.caller.principal,
                &offer.tools,
                (server, prompt),
                arguments,
                offer.naming,
                cancellation,
            )
            .await
            .map_err(upstream_error)?
            .ok_or(GatewayError::UnknownPrompt(name))
    }

    /// `completion/complete`: its `ref` (a listed prompt's name, or a resource template's
    /// URI) names the server and becomes the upstream's own.
    pub(super) async fn completion(
        &self,
        request: &GatewayRequest,
        mut params: Value,
        cancellation: CancellationToken,
    ) -> Result<Value, GatewayError> {
        let offer = self.offer(request).await?;
        let reference = params["ref"].clone();
        let unknown = || GatewayError::UnknownReference(reference.to_string());
        let server = match reference["type"].as_str() {
            Some("ref/prompt") => {
                let listing = self.listing(request, &offer, GatewayList::Prompts).await;
                let name = reference["name"].as_str().unwrap_or_default();
                let (server, prompt) = listing.prompts.get(name).ok_or_else(unknown)?;
                params["ref"]["name"] = Value::String(prompt.clone());
                server.clone()
            }
            Some("ref/resource") if offer.naming == GatewayNaming::Original => {
                let target = only_target(&offer.tools).ok_or_else(unknown)?;
                target.upstream.name.clone()
            }
            Some("ref/resource") => {
                let uri = reference["uri"].as_str().unwrap_or_default();
                let (server, own_uri) = upstream_uri(uri).ok_or_else(unknown)?;
                params["ref"]["uri"] = Value::String(own_uri.to_owned());
                server.to_owned()
            }
            _ => return Err(unknown()),
        };
        self.chat
            .gateway_complete(
                &request.caller.principal,
                &offer.tools,
                &server,
                params,
                cancellation,
            )
            .await
            .map_err(upstream_error)?
            .ok_or_else(unknown)
    }
}

fn forwarded(list: GatewayList) -> ForwardedList {
    match list {
        GatewayList::Resources => ForwardedList::Resources,
        GatewayList::ResourceTemplates => ForwardedList::ResourceTemplates,
        GatewayList::Prompts => ForwardedList::Prompts,
    }
}

/// An upstream's JSON-RPC error is passed on with its code; any other failure is the
/// gateway's.
pub(super) fn upstream_error(error: UpstreamError) -> GatewayError {
    match error {
        UpstreamError::Rpc {
            code,
            message,
            data,
        } => GatewayError::Upstream {
            code,
            message,
            data,
        },
        other => GatewayError::Internal(other.to_string()),
    }
}
