//! Named providers: several providers per instance, each with a name, a kind, where it lives,
//! its key, its default model and the models it is known to offer.
//!
//! The `[llm]` keys themselves (`provider`, `base_url`, `api_key`, `model`, `api_version`)
//! describe the provider named [`DEFAULT_PROVIDER_NAME`], so a configuration written for one
//! provider keeps working unchanged; `[[llm.providers]]` adds more. Timeouts, retries and
//! `max_tokens` stay instance-wide: [`LlmConfig::for_named`] lays one provider's choices over
//! them. This module only describes and validates; building is [`crate::build_provider`]'s.

use serde::{Deserialize, Serialize};
use switchboard_core::InvalidSetting;

use crate::config::{ApiKey, LlmConfig, ProviderKind};

/// The name of the provider the `[llm]` keys describe.
pub const DEFAULT_PROVIDER_NAME: &str = "default";

/// Longest provider name.
pub const MAX_PROVIDER_NAME_LENGTH: usize = 64;

/// One `[[llm.providers]]` entry (or a provider stored through the API).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedProviderConfig {
    /// Lower-case letters, digits, `-` and `_`, starting with a letter or digit; unique.
    pub name: String,
    pub kind: ProviderKind,
    /// Empty: the kind's own (`azure_openai` requires its resource endpoint).
    #[serde(default)]
    pub base_url: String,
    #[serde(default)]
    pub api_key: Option<ApiKey>,
    /// The model asked when a bud or conversation names none (for `azure_openai` with
    /// `api_version`, a deployment name).
    #[serde(default)]
    pub model: String,
    /// `azure_openai` only: the deployment endpoint's `api-version`; empty: the v1 endpoint.
    #[serde(default)]
    pub api_version: String,
    /// Models known to this provider, merged with what its `GET /models` lists.
    #[serde(default)]
    pub models: Vec<ModelInfo>,
}

/// A model a provider offers, as configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    /// The model name sent upstream (for Azure deployments, the deployment name).
    pub id: String,
    /// Tokens of context, when known.
    #[serde(default)]
    pub context_window: Option<u32>,
    /// Takes images as input. Default false.
    #[serde(default)]
    pub supports_images: bool,
    /// Takes tools. Default true.
    #[serde(default = "yes")]
    pub supports_tools: bool,
}

fn yes() -> bool {
    true
}

impl LlmConfig {
    /// Every configured provider: `default` (the `[llm]` keys) first, then
    /// `[[llm.providers]]` in order.
    pub fn named_providers(&self) -> Vec<NamedProviderConfig> {
        let default = NamedProviderConfig {
            name: DEFAULT_PROVIDER_NAME.to_owned(),
            kind: self.provider,
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            model: self.model.clone(),
            api_version: self.api_version.clone(),
            models: self.models.clone(),
        };
        std::iter::once(default)
            .chain(self.providers.iter().cloned())
            .collect()
    }

    /// This configuration (timeouts, retries, `max_tokens`, offline planner) with `named`'s
    /// kind, URL, key and model: what [`crate::build_provider`] takes.
    pub fn for_named(&self, named: &NamedProviderConfig) -> LlmConfig {
        LlmConfig {
            provider: named.kind,
            base_url: named.base_url.clone(),
            api_key: named.api_key.clone(),
            model: named.model.clone(),
            api_version: named.api_version.clone(),
            providers: Vec::new(),
            models: named.models.clone(),
            ..self.clone()
        }
    }
}

/// Checks one named provider; the key is relative to it (`name`, `base_url`, `api_key`,
/// `model`, `models[1].id`).
pub fn validate_named(base: &LlmConfig, named: &NamedProviderConfig) -> Result<(), InvalidSetting> {
    validate_provider_name(&named.name)?;
    if named.kind != ProviderKind::Offline {
        base.for_named(named).validate_network_provider()?;
    }
    if named.kind != ProviderKind::AzureOpenai && !named.api_version.is_empty() {
        return Err(InvalidSetting::new(
            "api_version",
            "only azure_openai providers take an api_version",
        ));
    }
    validate_models(&named.models)
}

/// Checks a list of models; the key is relative to its owner (`models[1].id`).
pub(crate) fn validate_models(models: &[ModelInfo]) -> Result<(), InvalidSetting> {
    let mut seen = std::collections::BTreeSet::new();
    for (index, model) in models.iter().enumerate() {
        let key = format!("models[{index}].id");
        if model.id.trim().is_empty() {
            return Err(InvalidSetting::new(key, "must not be empty"));
        }
        if !seen.insert(model.id.as_str()) {
            return Err(InvalidSetting::new(
                key,
                format!("'{}' is listed twice", model.id),
            ));
        }
        if model.context_window == Some(0) {
            return Err(InvalidSetting::new(
                format!("models[{index}].context_window"),
                "must be greater than 0",
            ));
        }
    }
    Ok(())
}

