//! Named LLM providers added through the API (migration 0009), per workspace, by name. The
//! store keeps them as given (the chat engine validates kinds, URLs and models); the API key is
//! sealed with the store's cipher, bound to (workspace, name), and read only to build the
//! provider — records carry `has_api_key` instead.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::store::Store;
use crate::validate;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use switchboard_core::WorkspaceId;

/// A provider to store.
#[derive(Clone, PartialEq)]
pub struct NewLlmProvider {
    pub name: String,
    /// `openai`, `azure_openai`, `anthropic` or `offline` (checked by the caller).
    pub kind: String,
    pub base_url: String,
    pub api_key: Option<String>,
    pub default_model: String,
    pub api_version: String,
    /// A JSON array of configured models.
    pub models: Value,
}

impl std::fmt::Debug for NewLlmProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewLlmProvider")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("has_api_key", &self.api_key.is_some())
            .finish_non_exhaustive()
    }
}

/// A stored provider, without its key.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmProviderRecord {
    pub workspace_id: WorkspaceId,
    pub name: String,
    pub kind: String,
    pub base_url: String,
    pub has_api_key: bool,
    pub default_model: String,
    pub api_version: String,
    pub models: Value,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct LlmProviderRow {
    workspace_id: String,
    name: String,
    kind: String,
    base_url: String,
    api_key_ciphertext: Option<Vec<u8>>,
    default_model: String,
    api_version: String,
    models: Json<Value>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<LlmProviderRow> for LlmProviderRecord {
    fn from(row: LlmProviderRow) -> Self {
        Self {
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            name: row.name,
            kind: row.kind,
            base_url: row.base_url,
            has_api_key: row.api_key_ciphertext.is_some(),
            default_model: row.default_model,
            api_version: row.api_version,
            models: row.models.0,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

macro_rules! select_providers {
    ($tail:literal) => {
        concat!(
            "SELECT workspace_id, name, kind, base_url, api_key_ciphertext, default_model, ",
            "api_version, models, created_at, updated_at FROM llm_providers ",
            $tail
        )
    };
}

fn associated_data(workspace_id: &WorkspaceId, name: &str) -> Vec<u8> {
    format!("llm_providers/{workspace_id}/{name}").into_bytes()
}

fn validate_provider(provider: &NewLlmProvider) -> StoreResult<()> {
    validate::no_nul("name", &provider.name)?;
    validate::no_nul("kind", &provider.kind)?;
    validate::no_nul("base_url", &provider.base_url)?;
    validate::no_nul("default_model", &provider.default_model)?;
    validate::no_nul("api_version", &provider.api_version)?;
    validate::no_nul_in_json("models", &provider.models)?;
    if !provider.models.is_array() {
        return Err(StoreError::invalid("models", "must be a JSON array"));
    }
    Ok(())
}

impl Store {
    /// Stores a new provider; `UniqueViolation` when the workspace has one by that name.
    pub async fn create_llm_provider(
        &self,
        workspace_id: &WorkspaceId,
        provider: NewLlmProvider,
    ) -> StoreResult<LlmProviderRecord> {
        validate_provider(&provider)?;
        let sealed = self.seal_api_key(workspace_id, &provider)?;
        let now = clock::now();
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO llm_providers (workspace_id, name, kind, base_url, api_key_ciphertext, \
             default_model, api_version, models, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)"
        )
        .bind(workspace_id.as_str())
        .bind(&provider.name)
        .bind(&provider.kind)
        .bind(&provider.base_url)
        .bind(&sealed)
        .bind(&provider.default_model)
        .bind(&provider.api_version)
        .bind(Json(&provider.models))
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ()))
        .map_err(insert_error("LLM provider", "name", "workspace"))?;
        self.get_llm_provider(workspace_id, &provider.name).await
    }

    /// Replaces a stored provider's fields (its name stays); `NotFound` when there is none.
    pub async fn replace_llm_provider(
        &self,
        workspace_id: &WorkspaceId,
        provider: NewLlmProvider,
    ) -> StoreResult<LlmProviderRecord> {
        validate_provider(&provider)?;
        let sealed = self.seal_api_key(workspace_id, &provider)?;
        let affected = on_backend!(self, |pool| sqlx::query(
            "UPDATE llm_providers SET kind = $3, base_url = $4, api_key_ciphertext = $5, \
             default_model = $6, api_version = $7, models = $8, updated_at = $9 \
             WHERE workspace_id = $1 AND name = $2"
        )
        .bind(workspace_id.as_str())
        .bind(&provider.name)
        .bind(&provider.kind)
        .bind(&provider.base_url)
        .bind(&sealed)
        .bind(&provider.default_model)
        .bind(&provider.api_version)
        .bind(Json(&provider.models))
        .bind(clock::now())
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        if affected == 0 {
            return Err(StoreError::not_found("LLM provider"));
        }
        self.get_llm_provider(workspace_id, &provider.name).await
    }

    pub async fn get_llm_provider(
        &self,
        workspace_id: &WorkspaceId,
        name: &str,
    ) -> StoreResult<LlmProviderRecord> {
        Ok(self.llm_provider_row(workspace_id, name).await?.into())
    }

    /// The workspace's stored providers by name.
    pub async fn list_llm_providers(
        &self,
        workspace_id: &WorkspaceId,
    ) -> StoreResult<Vec<LlmProviderRecord>> {
        let rows: Vec<LlmProviderRow> = on_backend!(self, |pool| sqlx::query_as(
            select_providers!("WHERE workspace_id = $1 ORDER BY name")
        )
        .bind(workspace_id.as_str())
        .fetch_all(pool)
        .await)?;
        Ok(rows.into_iter().map(LlmProviderRecord::from).collect())
    }

    /// The provider's API key, decrypted: for building the provider only, never for an answer
    /// or a log.
    pub async fn llm_provider_api_key(
        &self,
        workspace_id: &WorkspaceId,
        name: &str,
    ) -> StoreResult<Option<String>> {
        let row = self.llm_provider_row(workspace_id, name).await?;
        row.api_key_ciphertext
            .map(|sealed| {
                let plaintext = self
                    .cipher
                    .decrypt(&sealed, &associated_data(workspace_id, name))?;
                String::from_utf8(plaintext)
                    .map_err(|_| StoreError::corrupt("an LLM provider's API key is not UTF-8"))
            })
            .transpose()
    }

    pub async fn delete_llm_provider(
        &self,
        workspace_id: &WorkspaceId,
        name: &str,
    ) -> StoreResult<()> {
        let affected = on_backend!(self, |pool| sqlx::query(
            "DELETE FROM llm_providers WHERE workspace_id = $1 AND name = $2"
        )
        .bind(workspace_id.as_str())
        .bind(name)
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        if affected == 0 {
            return Err(StoreError::not_found("LLM provider"));
        }
        Ok(())
    }

    async fn llm_provider_row(
        &self,
        workspace_id: &WorkspaceId,
        name: &str,
    ) -> StoreResult<LlmProviderRow> {
        let row: Option<LlmProviderRow> = on_backend!(self, |pool| sqlx::query_as(
            select_providers!("WHERE workspace_id = $1 AND name = $2")
        )
        .bind(workspace_id.as_str())
        .bind(name)
        .fetch_optional(pool)
        .await)?;
        row.ok_or_else(|| StoreError::not_found("LLM provider"))
    }

    fn seal_api_key(
        &self,
        workspace_id: &WorkspaceId,
        provider: &NewLlmProvider,
    ) -> StoreResult<Option<Vec<u8>>> {
        provider
            .api_key
            .as_deref()
            .map(|key| {
                self.cipher.encrypt(
                    key.as_bytes(),
                    &associated_data(workspace_id, &provider.name),
                )
            })
            .transpose()
    }
}
