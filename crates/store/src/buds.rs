//! Buds: assistant profiles (system prompt, provider, model and fallbacks, which MCP servers
//! and tools they use). A conversation may start from a bud; the chat engine interprets `mcp_config`.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::storable::{clean_json, clean_optional_text, clean_text};
use crate::store::Store;
use crate::validate;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::types::Json;
use switchboard_core::{BudId, UserId, WorkspaceId};

/// A bud to create.
#[derive(Clone, Debug, PartialEq)]
pub struct NewBud {
    pub name: String,
    pub system_prompt: String,
    /// LLM provider name; `None` uses the configured default.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// A JSON object (e.g. which servers and tools the bud may use), owned by the chat engine.
    pub mcp_config: Value,
    /// Who may change or delete it besides admins (`None`: admins only).
    pub owner_user_id: Option<UserId>,
    /// Tried in order when the provider before fails before answering (migration 0012).
    pub fallbacks: Vec<BudFallback>,
}

/// One step of a bud's fallback chain: a provider by name and, optionally, its model (`None`:
/// the provider's default). The chat engine checks the names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudFallback {
    pub provider: String,
    #[serde(default)]
    pub model: Option<String>,
}

/// A change to a bud; `None` leaves a field as it is, `Some(None)` clears a nullable one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BudPatch {
    pub name: Option<String>,
    pub system_prompt: Option<String>,
    pub provider: Option<Option<String>>,
    pub model: Option<Option<String>>,
    pub mcp_config: Option<Value>,
    pub fallbacks: Option<Vec<BudFallback>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BudRecord {
    pub id: BudId,
    pub workspace_id: WorkspaceId,
    pub name: String,
    pub system_prompt: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub mcp_config: Value,
    /// The user who created it (`None` for buds from before owners were recorded).
    pub owner_user_id: Option<UserId>,
    pub fallbacks: Vec<BudFallback>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct BudRow {
    id: String,
    workspace_id: String,
    name: String,
    system_prompt: String,
    provider: Option<String>,
    model: Option<String>,
    mcp_config: Json<Value>,
    owner_user_id: Option<String>,
    llm_fallbacks: Json<Vec<BudFallback>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<BudRow> for BudRecord {
    fn from(row: BudRow) -> Self {
        BudRecord {
            id: BudId::from_string(row.id),
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            name: row.name,
            system_prompt: row.system_prompt,
            provider: row.provider,
            model: row.model,
            mcp_config: row.mcp_config.0,
            owner_user_id: row.owner_user_id.map(UserId::from_string),
            fallbacks: row.llm_fallbacks.0,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

macro_rules! select_buds {
    ($tail:literal) => {
        concat!(
            "SELECT id, workspace_id, name, system_prompt, provider, model, mcp_config, ",
            "owner_user_id, llm_fallbacks, created_at, updated_at FROM buds ",
            $tail
        )
    };
}

/// The bud's prompt, model and tool configuration as every backend holds them
/// ([`crate::storable`]); its name is refused instead when it holds U+0000.
fn clean_bud(bud: &mut BudRecord) {
    clean_text(&mut bud.system_prompt);
    clean_optional_text(&mut bud.provider);
    clean_optional_text(&mut bud.model);
    clean_json(&mut bud.mcp_config);
    for fallback in &mut bud.fallbacks {
        clean_text(&mut fallback.provider);
        clean_optional_text(&mut fallback.model);
    }
}

fn validate_bud(name: &str, mcp_config: &Value) -> StoreResult<()> {
    validate::display_text("name", name, 200)?;
    if !mcp_config.is_object() {
        return Err(StoreError::invalid("mcp_config", "must be a JSON object"));
    }
    Ok(())
}

impl Store {
    pub async fn create_bud(
        &self,
        workspace_id: &WorkspaceId,
        new_bud: NewBud,
    ) -> StoreResult<BudRecord> {
        validate_bud(&new_bud.name, &new_bud.mcp_config)?;
        let now = clock::now();
        let mut record = BudRecord {
            id: BudId::generate(),
            workspace_id: workspace_id.clone(),
            name: new_bud.name,
            system_prompt: new_bud.system_prompt,
            provider: new_bud.provider,
            model: new_bud.model,
            mcp_config: new_bud.mcp_config,
            owner_user_id: new_bud.owner_user_id,
            fallbacks: new_bud.fallbacks,
            created_at: now,
            updated_at: now,
        };
        clean_bud(&mut record);
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO buds (id, workspace_id, name, system_prompt, provider, model, mcp_config, \
             created_at, updated_at, owner_user_id, llm_fallbacks) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10)"
        )
        .bind(record.id.as_str())
        .bind(record.workspace_id.as_str())
        .bind(&record.name)
        .bind(&record.system_prompt)
        .bind(&record.provider)
        .bind(&record.model)
        .bind(Json(&record.mcp_config))
        .bind(record.created_at)
        .bind(record.owner_user_id.as_ref().map(|owner| owner.as_str()))
        .bind(Json(&record.fallbacks))
        .execute(pool)
        .await
        .map(|_| ()))
        .map_err(insert_error("bud", "id", "workspace"))?;
        Ok(record)
    }

    pub async fn get_bud(
        &self,
        workspace_id: &WorkspaceId,
        bud_id: &BudId,
    ) -> StoreResult<BudRecord> {
        let row: Option<BudRow> = on_backend!(self, |pool| sqlx::query_as(select_buds!(
            "WHERE workspace_id = $1 AND id = $2"
        ))
        .bind(workspace_id.as_str())
        .bind(bud_id.as_str())
        .fetch_optional(pool)
        .await)?;
        row.map(BudRecord::from)
            .ok_or_else(|| StoreError::not_found("bud"))
    }

    /// The workspace's buds by name.
    pub async fn list_buds(&self, workspace_id: &WorkspaceId) -> StoreResult<Vec<BudRecord>> {
        let rows: Vec<BudRow> = on_backend!(self, |pool| sqlx::query_as(select_buds!(
            "WHERE workspace_id = $1 ORDER BY name, id"
        ))
        .bind(workspace_id.as_str())
        .fetch_all(pool)
        .await)?;
        Ok(rows.into_iter().map(BudRecord::from).collect())
    }

    pub async fn update_bud(
        &self,
        workspace_id: &WorkspaceId,
        bud_id: &BudId,
        patch: BudPatch,
    ) -> StoreResult<BudRecord> {
        let mut bud = self.get_bud(workspace_id, bud_id).await?;
        if let Some(name) = patch.name {
            bud.name = name;
        }
        if let Some(system_prompt) = patch.system_prompt {
            bud.system_prompt = system_prompt;
        }
        if let Some(provider) = patch.provider {
            bud.provider = provider;
        }
        if let Some(model) = patch.model {
            bud.model = model;
        }
        if let Some(mcp_config) = patch.mcp_config {
            bud.mcp_config = mcp_config;
        }
        if let Some(fallbacks) = patch.fallbacks {
            bud.fallbacks = fallbacks;
        }
        validate_bud(&bud.name, &bud.mcp_config)?;
        bud.updated_at = clock::now();
        clean_bud(&mut bud);
        let affected = on_backend!(self, |pool| sqlx::query(
            "UPDATE buds SET name = $3, system_prompt = $4, provider = $5, model = $6, \
             mcp_config = $7, updated_at = $8, llm_fallbacks = $9 \
             WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(bud_id.as_str())
        .bind(&bud.name)
        .bind(&bud.system_prompt)
        .bind(&bud.provider)
        .bind(&bud.model)
        .bind(Json(&bud.mcp_config))
        .bind(bud.updated_at)
        .bind(Json(&bud.fallbacks))
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        if affected == 0 {
            return Err(StoreError::not_found("bud"));
        }
        Ok(bud)
    }

    /// Deletes a bud; conversations started from it keep going without it.
    pub async fn delete_bud(&self, workspace_id: &WorkspaceId, bud_id: &BudId) -> StoreResult<()> {
        let affected = on_backend!(self, |pool| sqlx::query(
            "DELETE FROM buds WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(bud_id.as_str())
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        if affected == 0 {
            return Err(StoreError::not_found("bud"));
        }
        Ok(())
    }
}
