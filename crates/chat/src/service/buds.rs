//! Buds (assistant profiles): CRUD with the checks the store cannot make — a known provider
//! with a model it can answer with (and so each fallback), an `mcp_config` whose every server reference is a server
//! of the workspace, and ownership: every member sees and uses the workspace's buds, but only
//! a bud's creator or an admin changes or deletes it (its system prompt and tools shape other
//! people's conversations).

use super::ChatService;
use crate::error::{ChatError, ChatResult};
use crate::mcp_config::{BudMcpConfig, McpConfigOverrides, resolve_mcp_config};
use serde_json::Value;
use switchboard_core::{BudId, Principal, WorkspaceId};
use switchboard_store::{BudFallback, BudPatch, BudRecord, NewBud};

#[derive(Clone, Debug)]
pub struct BudInput {
    pub name: String,
    pub system_prompt: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    /// `{servers?, available_tools?, disabled_tools?, tool_choice?}`; `null` is `{}`.
    pub mcp_config: Value,
    /// Tried in order when the provider before fails before answering.
    pub fallbacks: Vec<BudFallback>,
}

/// `None` keeps a field; `Some(None)` clears provider or model.
#[derive(Clone, Debug, Default)]
pub struct BudUpdate {
    pub name: Option<String>,
    pub system_prompt: Option<String>,
    pub provider: Option<Option<String>>,
    pub model: Option<Option<String>>,
    pub mcp_config: Option<Value>,
    pub fallbacks: Option<Vec<BudFallback>>,
}

impl ChatService {
    pub async fn create_bud(
        &self,
        principal: &Principal,
        input: BudInput,
    ) -> ChatResult<BudRecord> {
        let workspace_id = &principal.workspace_id;
        self.engine
            .providers
            .check_bud_choice(
                workspace_id,
                input.provider.as_deref(),
                input.model.as_deref(),
            )
            .await?;
        self.engine
            .providers
            .check_fallbacks(workspace_id, &input.fallbacks)
            .await?;
        let mcp_config = self
            .checked_mcp_config(workspace_id, &input.mcp_config)
            .await?;
        Ok(self
            .engine
            .store
            .create_bud(
                workspace_id,
                NewBud {
                    name: input.name.trim().to_owned(),
                    system_prompt: input.system_prompt,
                    provider: input.provider,
                    model: input.model.filter(|model| !model.trim().is_empty()),
                    mcp_config,
                    owner_user_id: Some(principal.user_id.clone()),
                    fallbacks: input.fallbacks,
                },
            )
            .await?)
    }

    pub async fn list_buds(&self, principal: &Principal) -> ChatResult<Vec<BudRecord>> {
        Ok(self.engine.store.list_buds(&principal.workspace_id).await?)
    }

    pub async fn get_bud(&self, principal: &Principal, bud_id: &BudId) -> ChatResult<BudRecord> {
        Ok(self
            .engine
            .store
            .get_bud(&principal.workspace_id, bud_id)
            .await?)
    }

    pub async fn update_bud(
        &self,
        principal: &Principal,
        bud_id: &BudId,
        update: BudUpdate,
    ) -> ChatResult<BudRecord> {
        let workspace_id = &principal.workspace_id;
        let current = self.engine.store.get_bud(workspace_id, bud_id).await?;
        require_bud_owner(principal, &current)?;
        if update.provider.is_some() || update.model.is_some() {
            let provider = update.provider.clone().unwrap_or(current.provider);
            let model = update.model.clone().unwrap_or(current.model);
            self.engine
                .providers
                .check_bud_choice(workspace_id, provider.as_deref(), model.as_deref())
                .await?;
        }
        if let Some(fallbacks) = &update.fallbacks {
            self.engine
                .providers
                .check_fallbacks(workspace_id, fallbacks)
                .await?;
        }
        let mcp_config = match &update.mcp_config {
            Some(value) => Some(self.checked_mcp_config(workspace_id, value).await?),
            None => None,
        };
        Ok(self
            .engine
            .store
            .update_bud(
                workspace_id,
                bud_id,
                BudPatch {
                    name: update.name.map(|name| name.trim().to_owned()),
                    system_prompt: update.system_prompt,
                    provider: update.provider,
                    model: update.model,
                    mcp_config,
                    fallbacks: update.fallbacks,
                },
            )
            .await?)
    }

    pub async fn delete_bud(&self, principal: &Principal, bud_id: &BudId) -> ChatResult<()> {
        let current = self
            .engine
            .store
            .get_bud(&principal.workspace_id, bud_id)
            .await?;
        require_bud_owner(principal, &current)?;
        Ok(self
            .engine
            .store
            .delete_bud(&principal.workspace_id, bud_id)
            .await?)
    }

    /// Parses and resolves `value` against the workspace's servers; returns it normalised.
    async fn checked_mcp_config(
        &self,
        workspace_id: &WorkspaceId,
        value: &Value,
    ) -> ChatResult<Value> {
        let config = BudMcpConfig::parse(value)?;
        let servers = self.engine.store.list_servers(workspace_id).await?;
        resolve_mcp_config(&config, &McpConfigOverrides::default(), &servers)?;
        Ok(config.to_value())
    }
}

/// A bud is changed or deleted by its owner or an admin; other members see it (403, not 404:
/// every member of the workspace lists and uses it).
fn require_bud_owner(principal: &Principal, bud: &BudRecord) -> ChatResult<()> {
    if principal.is_admin() || bud.owner_user_id.as_ref() == Some(&principal.user_id) {
        return Ok(());
    }
    Err(ChatError::Forbidden(format!(
        "bud '{}' belongs to another member: only its owner or an admin can change or delete it",
        bud.name
    )))
}
