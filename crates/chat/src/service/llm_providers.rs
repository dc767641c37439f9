//! Named LLM providers through the API: every member lists them and their models (never a
//! key); admins add, change and delete the workspace's stored ones. The configuration file's
//! providers are read-only here (409 naming the file), and a stored provider cannot take one of
//! their names. A provider a bud names cannot be deleted (409 naming the bud). A stored
//! provider's `base_url` passes the URL policy of registered MCP servers (422 naming it); the
//! configuration file's providers are the admin's own and keep what the file says.

use super::ChatService;
use crate::error::{ChatError, ChatResult};
use crate::providers::{ProviderEntry, ProviderSource};
use std::collections::BTreeMap;
use switchboard_core::Principal;
use switchboard_llm::{
    ApiKey, ListedModel, ModelInfo, NamedProviderConfig, ProviderKind, list_models,
};
use switchboard_mcp_client::{ServerOrigin, Url};
use switchboard_store::NewLlmProvider;

/// A provider to add.
#[derive(Clone, Debug)]
pub struct LlmProviderInput {
    pub name: String,
    /// `openai`, `azure_openai`, `anthropic` or `offline`.
    pub kind: String,
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    pub default_model: String,
    pub api_version: String,
    pub models: Vec<ModelInfo>,
}

/// A change to a stored provider; `None` keeps a field, `api_key: Some(None)` removes the key.
#[derive(Clone, Debug, Default)]
pub struct LlmProviderUpdate {
    pub kind: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<Option<ApiKey>>,
    pub default_model: Option<String>,
    pub api_version: Option<String>,
    pub models: Option<Vec<ModelInfo>>,
}

/// A provider's models: the configured ones merged with what its API lists.
#[derive(Clone, Debug)]
pub struct ModelListing {
    pub provider: String,
    pub models: Vec<ModelEntry>,
    pub remote: RemoteListing,
}

/// One model: configured, listed by the provider's API, or both.
#[derive(Clone, Debug)]
pub struct ModelEntry {
    pub id: String,
    pub display_name: Option<String>,
    pub context_window: Option<u32>,
    pub supports_images: bool,
    pub supports_tools: bool,
    pub configured: bool,
    pub listed: bool,
}

/// What asking the provider's API for its models gave.
#[derive(Clone, Debug)]
pub enum RemoteListing {
    /// The API listed these many models.
    Listed(usize),
    /// The API has no listing (offline planner, Azure deployments).
    Unsupported,
    /// The API failed; the message says how (status and body excerpt, timeout, unreachable).
    Failed(String),
}

impl ChatService {
    pub async fn list_llm_providers(
        &self,
        principal: &Principal,
    ) -> ChatResult<Vec<ProviderEntry>> {
        self.engine.providers.entries(&principal.workspace_id).await
    }

    pub async fn get_llm_provider(
        &self,
        principal: &Principal,
        name: &str,
    ) -> ChatResult<ProviderEntry> {
        self.engine
            .providers
            .entry(&principal.workspace_id, name)
            .await?
            .ok_or(ChatError::NotFound("LLM provider"))
    }

    pub async fn create_llm_provider(
        &self,
        principal: &Principal,
        input: LlmProviderInput,
    ) -> ChatResult<ProviderEntry> {
        require_admin(principal)?;
        let kind = parse_kind(&input.kind)?;
        if self.configured_names().contains_key(input.name.as_str()) {
            return Err(ChatError::Conflict(format!(
                "the provider '{}' is defined in the configuration file; choose another name",
                input.name
            )));
        }
        let named = NamedProviderConfig {
            name: input.name,
            kind,
            base_url: input.base_url.trim().to_owned(),
            api_key: input.api_key.filter(|key| !key.expose().is_empty()),
            model: input.default_model.trim().to_owned(),
            api_version: input.api_version.trim().to_owned(),
            models: input.models,
        };
        self.checked(&named)?;
        let record = self
            .engine
            .store
            .create_llm_provider(&principal.workspace_id, to_new(&named)?)
            .await?;
        ProviderEntry::from_record(record)
    }

    pub async fn update_llm_provider(
        &self,
        principal: &Principal,
        name: &str,
        update: LlmProviderUpdate,
    ) -> ChatResult<ProviderEntry> {
        require_admin(principal)?;
        let entry = self.stored_entry(principal, name).await?;
        let mut named = self
            .engine
            .providers
            .named_with_key(&principal.workspace_id, &entry)
            .await?;
        if let Some(kind) = &update.kind {
            named.kind = parse_kind(kind)?;
        }
        if let Some(base_url) = update.base_url {
            named.base_url = base_url.trim().to_owned();
        }
        if let Some(api_key) = update.api_key {
            named.api_key = api_key.filter(|key| !key.expose().is_empty());
        }
        if let Some(model) = update.default_model {
            named.model = model.trim().to_owned();
        }
        if let Some(api_version) = update.api_version {
            named.api_version = api_version.trim().to_owned();
        }
        if let Some(models) = update.models {
            named.models = models;
        }
        self.checked(&named)?;
        let record = self
            .engine
            .store
            .replace_llm_provider(&principal.workspace_id, to_new(&named)?)
            .await?;
        ProviderEntry::from_record(record)
    }

