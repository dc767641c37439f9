//! Which LLM answers a turn: the configured provider, or the one a bud names (built once per
//! provider kind and reused, so connection pools are shared). A bud's model overrides the
//! configured one for its conversations.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use switchboard_llm::{
    LlmConfig, LlmError, LlmOverrides, LlmProvider, ProviderKind, build_provider,
};
use switchboard_store::BudRecord;

use crate::error::ChatError;

/// The provider and model for one turn.
#[derive(Clone, Debug)]
pub struct ChosenModel {
    pub provider: Arc<dyn LlmProvider>,
    /// Sent in the request; empty means the provider's default.
    pub model: String,
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

#[derive(Debug)]
pub struct ProviderSet {
    config: LlmConfig,
    default: Arc<dyn LlmProvider>,
    by_kind: Mutex<HashMap<&'static str, Arc<dyn LlmProvider>>>,
}

impl ProviderSet {
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let default = build_provider(&config)?;
        Ok(Self::with_default(config, default))
    }

    /// Uses `default` for conversations without a provider override (tests, benchmarks).
    pub fn with_default(config: LlmConfig, default: Arc<dyn LlmProvider>) -> Self {
        Self {
            config,
            default,
            by_kind: Mutex::new(HashMap::new()),
        }
    }

    /// The provider and model for a conversation started from `bud` (or none).
    pub fn choose(&self, bud: Option<&BudRecord>) -> Result<ChosenModel, ChatError> {
        let kind = match bud.and_then(|bud| bud.provider.as_deref()) {
            None => None,
            Some(name) => Some(parse_provider(name)?),
        };
        let provider = match kind {
            None => self.default.clone(),
            Some(kind) if kind == self.config.provider => self.default.clone(),
            Some(kind) => self.for_kind(kind)?,
        };
        let model = bud
            .and_then(|bud| bud.model.clone())
            .filter(|model| !model.trim().is_empty())
            .unwrap_or_else(|| {
                if Arc::ptr_eq(&provider, &self.default) {
                    self.config.model.clone()
                } else {
                    String::new()
                }
            });
        Ok(ChosenModel { provider, model })
    }

    /// Refuses a bud's provider and model that could never answer: `openai` and `anthropic`
    /// need a model, the bud's own or `llm.model` when `[llm]` is configured for that
    /// provider.
    pub fn check_bud_choice(
        &self,
        provider: Option<&str>,
        model: Option<&str>,
    ) -> Result<(), ChatError> {
        let kind = match provider {
            Some(name) => parse_provider(name)?,
            None => self.config.provider,
        };
        let has_model = model.is_some_and(|model| !model.trim().is_empty())
            || (kind == self.config.provider && !self.config.model.trim().is_empty());
        let example = match kind {
            ProviderKind::Offline => None,
            ProviderKind::Openai => Some("\"gpt-4o-mini\" or \"llama3.1\""),
            ProviderKind::Anthropic => Some("\"claude-sonnet-4-5\""),
        };
        if let Some(example) = example
            && !has_model
        {
            return Err(ChatError::invalid(
                "model",
                format!(
                    "required with provider '{}' (no llm.model is configured for it), e.g. \
                     {example}",
                    kind.as_str()
                ),
            ));
        }
        Ok(())
    }

    fn for_kind(&self, kind: ProviderKind) -> Result<Arc<dyn LlmProvider>, ChatError> {
        let key = kind.as_str();
        let mut providers = self
            .by_kind
            .lock()
            .map_err(|_| ChatError::Conflict("the provider cache is poisoned".to_owned()))?;
        if let Some(provider) = providers.get(key) {
            return Ok(provider.clone());
        }
        let config = self.config.overridden_by(&LlmOverrides {
            provider: Some(kind),
            ..LlmOverrides::default()
        });
        let provider = build_provider(&config).map_err(|error| {
            ChatError::invalid(
                "provider",
                format!("the '{key}' provider cannot be used: {error}"),
            )
        })?;
        providers.insert(key, provider.clone());
        Ok(provider)
    }
}

/// `offline`, `openai` or `anthropic`, as a bud names them.
pub fn parse_provider(name: &str) -> Result<ProviderKind, ChatError> {
    match name {
        "offline" => Ok(ProviderKind::Offline),
        "openai" => Ok(ProviderKind::Openai),
        "anthropic" => Ok(ProviderKind::Anthropic),
        other => Err(ChatError::invalid(
            "provider",
            format!("unknown provider '{other}' (expected offline, openai or anthropic)"),
        )),
    }
}
