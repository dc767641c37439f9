//! Which LLM answers a turn: a named provider — one of the configuration file
//! (`default` = the `[llm]` keys, then `[[llm.providers]]`) or one an admin stored in the
//! workspace through the API (`catalog`) — and its model. Providers are built once and reused
//! (connection pools shared); a stored one is rebuilt when it changed. A bud naming a provider
//! *kind* (`openai`, `anthropic`, `offline`: the shape before named providers) still gets that
//! kind with the `[llm]` keys.
//!
//! The answering model is chosen as: the conversation's own choice (`provider`, `model`), else
//! its bud's, else `default`; a model without a provider applies to the provider chosen
//! otherwise. The bud's fallbacks follow in order ([`ModelChain`]).

mod catalog;

pub use catalog::{ProviderEntry, ProviderSource};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use switchboard_core::WorkspaceId;
use switchboard_llm::{
    DEFAULT_PROVIDER_NAME, LlmConfig, LlmError, LlmOverrides, LlmProvider, ModelInfo,
    NamedProviderConfig, ProviderKind, build_provider,
};
use switchboard_store::{BudFallback, BudRecord, ModelChoice, Store};

use crate::error::ChatError;

/// The provider and model for one turn.
#[derive(Clone, Debug)]
pub struct ChosenModel {
    /// The provider's name (`default`, a configured or stored one, or a kind for old buds).
    pub name: String,
    pub provider: Arc<dyn LlmProvider>,
    /// Sent in the request; empty means the provider's default.
    pub model: String,
    /// The provider's model list says this model takes images (`supports_images`): tool
    /// results' images go to it as image input; other models get their text description.
    pub supports_images: bool,
    /// The model's context window in tokens, when its provider lists it (`models`);
    /// `chat.default_context_window` applies otherwise.
    pub context_window: Option<u32>,
}

impl ChosenModel {
    /// The model name to report (the provider's default when none is set).
    pub fn display_model(&self) -> String {
        if self.model.is_empty() {
            self.provider.default_model().to_owned()
        } else {
            self.model.clone()
        }
    }
}

/// The models a turn may answer with: the chosen one first, then the bud's fallbacks in order.
#[derive(Clone, Debug)]
pub struct ModelChain {
    pub primary: ChosenModel,
    pub fallbacks: Vec<ChosenModel>,
}

impl ModelChain {
    /// The `index`th model (0: the primary), if there is one.
    pub fn get(&self, index: usize) -> Option<&ChosenModel> {
        match index {
            0 => Some(&self.primary),
            _ => self.fallbacks.get(index - 1),
        }
    }
}

/// A built provider and the version of its description it was built from.
type Built = (String, Arc<dyn LlmProvider>);

#[derive(Debug)]
pub struct ProviderSet {
    config: LlmConfig,
    store: Store,
    default: Arc<dyn LlmProvider>,
    /// By cache key (`config/<name>`, `kind/<kind>`, `<workspace>/<name>`).
    built: Mutex<HashMap<String, Built>>,
}

impl ProviderSet {
    pub fn new(config: LlmConfig, store: Store) -> Result<Self, LlmError> {
        let default = build_provider(&config)?;
        Ok(Self::with_default(config, store, default))
    }

