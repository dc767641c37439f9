//! The providers a workspace sees: the configuration file's (read-only through the API) and
//! the ones stored in the workspace, as [`ProviderEntry`]s without keys; and a stored provider
//! turned back into a [`NamedProviderConfig`] (key decrypted) to build it.

use chrono::{DateTime, Utc};
use switchboard_core::WorkspaceId;
use switchboard_llm::{ApiKey, ModelInfo, NamedProviderConfig, ProviderKind};
use switchboard_store::{LlmProviderRecord, Store, StoreError};

use super::ProviderSet;
use crate::error::ChatError;

/// Where a provider is described.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderSource {
    /// The configuration file: read-only through the API.
    Config,
    /// Stored in the workspace by an admin through the API.
    Api,
}

/// A provider as the API shows it: never its key.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderEntry {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub has_api_key: bool,
    pub default_model: String,
    pub api_version: String,
    pub models: Vec<ModelInfo>,
    pub source: ProviderSource,
    /// `None` for the configuration file's.
    pub created_at: Option<DateTime<Utc>>,
    pub updated_at: Option<DateTime<Utc>>,
}

impl ProviderEntry {
    fn from_config(named: &NamedProviderConfig) -> Self {
        Self {
            name: named.name.clone(),
            kind: named.kind,
            base_url: named.base_url.clone(),
            has_api_key: named
                .api_key
                .as_ref()
                .is_some_and(|key| !key.expose().is_empty()),
            default_model: named.model.clone(),
            api_version: named.api_version.clone(),
            models: named.models.clone(),
            source: ProviderSource::Config,
            created_at: None,
            updated_at: None,
        }
    }

    pub(crate) fn from_record(record: LlmProviderRecord) -> Result<Self, ChatError> {
        let kind = ProviderKind::parse(&record.kind).ok_or_else(|| {
            ChatError::Store(StoreError::Corrupt(format!(
                "the LLM provider '{}' has an unknown kind '{}'",
                record.name, record.kind
            )))
        })?;
        let models = serde_json::from_value(record.models).map_err(|error| {
            ChatError::Store(StoreError::Corrupt(format!(
                "the LLM provider '{}' has unreadable models: {error}",
                record.name
            )))
        })?;
        Ok(Self {
            name: record.name,
            kind,
            base_url: record.base_url,
            has_api_key: record.has_api_key,
            default_model: record.default_model,
            api_version: record.api_version,
            models,
            source: ProviderSource::Api,
            created_at: Some(record.created_at),
            updated_at: Some(record.updated_at),
        })
    }

    /// The description to build from, with `api_key`.
    pub(crate) fn to_named(&self, api_key: Option<String>) -> NamedProviderConfig {
        NamedProviderConfig {
            name: self.name.clone(),
            kind: self.kind,
            base_url: self.base_url.clone(),
            api_key: api_key.map(ApiKey::new),
            model: self.default_model.clone(),
            api_version: self.api_version.clone(),
            models: self.models.clone(),
        }
    }
}

/// The stored provider `name` of the workspace with its key, and its version (when it was last
/// changed); `None` when there is none.
pub(super) async fn stored_provider(
    store: &Store,
    workspace_id: &WorkspaceId,
    name: &str,
) -> Result<Option<(NamedProviderConfig, String)>, ChatError> {
    let record = match store.get_llm_provider(workspace_id, name).await {
        Ok(record) => record,
        Err(StoreError::NotFound { .. }) => return Ok(None),
        Err(error) => return Err(ChatError::Store(error)),
    };
    let version = record.updated_at.to_rfc3339();
    let api_key = if record.has_api_key {
        store.llm_provider_api_key(workspace_id, name).await?
    } else {
        None
    };
    let entry = ProviderEntry::from_record(record)?;
    Ok(Some((entry.to_named(api_key), version)))
}

impl ProviderSet {
    /// Every provider the workspace sees: the configuration file's first (`default` leading),
    /// then the stored ones by name.
    pub async fn entries(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Vec<ProviderEntry>, ChatError> {
        let mut entries: Vec<ProviderEntry> = self
            .config()
            .named_providers()
            .iter()
            .map(ProviderEntry::from_config)
            .collect();
        for record in self.store().list_llm_providers(workspace_id).await? {
            entries.push(ProviderEntry::from_record(record)?);
        }
        Ok(entries)
    }

    /// The provider named `name`, if the workspace sees one.
    pub async fn entry(
        &self,
        workspace_id: &WorkspaceId,
        name: &str,
    ) -> Result<Option<ProviderEntry>, ChatError> {
        if let Some(named) = self
            .config()
            .named_providers()
            .iter()
            .find(|named| named.name == name)
        {
            return Ok(Some(ProviderEntry::from_config(named)));
        }
        match self.store().get_llm_provider(workspace_id, name).await {
            Ok(record) => Ok(Some(ProviderEntry::from_record(record)?)),
            Err(StoreError::NotFound { .. }) => Ok(None),
            Err(error) => Err(ChatError::Store(error)),
        }
    }

    /// The description `entry` was built from, key included (to list its models).
    pub(crate) async fn named_with_key(
        &self,
        workspace_id: &WorkspaceId,
        entry: &ProviderEntry,
    ) -> Result<NamedProviderConfig, ChatError> {
        match entry.source {
            ProviderSource::Config => Ok(self
                .config()
                .named_providers()
                .into_iter()
                .find(|named| named.name == entry.name)
                .unwrap_or_else(|| entry.to_named(None))),
            ProviderSource::Api => {
                let key = self
                    .store()
                    .llm_provider_api_key(workspace_id, &entry.name)
                    .await?;
                Ok(entry.to_named(key))
            }
        }
    }
}