/// A provider name: 1 to 64 of `a-z`, `0-9`, `-`, `_`, starting with a letter or digit.
pub fn validate_provider_name(name: &str) -> Result<(), InvalidSetting> {
    let well_formed = !name.is_empty()
        && name.len() <= MAX_PROVIDER_NAME_LENGTH
        && name.bytes().all(|byte| {
            byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"-_".contains(&byte)
        })
        && !name.starts_with(['-', '_']);
    if well_formed {
        Ok(())
    } else {
        Err(InvalidSetting::new(
            "name",
            format!(
                "'{}' is not a provider name (1 to {MAX_PROVIDER_NAME_LENGTH} of a-z, 0-9, '-' \
                 and '_', starting with a letter or digit)",
                switchboard_core::log_text(name)
            ),
        ))
    }
}

/// Checks `[[llm.providers]]`: each entry, unique names, `default` reserved.
pub(crate) fn validate_configured(config: &LlmConfig) -> Result<(), InvalidSetting> {
    validate_models(&config.models)?;
    let mut names = std::collections::BTreeSet::from([DEFAULT_PROVIDER_NAME]);
    for (index, named) in config.providers.iter().enumerate() {
        let prefixed = |invalid: InvalidSetting| {
            InvalidSetting::new(
                format!("providers[{index}].{}", invalid.key),
                invalid.reason,
            )
        };
        validate_named(config, named).map_err(prefixed)?;
        if !names.insert(named.name.as_str()) {
            let reason = if named.name == DEFAULT_PROVIDER_NAME {
                "'default' is the provider the [llm] keys describe; choose another name".to_owned()
            } else {
                format!("'{}' is used by another provider", named.name)
            };
            return Err(prefixed(InvalidSetting::new("name", reason)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_llm_keys_are_the_default_provider_and_more_come_from_the_list() {
        let config: LlmConfig = toml::from_str(
            "provider = \"openai\"\nmodel = \"gpt-4o-mini\"\n\
             [[providers]]\nname = \"claude\"\nkind = \"anthropic\"\napi_key = \"k\"\n\
             model = \"claude-sonnet-4-5\"\n\
             [[providers.models]]\nid = \"claude-sonnet-4-5\"\ncontext_window = 200000\n\
             supports_images = true\n\
             [[providers]]\nname = \"azure\"\nkind = \"azure_openai\"\n\
             base_url = \"https://x.openai.azure.com\"\napi_key = \"k\"\nmodel = \"dep\"\n\
             api_version = \"2024-10-21\"",
        )
        .unwrap();
        config.validate().unwrap();
        let named = config.named_providers();
        let names: Vec<_> = named.iter().map(|named| named.name.as_str()).collect();
        assert_eq!(names, ["default", "claude", "azure"]);
        assert_eq!(named[0].kind, ProviderKind::Openai);
        assert_eq!(named[0].model, "gpt-4o-mini");
        assert!(named[1].models[0].supports_tools);
        assert_eq!(named[1].models[0].context_window, Some(200_000));
        let built = config.for_named(&named[2]);
        assert_eq!(built.provider, ProviderKind::AzureOpenai);
        assert_eq!(built.api_version, "2024-10-21");
        assert_eq!(built.response_timeout_ms, config.response_timeout_ms);
    }

    #[test]
    fn validation_names_the_entry_and_key_at_fault() {
        let error = |text: &str| {
            toml::from_str::<LlmConfig>(text)
                .unwrap()
                .validate()
                .unwrap_err()
        };
        let taken = error("[[providers]]\nname = \"default\"\nkind = \"offline\"");
        assert_eq!(taken.key, "providers[0].name");
        assert!(taken.reason.contains("choose another name"), "{taken}");
        let twice = error(
            "[[providers]]\nname = \"a\"\nkind = \"offline\"\n\
             [[providers]]\nname = \"a\"\nkind = \"offline\"",
        );
        assert_eq!(twice.key, "providers[1].name");
        let bad_name = error("[[providers]]\nname = \"A b\"\nkind = \"offline\"");
        assert_eq!(bad_name.key, "providers[0].name");
        let no_endpoint = error(
            "[[providers]]\nname = \"az\"\nkind = \"azure_openai\"\napi_key = \"k\"\nmodel = \"d\"",
        );
        assert_eq!(no_endpoint.key, "providers[0].base_url");
        let no_key = error(
            "[[providers]]\nname = \"az\"\nkind = \"azure_openai\"\nmodel = \"d\"\n\
             base_url = \"https://x.openai.azure.com\"",
        );
        assert_eq!(no_key.key, "providers[0].api_key");
        let version = error(
            "[[providers]]\nname = \"o\"\nkind = \"openai\"\nmodel = \"m\"\napi_version = \"1\"",
        );
        assert_eq!(version.key, "providers[0].api_version");
        let duplicate_model = error(
            "[[providers]]\nname = \"o\"\nkind = \"offline\"\n\
             [[providers.models]]\nid = \"m\"\n[[providers.models]]\nid = \"m\"",
        );
        assert_eq!(duplicate_model.key, "providers[0].models[1].id");
    }
}
