//! The tools of a registered server whose connection is built for the person chatting (issue
//! 11): with their own values for its user fields, or with the token of their OAuth connection
//! (or the workspace's shared one), by the registry. Without their values or connection the
//! server is unavailable to them only (code `needs_user_credentials` or `needs_auth`), and the
//! turn goes on without it. A server never synced (or whose last listing was refused) is listed
//! as this person, since there is no one else to list it as.

use super::catalog::{McpTools, ServerTools, offered_tools, unavailable_server};
use crate::mcp_config::ResolvedMcpConfig;
use switchboard_core::Principal;
use switchboard_registry::{
    CapabilityState, NEEDS_AUTH, NEEDS_USER_CREDENTIALS, RegistryError, ServerRegistry,
};
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
            Err(error @ RegistryError::NeedsAuth { .. }) => {
                return unavailable_server(record, NEEDS_AUTH, error.to_string());
            }
            Err(RegistryError::OAuth(error)) => {
                return unavailable_server(record, error.code(), error.to_string());
            }
            Err(error) => return unavailable_server(record, "invalid_config", error.to_string()),
        };
        let mut record = record.clone();
        let mut usable = registry.usable_tools(&record).await;
        let refused =
            matches!(&usable, Err(unusable) if unusable.state == CapabilityState::NeedsAuth);
        if record.last_synced_at.is_none() || refused {
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
            usable = registry.usable_tools(&record).await;
        }
        match usable {
            Ok(tools) => offered_tools(&record, resolved, upstream, &tools),
            Err(unusable) => unavailable_server(&record, &unusable.code, unusable.message),
        }
    }
}
