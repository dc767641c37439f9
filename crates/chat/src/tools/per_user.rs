//! The tools of a registered server with user fields (issue 11: per-user credentials without
//! OAuth): its connection is built for the person chatting, with their own values, by the
//! registry. Without their values the server is unavailable to them only (code
//! `needs_user_credentials`), and the turn goes on without it. A server never synced is
//! listed as this person, since there is no one else to list it as.

use super::catalog::{McpTools, ServerTools, offered_tools, unavailable_server};
use crate::mcp_config::ResolvedMcpConfig;
use switchboard_core::Principal;
use switchboard_registry::{NEEDS_USER_CREDENTIALS, RegistryError, ServerRegistry};
use switchboard_store::ServerRecord;

impl McpTools {
    pub(super) async fn per_user_server_tools(
        &self,
        registry: &ServerRegistry,
        principal: &Principal,
        resolved: &ResolvedMcpConfig,
        record: &ServerRecord,
    ) -> ServerTools {
        let user = Some(&principal.user_id);
        let upstream = match registry.upstream_as(record, None, user).await {
            Ok(upstream) => upstream,
            Err(error @ RegistryError::NeedsUserCredentials { .. }) => {
                return unavailable_server(record, NEEDS_USER_CREDENTIALS, error.to_string());
            }
            Err(error) => return unavailable_server(record, "invalid_config", error.to_string()),
        };
        let mut record = record.clone();
        if record.last_synced_at.is_none() {
            let report = registry.sync_record_as(&record, None, user).await;
            if let Some(error) = report.error {
                return unavailable_server(&record, error.code(), error.to_string());
            }
            record = match self
                .store
                .get_server(&record.workspace_id, &record.id)
                .await
            {
                Ok(fresh) => fresh,
                Err(error) => {
                    return unavailable_server(&record, "store_error", error.to_string());
                }
            };
        }
        match registry.usable_tools(&record).await {
            Ok(tools) => offered_tools(&record, resolved, upstream, &tools),
            Err(unusable) => unavailable_server(&record, &unusable.code, unusable.message),
        }
    }
}