    pub async fn delete_llm_provider(&self, principal: &Principal, name: &str) -> ChatResult<()> {
        require_admin(principal)?;
        self.stored_entry(principal, name).await?;
        let buds = self.engine.store.list_buds(&principal.workspace_id).await?;
        if let Some(bud) = buds
            .iter()
            .find(|bud| bud.provider.as_deref() == Some(name))
        {
            return Err(ChatError::Conflict(format!(
                "the bud '{}' ({}) answers with the provider '{name}'; change it first",
                bud.name, bud.id
            )));
        }
        if let Some(bud) = buds.iter().find(|bud| {
            bud.fallbacks
                .iter()
                .any(|fallback| fallback.provider == name)
        }) {
            return Err(ChatError::Conflict(format!(
                "the bud '{}' ({}) falls back to the provider '{name}'; change it first",
                bud.name, bud.id
            )));
        }
        Ok(self
            .engine
            .store
            .delete_llm_provider(&principal.workspace_id, name)
            .await?)
    }

    /// The provider's configured models merged with what its API lists (by id, configured
    /// first, then listed ones by id). A failing API is reported in `remote`, not as an error.
    pub async fn llm_provider_models(
        &self,
        principal: &Principal,
        name: &str,
    ) -> ChatResult<ModelListing> {
        let entry = self.get_llm_provider(principal, name).await?;
        let named = self
            .engine
            .providers
            .named_with_key(&principal.workspace_id, &entry)
            .await?;
        let config = self.engine.providers.config().for_named(&named);
        let (listed, remote) = match list_models(&config).await {
            Ok(Some(listed)) => {
                let count = listed.len();
                (listed, RemoteListing::Listed(count))
            }
            Ok(None) => (Vec::new(), RemoteListing::Unsupported),
            Err(error) => (Vec::new(), RemoteListing::Failed(error.to_string())),
        };
        Ok(ModelListing {
            provider: entry.name.clone(),
            models: merged_models(&entry, listed),
            remote,
        })
    }

    fn configured_names(&self) -> BTreeMap<String, ()> {
        self.engine
            .providers
            .config()
            .named_providers()
            .into_iter()
            .map(|named| (named.name, ()))
            .collect()
    }

    /// The stored provider `name`: 409 for a configuration file's, 404 for none.
    async fn stored_entry(&self, principal: &Principal, name: &str) -> ChatResult<ProviderEntry> {
        let entry = self.get_llm_provider(principal, name).await?;
        if entry.source == ProviderSource::Config {
            return Err(ChatError::Conflict(format!(
                "the provider '{name}' is defined in the configuration file and cannot be \
                 changed through the API"
            )));
        }
        Ok(entry)
    }

    fn checked(&self, named: &NamedProviderConfig) -> ChatResult<()> {
        switchboard_llm::validate_named(self.engine.providers.config(), named)
            .map_err(|invalid| ChatError::invalid(invalid.key, invalid.reason))?;
        self.check_url_policy(&named.base_url)?;
        switchboard_llm::build_provider(&self.engine.providers.config().for_named(named))
            .map(|_| ())
            .map_err(|error| ChatError::invalid("base_url", error.to_string()))
    }
}

impl ChatService {
    /// A stored provider's `base_url` obeys the URL policy of the MCP servers people register
    /// (`mcp.url_policy`): the same SSRF guard, so an admin's API call cannot point the
    /// service at an address it would refuse for a server. Empty: the kind's own endpoint.
    fn check_url_policy(&self, base_url: &str) -> ChatResult<()> {
        if base_url.is_empty() {
            return Ok(());
        }
        let url = Url::parse(base_url).map_err(|error| {
            ChatError::invalid("base_url", format!("'{base_url}' is not a URL: {error}"))
        })?;
        self.engine
            .tools
            .client()
            .url_policy_for(ServerOrigin::Registered)
            .check_url(&url, &["http", "https"])
            .map_err(|refused| {
                ChatError::invalid(
                    "base_url",
                    format!("the URL policy (mcp.url_policy) refuses it: {refused}"),
                )
            })
    }
}

fn require_admin(principal: &Principal) -> ChatResult<()> {
    if principal.is_admin() {
        Ok(())
    } else {
        Err(ChatError::Forbidden(
            "only admins change LLM providers".to_owned(),
        ))
    }
}

fn parse_kind(kind: &str) -> ChatResult<ProviderKind> {
    ProviderKind::parse(kind).ok_or_else(|| {
        ChatError::invalid(
            "kind",
            format!(
                "unknown provider kind '{}' (expected openai, azure_openai, anthropic or offline)",
                switchboard_core::log_text(kind)
            ),
        )
    })
}

fn to_new(named: &NamedProviderConfig) -> ChatResult<NewLlmProvider> {
    let models = serde_json::to_value(&named.models)
        .map_err(|error| ChatError::invalid("models", error.to_string()))?;
    Ok(NewLlmProvider {
        name: named.name.clone(),
        kind: named.kind.as_str().to_owned(),
        base_url: named.base_url.clone(),
        api_key: named.api_key.as_ref().map(|key| key.expose().to_owned()),
        default_model: named.model.clone(),
        api_version: named.api_version.clone(),
        models,
    })
}

fn merged_models(entry: &ProviderEntry, listed: Vec<ListedModel>) -> Vec<ModelEntry> {
    let mut models: Vec<ModelEntry> = entry
        .models
        .iter()
        .map(|model| ModelEntry {
            id: model.id.clone(),
            display_name: None,
            context_window: model.context_window,
            supports_images: model.supports_images,
            supports_tools: model.supports_tools,
            configured: true,
            listed: false,
        })
        .collect();
    let mut extra = Vec::new();
    for listed in listed {
        match models.iter_mut().find(|model| model.id == listed.id) {
            Some(model) => {
                model.listed = true;
                model.display_name = listed.display_name;
            }
            None => extra.push(ModelEntry {
                id: listed.id,
                display_name: listed.display_name,
                context_window: None,
                supports_images: false,
                supports_tools: true,
                configured: false,
                listed: true,
            }),
        }
    }
    extra.sort_by(|left, right| left.id.cmp(&right.id));
    models.extend(extra);
    models
}
