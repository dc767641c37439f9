//! Resources, resource templates and prompts for the MCP gateway: aggregated from the servers
//! a gateway caller's tools come from (the same [`TurnTools`]), over the MCP client's shared
//! sessions (no connection of their own), and routed back to their upstream.
//!
//! Names are made unambiguous per server, and map back exactly:
//! - a resource URI (or template) `U` of server `S` is offered as `switchboard://S/U`: `S`
//!   (`[A-Za-z0-9_-]`, no `/`) ends at the first `/` after the prefix and `U` is the rest,
//!   byte for byte, so any URI round-trips and a template's variables stay in `U`;
//! - a prompt `P` of server `S` is offered as `S__P`, as tools are, and found again through
//!   the listing (a server name may itself hold `__`).
//!
//! The per-server gateway ([`GatewayNaming::Original`]) offers exactly one server's items under
//! their own URIs and names, untouched.
//!
//! Reading a resource or getting a prompt is not a tool call: it is not reviewed by the
//! approval gate, but only reaches the caller's own servers.

use super::ChatService;
use crate::tools::{CallTarget, TurnTools};
use serde_json::Value;
use std::collections::HashMap;
use switchboard_core::Principal;
use switchboard_mcp_client::{CallContext, Caller, ForwardedList, ResourceWatch, UpstreamError};
use tokio_util::sync::CancellationToken;

/// The prefix of every resource URI the gateway offers.
pub const GATEWAY_URI_PREFIX: &str = "switchboard://";

/// `uri` of `server`, as the gateway offers it.
pub fn gateway_uri(server: &str, uri: &str) -> String {
    format!("{GATEWAY_URI_PREFIX}{server}/{uri}")
}

/// The server and its own URI behind a gateway URI (`None`: not one of ours).
pub fn upstream_uri(gateway_uri: &str) -> Option<(&str, &str)> {
    let rest = gateway_uri.strip_prefix(GATEWAY_URI_PREFIX)?;
    let (server, uri) = rest.split_once('/')?;
    (!server.is_empty() && !uri.is_empty()).then_some((server, uri))
}

/// How the gateway names the items it offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GatewayNaming {
    /// Several servers: `switchboard://S/U` and `S__P`.
    PerServer,
    /// One server (its tools are the only ones offered): the upstream's own URIs and names.
    Original,
}

/// One aggregated list: the items as offered, and where each prompt name leads.
#[derive(Clone, Debug, Default)]
pub struct GatewayListing {
    /// Each item as its upstream sent it, its URI or name rewritten.
    pub items: Vec<Value>,
    /// Offered prompt name → (server name, the upstream's own name).
    pub prompts: HashMap<String, (String, String)>,
    /// Servers that could not be listed (name, why): the listing is partial.
    pub failed: Vec<(String, String)>,
}

impl ChatService {
    /// Every item of `list` from the servers of `tools`, renamed for the gateway.
    pub async fn gateway_list(
        &self,
        principal: &Principal,
        tools: &TurnTools,
        list: ForwardedList,
        naming: GatewayNaming,
    ) -> GatewayListing {
        let context = self.gateway_context(principal, CancellationToken::new());
        let client = self.engine.tools.client();
        let targets = tools.targets();
        let listed = futures::future::join_all(
            targets
                .iter()
                .map(|target| client.list_everything(&target.upstream, list, &context)),
        )
        .await;
        let mut listing = GatewayListing::default();
        for (target, outcome) in targets.iter().zip(listed) {
            let server = target.upstream.name.as_str();
            match outcome {
                Ok(items) => {
                    for mut item in items {
                        rename_item(&mut item, server, list, naming, &mut listing.prompts);
                        listing.items.push(item);
                    }
                }
                Err(error) => {
                    tracing::warn!(server, %error, method = list.method(), "gateway listing left a server out");
                    listing.failed.push((server.to_owned(), error.to_string()));
                }
            }
        }
        listing
    }

    /// `resources/read` of a gateway URI; `Ok(None)`: no server of the caller's has it.
    pub async fn gateway_read_resource(
        &self,
        principal: &Principal,
        tools: &TurnTools,
        uri: &str,
        naming: GatewayNaming,
        cancellation: CancellationToken,
    ) -> Result<Option<Value>, UpstreamError> {
        let Some((target, own_uri)) = resource_target(tools, uri, naming) else {
            return Ok(None);
        };
        let server = target.upstream.name.as_str();
        let context = self.gateway_context(principal, cancellation);
        let mut result = self
            .engine
            .tools
            .client()
            .read_resource_json(&target.upstream, own_uri, &context)
            .await?;
        if naming == GatewayNaming::Original {
            return Ok(Some(result));
        }
        if let Some(Value::Array(contents)) = result.get_mut("contents") {
            for content in contents {
                rename_uri(content, "uri", server);
            }
        }
        Ok(Some(result))
    }