    /// Uses `default` as the provider named `default` (tests, benchmarks).
    pub fn with_default(config: LlmConfig, store: Store, default: Arc<dyn LlmProvider>) -> Self {
        Self {
            config,
            store,
            default,
            built: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn config(&self) -> &LlmConfig {
        &self.config
    }

    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// The models for a conversation with its own `choice`, started from `bud` (or none): the
    /// conversation's choice over the bud's over `default`, then the bud's fallbacks. A fallback
    /// that can no longer be built (deleted since) is left out with a warning.
    pub async fn choose(
        &self,
        workspace_id: &WorkspaceId,
        bud: Option<&BudRecord>,
        choice: &ModelChoice,
    ) -> Result<ModelChain, ChatError> {
        let (name, model) = effective_choice(bud, choice);
        let primary = self.chosen(workspace_id, name, model).await?;
        let mut fallbacks = Vec::new();
        for fallback in bud.map(|bud| bud.fallbacks.as_slice()).unwrap_or_default() {
            match self
                .chosen(
                    workspace_id,
                    Some(&fallback.provider),
                    fallback.model.as_deref(),
                )
                .await
            {
                Ok(chosen) => fallbacks.push(chosen),
                Err(error) => tracing::warn!(
                    provider = %switchboard_core::log_text(&fallback.provider),
                    %error,
                    "a fallback of the bud cannot be used; it is skipped"
                ),
            }
        }
        Ok(ModelChain { primary, fallbacks })
    }

    /// The provider `name` (`None`: `default`) with `model` (`None` or blank: its default).
    async fn chosen(
        &self,
        workspace_id: &WorkspaceId,
        name: Option<&str>,
        model: Option<&str>,
    ) -> Result<ChosenModel, ChatError> {
        let (provider, default_model, models) = self.resolve(workspace_id, name).await?;
        let model = model
            .filter(|model| !model.trim().is_empty())
            .map(str::to_owned)
            .unwrap_or(default_model);
        let reported = if model.is_empty() {
            provider.default_model()
        } else {
            model.as_str()
        };
        let listed = models.iter().find(|info| info.id == reported);
        let context_window = listed.and_then(|info| info.context_window);
        let supports_images = listed.is_some_and(|info| info.supports_images);
        Ok(ChosenModel {
            name: name.unwrap_or(DEFAULT_PROVIDER_NAME).to_owned(),
            provider,
            model,
            supports_images,
            context_window,
        })
    }

    /// The provider `name` names (`None`: `default`), its default model and its known models.
    async fn resolve(
        &self,
        workspace_id: &WorkspaceId,
        name: Option<&str>,
    ) -> Result<(Arc<dyn LlmProvider>, String, Vec<ModelInfo>), ChatError> {
        let name = name.unwrap_or(DEFAULT_PROVIDER_NAME);
        if name == DEFAULT_PROVIDER_NAME {
            return Ok((
                self.default.clone(),
                self.config.model.clone(),
                self.config.models.clone(),
            ));
        }
        if let Some(named) = self
            .config
            .providers
            .iter()
            .find(|named| named.name == name)
        {
            let provider = self.built(format!("config/{name}"), String::new(), named)?;
            return Ok((provider, named.model.clone(), named.models.clone()));
        }
        match catalog::stored_provider(&self.store, workspace_id, name).await? {
            Some((named, version)) => {
                let key = format!("{workspace_id}/{name}");
                Ok((self.built(key, version, &named)?, named.model, named.models))
            }
            None => {
                let (provider, model) = self.legacy_kind(name)?;
                Ok((provider, model, Vec::new()))
            }
        }
    }

    /// A bud that names a provider kind rather than a provider.
    fn legacy_kind(&self, name: &str) -> Result<(Arc<dyn LlmProvider>, String), ChatError> {
        let kind = ProviderKind::parse(name).ok_or_else(|| unknown_provider(name))?;
        if kind == self.config.provider {
            return Ok((self.default.clone(), self.config.model.clone()));
        }
        let config = self.config.overridden_by(&LlmOverrides {
            provider: Some(kind),
            ..LlmOverrides::default()
        });
        let named = NamedProviderConfig {
            name: name.to_owned(),
            kind,
            base_url: config.base_url.clone(),
            api_key: config.api_key.clone(),
            model: String::new(),
            api_version: config.api_version.clone(),
            models: Vec::new(),
        };
        Ok((
            self.built(format!("kind/{name}"), String::new(), &named)?,
            String::new(),
        ))
    }

    /// The provider under `key`, built from `named` unless one of this `version` is cached.
    fn built(
        &self,
        key: String,
        version: String,
        named: &NamedProviderConfig,
    ) -> Result<Arc<dyn LlmProvider>, ChatError> {
        let mut built = self
            .built
            .lock()
            .map_err(|_| ChatError::Conflict("the provider cache is poisoned".to_owned()))?;
        if let Some((cached_version, provider)) = built.get(&key)
            && *cached_version == version
        {
            return Ok(provider.clone());
        }
        let provider = build_provider(&self.config.for_named(named)).map_err(|error| {
            ChatError::invalid(
                "provider",
                format!("the provider '{}' cannot be used: {error}", named.name),
            )
        })?;
        built.insert(key, (version, provider.clone()));
        Ok(provider)
    }

    /// Refuses a bud's provider and model that could never answer: the provider must exist,
    /// and a network provider needs a model (the bud's own or the provider's default).
    pub async fn check_bud_choice(
        &self,
        workspace_id: &WorkspaceId,
        provider: Option<&str>,
        model: Option<&str>,
    ) -> Result<(), ChatError> {
        let name = provider.unwrap_or(DEFAULT_PROVIDER_NAME);
        let (kind, default_model) = match self.entry(workspace_id, name).await? {
            Some(entry) => (entry.kind, entry.default_model),
            None => {
                let kind = ProviderKind::parse(name).ok_or_else(|| unknown_provider(name))?;
                if kind == self.config.provider {
                    (kind, self.config.model.clone())
                } else {
                    (kind, String::new())
                }
            }
        };
        let has_model =
            model.is_some_and(|model| !model.trim().is_empty()) || !default_model.trim().is_empty();
        if kind != ProviderKind::Offline && !has_model {
            return Err(ChatError::invalid(
                "model",
                format!(
                    "required with provider '{name}' ({}), which has no default model",
                    kind.as_str()
                ),
            ));
        }
        Ok(())
    }

    /// Refuses a fallback chain with a step [`Self::check_bud_choice`] refuses; the field
    /// named is `fallbacks[i].provider` or `fallbacks[i].model`. At most
    /// [`MAX_FALLBACKS`] steps.
    pub async fn check_fallbacks(
        &self,
        workspace_id: &WorkspaceId,
        fallbacks: &[BudFallback],
    ) -> Result<(), ChatError> {
        if fallbacks.len() > MAX_FALLBACKS {
            return Err(ChatError::invalid(
                "fallbacks",
                format!("at most {MAX_FALLBACKS} fallbacks"),
            ));
        }
        for (index, fallback) in fallbacks.iter().enumerate() {
            self.check_bud_choice(
                workspace_id,
                Some(&fallback.provider),
                fallback.model.as_deref(),
            )
            .await
            .map_err(|error| match error {
                ChatError::InvalidInput { field, message } => {
                    ChatError::invalid(format!("fallbacks[{index}].{field}"), message)
                }
                other => other,
            })?;
        }
        Ok(())
    }
}

/// Most fallbacks a bud may list.
pub const MAX_FALLBACKS: usize = 5;

/// The provider name and model that answer first: the conversation's provider (with its
/// model) over the bud's (with the conversation's or the bud's model).
pub fn effective_choice<'a>(
    bud: Option<&'a BudRecord>,
    choice: &'a ModelChoice,
) -> (Option<&'a str>, Option<&'a str>) {
    if let Some(provider) = choice.provider.as_deref() {
        return (Some(provider), choice.model.as_deref());
    }
    let provider = bud.and_then(|bud| bud.provider.as_deref());
    let model = choice
        .model
        .as_deref()
        .or_else(|| bud.and_then(|bud| bud.model.as_deref()));
    (provider, model)
}

fn unknown_provider(name: &str) -> ChatError {
    ChatError::invalid(
        "provider",
        format!(
            "unknown provider '{}' (no configured or stored provider has that name; see GET \
             /api/llm/providers)",
            switchboard_core::log_text(name)
        ),
    )
}
