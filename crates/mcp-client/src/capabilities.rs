//! What an upstream offers — tools, resources, prompts, and who it says it is — in rmcp-free
//! shapes, and the paginated listing that fetches them from a live session.
//!
//! Listing follows `nextCursor` until the server stops sending one, bounded in pages and in
//! time, and refuses a cursor that repeats (a server looping on a cursor must not hang a sync).

use crate::UpstreamError;
use crate::error::from_rmcp::ErrorContext;
use crate::latency::LatencyWindow;
use crate::result::from_wire;
use rmcp::model::PaginatedRequestParams;
use rmcp::service::{Peer, RoleClient};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::time::Instant;
use switchboard_core::{AppResource, ToolDefinition, UI_RESOURCE_MIME_TYPE};

/// Most pages fetched for one list before the sync is declared broken.
const MAX_PAGES: usize = 200;

/// A resource as listed by `resources/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceDefinition {
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// A prompt as listed by `prompts/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub arguments: Vec<PromptArgumentDefinition>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptArgumentDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub required: bool,
}

/// Who the upstream is and what it declared, from `initialize` or `server/discover`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerDescription {
    pub protocol_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    pub offers_tools: bool,
    pub offers_resources: bool,
    pub offers_prompts: bool,
}

/// Everything one sync fetched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapabilitySnapshot {
    pub server: ServerDescription,
    pub tools: Vec<ToolDefinition>,
    pub resources: Vec<ResourceDefinition>,
    pub prompts: Vec<PromptDefinition>,
    /// The MCP App resources (`ui://` HTML) the tools name, read with `resources/read`.
    #[serde(default)]
    pub apps: Vec<AppResource>,
}

pub(crate) fn describe_server(peer: &Peer<RoleClient>) -> ServerDescription {
    let Some(info) = peer.peer_info() else {
        return ServerDescription {
            protocol_version: String::new(),
            name: None,
            version: None,
            instructions: None,
            offers_tools: false,
            offers_resources: false,
            offers_prompts: false,
        };
    };
    ServerDescription {
        protocol_version: info.protocol_version.to_string(),
        name: info
            .server_info
            .as_ref()
            .map(|implementation| implementation.name.clone()),
        version: info
            .server_info
            .as_ref()
            .map(|implementation| implementation.version.clone()),
        instructions: info.instructions.clone(),
        offers_tools: info.capabilities.tools.is_some(),
        offers_resources: info.capabilities.resources.is_some(),
        offers_prompts: info.capabilities.prompts.is_some(),
    }
}

/// Follows cursors with `fetch_page(cursor) -> (items, next_cursor)`; every page's time goes
/// to `latency` (a failed page's too).
async fn paginate<T, F, Fut>(
    what: &str,
    latency: &LatencyWindow,
    mut fetch_page: F,
) -> Result<Vec<T>, UpstreamError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), UpstreamError>>,
{
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen_cursors = HashSet::new();
    for _ in 0..MAX_PAGES {
        let started = Instant::now();
        let fetched = fetch_page(cursor.take()).await;
        latency.record_request(started.elapsed());
        let (page, next) = fetched?;
        items.extend(page);
        match next {
            None => return Ok(items),
            Some(next) => {
                if !seen_cursors.insert(next.clone()) {
                    return Err(UpstreamError::Protocol(format!(
                        "{what} repeated the cursor '{next}'"
                    )));
                }
                cursor = Some(next);
            }
        }
    }
    Err(UpstreamError::Protocol(format!(
        "{what} did not end within {MAX_PAGES} pages"
    )))
}

fn page_params(cursor: Option<String>) -> Option<PaginatedRequestParams> {
    let mut params = PaginatedRequestParams::default();
    params.cursor = cursor;
    Some(params)
}

pub(crate) async fn list_tools(
    peer: &Peer<RoleClient>,
    errors: &ErrorContext,
    latency: &LatencyWindow,
) -> Result<Vec<ToolDefinition>, UpstreamError> {
    paginate("tools/list", latency, |cursor| async move {
        let page = peer
            .list_tools(page_params(cursor))
            .await
            .map_err(|error| errors.request_failure(error))?;
        let tools = page
            .tools
            .iter()
            .map(from_wire::<ToolDefinition>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| {
                UpstreamError::Protocol(format!("tools/list returned a malformed tool: {error}"))
            })?;
        Ok((tools, page.next_cursor))
    })
    .await
}

pub(crate) async fn list_resources(
    peer: &Peer<RoleClient>,
    errors: &ErrorContext,
    latency: &LatencyWindow,
) -> Result<Vec<ResourceDefinition>, UpstreamError> {
    paginate("resources/list", latency, |cursor| async move {
        let page = peer
            .list_resources(page_params(cursor))
            .await
            .map_err(|error| errors.request_failure(error))?;
        let resources = page
            .resources
            .iter()
            .map(from_wire::<ResourceDefinition>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| {
                UpstreamError::Protocol(format!(
                    "resources/list returned a malformed resource: {error}"
                ))
            })?;
        Ok((resources, page.next_cursor))
    })
    .await
}