    /// `prompts/get` of the upstream's `prompt` on `server` (as found in a listing).
    pub async fn gateway_get_prompt(
        &self,
        principal: &Principal,
        tools: &TurnTools,
        (server, prompt): (&str, &str),
        arguments: Option<serde_json::Map<String, Value>>,
        naming: GatewayNaming,
        cancellation: CancellationToken,
    ) -> Result<Option<Value>, UpstreamError> {
        let Some(target) = target_named(tools, server) else {
            return Ok(None);
        };
        let context = self.gateway_context(principal, cancellation);
        let mut result = self
            .engine
            .tools
            .client()
            .get_prompt_json(&target.upstream, prompt, arguments, &context)
            .await?;
        if naming == GatewayNaming::Original {
            return Ok(Some(result));
        }
        if let Some(Value::Array(messages)) = result.get_mut("messages") {
            for message in messages {
                if let Some(content) = message.get_mut("content") {
                    rename_content_uris(content, server);
                }
            }
        }
        Ok(Some(result))
    }

    /// `completion/complete` on `server` with `params` (its `ref` already the upstream's
    /// own prompt name or URI).
    pub async fn gateway_complete(
        &self,
        principal: &Principal,
        tools: &TurnTools,
        server: &str,
        params: Value,
        cancellation: CancellationToken,
    ) -> Result<Option<Value>, UpstreamError> {
        let Some(target) = target_named(tools, server) else {
            return Ok(None);
        };
        let context = self.gateway_context(principal, cancellation);
        self.engine
            .tools
            .client()
            .complete_json(&target.upstream, params, &context)
            .await
            .map(Some)
    }

    /// The caller's sessions (as a turn's listing uses them: no conversation).
    fn gateway_context(
        &self,
        principal: &Principal,
        cancellation: CancellationToken,
    ) -> CallContext {
        CallContext {
            caller: Caller {
                user_id: principal.user_id.clone(),
                conversation_id: None,
            },
            cancellation,
            events: None,
            client_link: None,
            detach: None,
        }
    }

    /// `logging/setLevel` to `level` on every server of `tools` that declares `logging`
    /// (the one server of a per-server gateway); the names of the servers that took it.
    pub async fn gateway_set_log_level(
        &self,
        principal: &Principal,
        tools: &TurnTools,
        level: &str,
    ) -> Result<Vec<String>, UpstreamError> {
        let context = self.gateway_context(principal, CancellationToken::new());
        let client = self.engine.tools.client();
        let targets = tools.targets();
        let outcomes = futures::future::join_all(
            targets
                .iter()
                .map(|target| client.set_log_level(&target.upstream, level, &context)),
        )
        .await;
        let mut applied = Vec::new();
        for (target, outcome) in targets.iter().zip(outcomes) {
            if outcome? {
                applied.push(target.upstream.name.clone());
            }
        }
        Ok(applied)
    }

    /// Watches a gateway URI at the server that owns it (`resources/subscribe` there, unless
    /// the caller's session already watches it; `resources/unsubscribe` when the last watch
    /// there is dropped).
    pub async fn gateway_watch_resource(
        &self,
        principal: &Principal,
        tools: &TurnTools,
        uri: &str,
        naming: GatewayNaming,
    ) -> Result<GatewaySubscription, UpstreamError> {
        let Some((target, own_uri)) = resource_target(tools, uri, naming) else {
            return Ok(GatewaySubscription::UnknownResource);
        };
        let context = self.gateway_context(principal, CancellationToken::new());
        let watch = self
            .engine
            .tools
            .client()
            .watch_resource(&target.upstream, own_uri, &context)
            .await?;
        Ok(match watch {
            Some(watch) => GatewaySubscription::Watching(GatewayResourceWatch {
                watch,
                server: target.upstream.name.clone(),
                naming,
            }),
            None => GatewaySubscription::NotOffered,
        })
    }
}

/// What came of a gateway client's `resources/subscribe`.
#[derive(Debug)]
pub enum GatewaySubscription {
    /// No server of the caller's has the URI.
    UnknownResource,
    /// Its server does not offer resource subscriptions.
    NotOffered,
    Watching(GatewayResourceWatch),
}

/// One gateway client's watch of one resource: the upstream's updates under the gateway's
/// names for them. Dropping it releases the upstream's subscription (when it was the last).
#[derive(Debug)]
pub struct GatewayResourceWatch {
    watch: ResourceWatch,
    server: String,
    naming: GatewayNaming,
}

