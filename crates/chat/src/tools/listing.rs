//! How one server's tools are listed when the registry cannot do it for the chat: our own kg
//! endpoint synced once with the chatting user's token (the registry has no user token), and
//! ephemeral servers listed live and cached per URL.

use super::catalog::{CallTarget, McpTools, ServerTools};
use crate::events::UnavailableServer;
use crate::gate::GateTarget;
use switchboard_mcp_client::{Caller, CatalogServer, UpstreamError, UpstreamServer};
use switchboard_store::{ServerRecord, ServerSync, SyncStatus};

impl McpTools {
    /// Lists a never-synced server now and stores what it offers.
    pub(super) async fn sync_now(
        &self,
        record: &ServerRecord,
        upstream: &UpstreamServer,
        caller: &Caller,
    ) -> Result<Vec<switchboard_store::ToolRecord>, UpstreamError> {
        let workspace_id = &record.workspace_id;
        match self.client.fetch_capabilities(upstream, caller).await {
            Ok(snapshot) => {
                self.store
                    .replace_server_app_resources(workspace_id, &record.id, &snapshot.apps)
                    .await
                    .map_err(|error| {
                        UpstreamError::Protocol(format!(
                            "storing the app resources failed: {error}"
                        ))
                    })?;
                let stored = self
                    .store
                    .replace_server_tools(workspace_id, &record.id, &snapshot.tools)
                    .await
                    .map_err(|error| {
                        UpstreamError::Protocol(format!("storing the tool list failed: {error}"))
                    })?;
                let sync = ServerSync {
                    sync_status: SyncStatus::Synced,
                    tools: serde_json::to_value(&snapshot.tools).ok(),
                    resources: serde_json::to_value(&snapshot.resources).ok(),
                    prompts: serde_json::to_value(&snapshot.prompts).ok(),
                    synced_at: chrono::Utc::now(),
                    error: None,
                };
                if let Err(error) = self
                    .store
                    .record_server_sync(workspace_id, &record.id, sync)
                    .await
                {
                    tracing::warn!(server = %record.name, %error, "could not record a sync");
                }
                // Approvals pin tool definitions together with the server's instructions.
                if let Err(error) = self
                    .store
                    .record_server_instructions(
                        workspace_id,
                        &record.id,
                        snapshot.server.instructions.as_deref(),
                    )
                    .await
                {
                    tracing::warn!(server = %record.name, %error, "could not record the server's instructions");
                }
                Ok(stored)
            }
            Err(error) => {
                let sync = ServerSync {
                    sync_status: SyncStatus::Failed,
                    tools: None,
                    resources: None,
                    prompts: None,
                    synced_at: chrono::Utc::now(),
                    error: Some(error.to_string()),
                };
                if let Err(store_error) = self
                    .store
                    .record_server_sync(workspace_id, &record.id, sync)
                    .await
                {
                    tracing::warn!(server = %record.name, %store_error, "could not record a failed sync");
                }
                Err(error)
            }
        }
    }

    pub(super) async fn ephemeral_server_tools(
        &self,
        caller: &Caller,
        server: &UpstreamServer,
    ) -> ServerTools {
        let url = match &server.endpoint {
            switchboard_mcp_client::UpstreamEndpoint::Remote(remote) => remote.url.to_string(),
            switchboard_mcp_client::UpstreamEndpoint::Stdio(_) => String::new(),
        };
        let tools = match self.ephemeral_cache.get(&server.id) {
            Some(tools) => tools,
            None => match self.client.fetch_capabilities(server, caller).await {
                Ok(snapshot) => {
                    self.ephemeral_cache
                        .put(server.id.clone(), snapshot.tools.clone());
                    snapshot.tools
                }
                Err(error) => {
                    return ServerTools {
                        catalog: None,
                        fingerprint: Vec::new(),
                        target: None,
                        problem: Some(UnavailableServer {
                            server: server.name.clone(),
                            server_id: None,
                            code: error.code().to_owned(),
                            message: error.to_string(),
                        }),
                    };
                }
            },
        };
        let problem = tools.is_empty().then(|| UnavailableServer {
            server: server.name.clone(),
            server_id: None,
            code: "empty".to_owned(),
            message: "the server lists no tools".to_owned(),
        });
        let fingerprint = tools
            .iter()
            .map(|tool| (tool.name.clone(), switchboard_store::definition_hash(tool)))
            .collect();
        ServerTools {
            catalog: Some(CatalogServer {
                server_id: server.id.clone(),
                server_name: server.name.clone(),
                tools,
            }),
            fingerprint,
            target: Some(CallTarget {
                upstream: server.clone(),
                gate_target: GateTarget::Ephemeral {
                    server_name: server.name.clone(),
                    url,
                },
                registered_server_id: None,
            }),
            problem,
        }
    }
}