pub(crate) async fn list_prompts(
    peer: &Peer<RoleClient>,
    errors: &ErrorContext,
    latency: &LatencyWindow,
) -> Result<Vec<PromptDefinition>, UpstreamError> {
    paginate("prompts/list", latency, |cursor| async move {
        let page = peer
            .list_prompts(page_params(cursor))
            .await
            .map_err(|error| errors.request_failure(error))?;
        let prompts = page
            .prompts
            .iter()
            .map(from_wire::<PromptDefinition>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| {
                UpstreamError::Protocol(format!(
                    "prompts/list returned a malformed prompt: {error}"
                ))
            })?;
        Ok((prompts, page.next_cursor))
    })
    .await
}

/// Fetches every list the server declared (a list it did not declare is empty, not an error).
pub(crate) async fn snapshot(
    peer: &Peer<RoleClient>,
    errors: &ErrorContext,
    latency: &LatencyWindow,
) -> Result<CapabilitySnapshot, UpstreamError> {
    let server = describe_server(peer);
    let mut tools = if server.offers_tools {
        list_tools(peer, errors, latency).await?
    } else {
        Vec::new()
    };
    let resources = if server.offers_resources {
        list_resources(peer, errors, latency).await?
    } else {
        Vec::new()
    };
    let prompts = if server.offers_prompts {
        list_prompts(peer, errors, latency).await?
    } else {
        Vec::new()
    };
    let apps = read_apps(peer, errors, latency, &mut tools).await;
    Ok(CapabilitySnapshot {
        server,
        tools,
        resources,
        prompts,
        apps,
    })
}

/// Reads the `ui://` resource of every tool that names one (each URI once) and writes its
/// hash into the tool's `_meta.ui.resourceSha256`, so a changed app changes the definition
/// hash. A resource that cannot be read, or is not the app's HTML, takes its tools' app away
/// (no `resourceUri`): the tool still works, without an interface.
async fn read_apps(
    peer: &Peer<RoleClient>,
    errors: &ErrorContext,
    latency: &LatencyWindow,
    tools: &mut [ToolDefinition],
) -> Vec<AppResource> {
    let mut apps: Vec<AppResource> = Vec::new();
    let mut unreadable: HashSet<String> = HashSet::new();
    for tool in tools.iter_mut() {
        let Some(uri) = tool.app_resource_uri().map(str::to_owned) else {
            continue;
        };
        let known = apps
            .iter()
            .find(|app| app.uri == uri)
            .map(|app| app.sha256.clone());
        let sha256 = match known {
            Some(sha256) => Some(sha256),
            None if unreadable.contains(&uri) => None,
            None => match read_app(peer, errors, latency, &uri).await {
                Ok(app) => {
                    let sha256 = app.sha256.clone();
                    apps.push(app);
                    Some(sha256)
                }
                Err(error) => {
                    tracing::warn!(uri = %switchboard_core::log_text(&uri), %error, "an MCP App resource could not be read; its tools are offered without it");
                    unreadable.insert(uri);
                    None
                }
            },
        };
        if let Some(ui) = tool.meta.ui.as_mut() {
            if sha256.is_none() {
                ui.resource_uri = None;
            }
            ui.resource_sha256 = sha256;
        }
    }
    apps
}

/// One `resources/read` of an app: its first content, which must be text of the app MIME type.
pub(crate) async fn read_app(
    peer: &Peer<RoleClient>,
    errors: &ErrorContext,
    latency: &LatencyWindow,
    uri: &str,
) -> Result<AppResource, UpstreamError> {
    let started = Instant::now();
    let read = peer
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
        .await;
    latency.record_request(started.elapsed());
    let result = read.map_err(|error| errors.request_failure(error))?;
    let content = result.contents.into_iter().next().ok_or_else(|| {
        UpstreamError::Protocol(format!("resources/read of {uri} returned no content"))
    })?;
    match content {
        rmcp::model::ResourceContents::TextResourceContents {
            mime_type,
            text,
            meta,
            ..
        } => {
            let mime_type = mime_type.unwrap_or_default();
            if !mime_type.starts_with(UI_RESOURCE_MIME_TYPE) {
                return Err(UpstreamError::Protocol(format!(
                    "resources/read of {uri} returned '{mime_type}', not {UI_RESOURCE_MIME_TYPE}"
                )));
            }
            let meta = meta
                .map(|meta| serde_json::to_value(meta).unwrap_or_default())
                .filter(|meta| !meta.is_null());
            Ok(AppResource::new(uri.to_owned(), mime_type, text, meta))
        }
        _ => Err(UpstreamError::Protocol(format!(
            "resources/read of {uri} returned binary content, not the app's HTML"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn pagination_follows_cursors_and_refuses_loops() {
        let latency = LatencyWindow::default();
        let pages = paginate("tools/list", &latency, |cursor| async move {
            Ok(match cursor.as_deref() {
                None => (vec![1, 2], Some("a".to_owned())),
                Some("a") => (vec![3], Some("b".to_owned())),
                _ => (vec![4], None),
            })
        })
        .await
        .unwrap();
        assert_eq!(pages, vec![1, 2, 3, 4]);
        assert_eq!(latency.summary().samples, 3, "one request per page");

        let looping = paginate::<u8, _, _>("tools/list", &latency, |_| async {
            Ok((vec![], Some("same".to_owned())))
        })
        .await;
        assert!(
            looping
                .unwrap_err()
                .to_string()
                .contains("repeated the cursor")
        );
    }
}