impl GatewayResourceWatch {
    /// The gateway URI of the next update; `None` once the upstream's session has ended.
    pub async fn next_update(&mut self) -> Option<String> {
        let uri = self.watch.next_update().await?;
        Some(match self.naming {
            GatewayNaming::PerServer => gateway_uri(&self.server, &uri),
            GatewayNaming::Original => uri,
        })
    }
}

/// The call target owning a gateway URI, and the upstream's own URI.
fn resource_target<'a, 'u>(
    tools: &'a TurnTools,
    uri: &'u str,
    naming: GatewayNaming,
) -> Option<(&'a CallTarget, &'u str)> {
    match naming {
        GatewayNaming::PerServer => upstream_uri(uri)
            .and_then(|(server, own_uri)| Some((target_named(tools, server)?, own_uri))),
        GatewayNaming::Original => only_target(tools).map(|target| (target, uri)),
    }
}

fn target_named<'a>(tools: &'a TurnTools, server: &str) -> Option<&'a CallTarget> {
    tools
        .targets()
        .into_iter()
        .find(|target| target.upstream.name == server)
}

/// The one server of a per-server gateway's tools.
pub fn only_target(tools: &TurnTools) -> Option<&CallTarget> {
    match tools.targets()[..] {
        [target] => Some(target),
        _ => None,
    }
}

/// Gives one listed item its gateway name (prompts) or URI (resources, templates).
fn rename_item(
    item: &mut Value,
    server: &str,
    list: ForwardedList,
    naming: GatewayNaming,
    prompts: &mut HashMap<String, (String, String)>,
) {
    if naming == GatewayNaming::Original {
        if let (ForwardedList::Prompts, Some(Value::String(name))) = (list, item.get("name")) {
            prompts.insert(name.clone(), (server.to_owned(), name.clone()));
        }
        return;
    }
    match list {
        ForwardedList::Resources => rename_uri(item, "uri", server),
        ForwardedList::ResourceTemplates => rename_uri(item, "uriTemplate", server),
        ForwardedList::Prompts => {
            let Some(Value::String(name)) = item.get_mut("name") else {
                return;
            };
            let offered = format!("{server}__{name}");
            prompts.insert(offered.clone(), (server.to_owned(), name.clone()));
            *name = offered;
        }
    }
}

fn rename_uri(object: &mut Value, field: &str, server: &str) {
    if let Some(Value::String(uri)) = object.get_mut(field) {
        *uri = gateway_uri(server, uri);
    }
}

/// A prompt message's content: an embedded resource or a resource link names a URI the
/// client may read through the gateway.
fn rename_content_uris(content: &mut Value, server: &str) {
    match content.get("type").and_then(Value::as_str) {
        Some("resource") => {
            if let Some(resource) = content.get_mut("resource") {
                rename_uri(resource, "uri", server);
            }
        }
        Some("resource_link") => rename_uri(content, "uri", server),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_uri_round_trips() {
        for uri in [
            "demo://resource/static/document/architecture.md",
            "file:///home/a b/c?d#e",
            "https://example.com/x/y?q=1",
            "demo://resource/dynamic/text/{resourceId}",
            "urn:isbn:0451450523",
            "x",
        ] {
            let offered = gateway_uri("every_thing-2", uri);
            assert_eq!(upstream_uri(&offered), Some(("every_thing-2", uri)));
        }
        assert_eq!(upstream_uri("demo://resource/x"), None);
        assert_eq!(upstream_uri("switchboard://everything"), None);
        assert_eq!(upstream_uri("switchboard:///x"), None);
    }

    #[test]
    fn prompts_are_named_after_their_server_and_found_again() {
        let mut prompts = HashMap::new();
        let mut item = serde_json::json!({"name": "simple-prompt", "arguments": []});
        rename_item(
            &mut item,
            "a__b",
            ForwardedList::Prompts,
            GatewayNaming::PerServer,
            &mut prompts,
        );
        assert_eq!(item["name"], "a__b__simple-prompt");
        assert_eq!(
            prompts["a__b__simple-prompt"],
            ("a__b".to_owned(), "simple-prompt".to_owned())
        );
        let mut item = serde_json::json!({"name": "simple-prompt", "arguments": []});
        rename_item(
            &mut item,
            "a__b",
            ForwardedList::Prompts,
            GatewayNaming::Original,
            &mut prompts,
        );
        assert_eq!(item["name"], "simple-prompt", "one server: its own name");
        assert_eq!(prompts["simple-prompt"].0, "a__b");
    }
}
