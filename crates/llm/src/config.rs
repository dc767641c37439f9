//! `[llm]` configuration: which provider answers, where it lives, and how patiently we wait.
//!
//! Defaults make a fresh machine work with no key (the offline planner). The binary composes
//! this section into the TOML file and applies env overrides; a bud may override provider,
//! base URL, key and model through [`LlmOverrides`].

use std::fmt;
use std::time::Duration;

use serde::Deserialize;
use switchboard_core::InvalidSetting;

use crate::named::NamedProviderConfig;

/// Which provider answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// The embedded deterministic rules planner; no network, no key.
    #[default]
    Offline,
    /// Any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM, llama.cpp
    /// server, LM Studio, Gemini's OpenAI-compatible endpoint).
    Openai,
    /// Anthropic's native Messages API (`POST /v1/messages`).
    Anthropic,
    /// Azure OpenAI: the Chat Completions wire at a deployment
    /// (`{endpoint}/openai/deployments/{model}/chat/completions?api-version=…`) when
    /// `api_version` is set, else the v1 endpoint (`{endpoint}/openai/v1/chat/completions`,
    /// model in the body); the key goes in the `api-key` header.
    AzureOpenai,
}

impl ProviderKind {
    /// The name used in the configuration, in buds and in the `meta` event.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Offline => "offline",
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::AzureOpenai => "azure_openai",
        }
    }

    /// The kind a configuration or an API body names.
    pub fn parse(name: &str) -> Option<Self> {
        [
            ProviderKind::Offline,
            ProviderKind::Openai,
            ProviderKind::AzureOpenai,
            ProviderKind::Anthropic,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == name)
    }
}

/// A provider API key. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The secret itself, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(switchboard_core::redact::REDACTED)
    }
}

/// The `[llm]` section.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// The provider named `default`: `offline` (default), `openai`, `azure_openai` or
    /// `anthropic`.
    pub provider: ProviderKind,
    /// Base URL of the API. Empty (the default) means the provider's own:
    /// `https://api.openai.com/v1` for `openai` (up to and including the version segment;
    /// `/chat/completions` is appended), `https://api.anthropic.com` for `anthropic`
    /// (`/v1/messages` is appended).
    pub base_url: String,
    /// The key: a bearer token for `openai` (optional, local servers need none), the
    /// `x-api-key` for `anthropic` (required).
    pub api_key: Option<ApiKey>,
    /// Model name sent upstream; required for `openai` and `anthropic`. Ignored by `offline`.
    /// For `azure_openai` with `api_version`, the deployment name.
    pub model: String,
    /// `azure_openai` only: the `api-version` of the deployment endpoint (e.g.
    /// `2024-10-21`). Empty (the default): the v1 endpoint.
    pub api_version: String,
    /// Most tokens one answer step may produce, sent as `max_tokens` by `anthropic` (whose
    /// API requires it). Default 4096.
    pub max_tokens: u32,
    /// TCP + TLS connect timeout. Default 10 000 ms.
    pub connect_timeout_ms: u64,
    /// Wait for the response status and headers (a loaded local model can be slow to start).
    /// Default 120 000 ms.
    pub response_timeout_ms: u64,
    /// Longest silence allowed between two streamed events. Default 60 000 ms.
    pub stream_idle_timeout_ms: u64,
    /// Retries on 429, 5xx and connection failures, only before any token was streamed.
    /// Default 3.
    pub max_retries: u32,
    /// First backoff delay; doubles each retry. Default 500 ms.
    pub retry_base_delay_ms: u64,
    /// Ceiling of the computed backoff. Default 8 000 ms.
    pub retry_max_delay_ms: u64,
    /// Longest `Retry-After` we honour; a longer one fails at once with `RateLimited` rather
    /// than holding the chat. Default 30 000 ms.
    pub max_retry_after_ms: u64,
    /// Send `stream_options.include_usage` (token counts in a final chunk). Default true;
    /// turn off for servers that reject the option.
    pub include_usage: bool,
    /// Offline planner settings.
    pub offline: OfflinePlannerConfig,
    /// More named providers (`[[llm.providers]]`), besides `default` (the keys above).
    pub providers: Vec<NamedProviderConfig>,
    /// Models known to the provider `default` (`[[llm.models]]`: id, context window,
    /// capabilities), as `[[llm.providers.models]]` is for the others.
    pub models: Vec<crate::named::ModelInfo>,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            provider: ProviderKind::Offline,
            base_url: String::new(),
            api_key: None,
            model: String::new(),
            max_tokens: 4096,
            connect_timeout_ms: 10_000,
            response_timeout_ms: 120_000,
            stream_idle_timeout_ms: 60_000,
            max_retries: 3,
            retry_base_delay_ms: 500,
            retry_max_delay_ms: 8_000,
            max_retry_after_ms: 30_000,
            include_usage: true,
            offline: OfflinePlannerConfig::default(),
            api_version: String::new(),
            providers: Vec::new(),
            models: Vec::new(),
        }
    }
}

/// The `[llm.offline]` section.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OfflinePlannerConfig {
    /// Minimum confidence (0..1) for the planner to call a tool; below it, it explains what
    /// it can do. Default 0.3.
    pub confidence_threshold: f64,
    /// Rows shown in a rendered table before "… and N more". Default 25.
    pub max_table_rows: usize,
}

impl Default for OfflinePlannerConfig {
    fn default() -> Self {
        Self {
            confidence_threshold: 0.3,
            max_table_rows: 25,
        }
    }
}

impl LlmConfig {
    /// Checks every key; the first problem found is returned, naming its key relative to the
    /// `[llm]` section (`base_url`, `offline.confidence_threshold`).
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        let invalid = |key: &str, reason: String| Err(InvalidSetting::new(key, reason));
        if self.provider != ProviderKind::Offline {
            self.validate_network_provider()?;
        }
        for (key, value) in [
            ("connect_timeout_ms", self.connect_timeout_ms),
            ("response_timeout_ms", self.response_timeout_ms),
            ("stream_idle_timeout_ms", self.stream_idle_timeout_ms),
        ] {
            if value == 0 {
                return invalid(key, "must be greater than 0".to_owned());
            }
        }
        if self.retry_max_delay_ms < self.retry_base_delay_ms {
            return invalid(
                "retry_max_delay_ms",
                format!(
                    "must be at least retry_base_delay_ms ({})",
                    self.retry_base_delay_ms
                ),
            );
        }
        if self.max_retries > 10 {
            return invalid("max_retries", "must be at most 10".to_owned());
        }
        if !(0.0..=1.0).contains(&self.offline.confidence_threshold) {
            return invalid(
                "offline.confidence_threshold",
                "must be between 0 and 1".to_owned(),
            );
        }
        if self.offline.max_table_rows == 0 {
            return invalid(
                "offline.max_table_rows",
                "must be greater than 0".to_owned(),
            );
        }
        crate::named::validate_configured(self)
    }

    /// The keys a network provider (`openai`, `azure_openai`, `anthropic`) needs.
    pub(crate) fn validate_network_provider(&self) -> Result<(), InvalidSetting> {
        let invalid = |key: &str, reason: String| Err(InvalidSetting::new(key, reason));
        let provider = self.provider.as_str();
        if !self.base_url.is_empty() {
            match url::Url::parse(&self.base_url) {
                Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => {}
                Ok(url) => {
                    return invalid(
                        "base_url",
                        format!(
                            "must be an http or https URL, got scheme '{}'",
                            url.scheme()
                        ),
                    );
                }
                Err(error) => {
                    return invalid(
                        "base_url",
                        format!("'{}' is not a URL: {error}", self.base_url),
                    );
                }
            }
        }
        if self.provider == ProviderKind::AzureOpenai && self.base_url.trim().is_empty() {
            return invalid(
                "base_url",
                "required when provider = \"azure_openai\" (the resource endpoint, e.g. \
                 https://NAME.openai.azure.com)"
                    .to_owned(),
            );
        }
        if self.model.trim().is_empty() {
            let example = match self.provider {
                ProviderKind::Anthropic => "\"claude-sonnet-4-5\"",
                ProviderKind::AzureOpenai => "your deployment's name",
                _ => "\"gpt-4o-mini\" or \"llama3.1\"",
            };
            return invalid(
                "model",
                format!("required when provider = \"{provider}\" (e.g. {example})"),
            );
        }
        let has_key = self
            .api_key
            .as_ref()
            .is_some_and(|key| !key.expose().trim().is_empty());
        if matches!(
            self.provider,
            ProviderKind::Anthropic | ProviderKind::AzureOpenai
        ) && !has_key
        {
            let header = match self.provider {
                ProviderKind::Anthropic => "x-api-key",
                _ => "api-key",
            };
            return invalid(
                "api_key",
                format!(
                    "required when provider = \"{provider}\" (sent as {header}; or set \
                     SWITCHBOARD_LLM_API_KEY)"
                ),
            );
        }
        if self.max_tokens == 0 {
            return invalid("max_tokens", "must be greater than 0".to_owned());
        }
        Ok(())
    }

    /// `base_url`, or the provider's default when none is configured.
    pub fn base_url_or<'a>(&'a self, default: &'a str) -> &'a str {
        if self.base_url.trim().is_empty() {
            default
        } else {
            &self.base_url
        }
    }

    /// This configuration with a bud's (or request's) choices laid over it.
    pub fn overridden_by(&self, overrides: &LlmOverrides) -> LlmConfig {
        let mut config = self.clone();
        if let Some(provider) = overrides.provider {
            config.provider = provider;
        }
        if let Some(base_url) = &overrides.base_url {
            config.base_url = base_url.clone();
        }
        if let Some(api_key) = &overrides.api_key {
            config.api_key = Some(api_key.clone());
        }
        if let Some(model) = &overrides.model {
            config.model = model.clone();
        }
        config
    }

    pub fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.connect_timeout_ms)
    }

    pub fn response_timeout(&self) -> Duration {
        Duration::from_millis(self.response_timeout_ms)
    }

    pub fn stream_idle_timeout(&self) -> Duration {
        Duration::from_millis(self.stream_idle_timeout_ms)
    }
}

/// Per-bud choices; `None` keeps the configured value.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmOverrides {
    pub provider: Option<ProviderKind>,
    pub base_url: Option<String>,
    pub api_key: Option<ApiKey>,
    pub model: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_offline_and_valid() {
        let config = LlmConfig::default();
        assert_eq!(config.provider, ProviderKind::Offline);
        config.validate().unwrap();
        let parsed: LlmConfig = toml::from_str("").unwrap();
        assert_eq!(parsed, config);
    }

    #[test]
    fn api_key_is_redacted_in_debug() {
        let config: LlmConfig =
            toml::from_str("provider = \"openai\"\nmodel = \"m\"\napi_key = \"sk-very-secret\"")
                .unwrap();
        let debug = format!("{config:?}");
        assert!(!debug.contains("sk-very-secret"), "{debug}");
        assert!(debug.contains("[REDACTED]"));
        assert_eq!(config.api_key.unwrap().expose(), "sk-very-secret");
    }

    #[test]
    fn validate_names_the_key_at_fault() {
        let openai = |extra: &str| -> LlmConfig {
            toml::from_str(&format!("provider = \"openai\"\n{extra}")).unwrap()
        };
        assert_eq!(openai("").validate().unwrap_err().key, "model");
        let error = openai("model = \"m\"\nbase_url = \"not a url\"")
            .validate()
            .unwrap_err();
        assert_eq!(error.key, "base_url");
        assert!(
            error
                .to_string()
                .starts_with("`base_url`: 'not a url' is not a URL")
        );
        assert_eq!(
            openai("model = \"m\"\nbase_url = \"ftp://x/v1\"")
                .validate()
                .unwrap_err()
                .key,
            "base_url"
        );
        assert_eq!(
            openai("model = \"m\"\nstream_idle_timeout_ms = 0")
                .validate()
                .unwrap_err()
                .key,
            "stream_idle_timeout_ms"
        );
        let offline: LlmConfig = toml::from_str("[offline]\nconfidence_threshold = 2.0").unwrap();
        assert_eq!(
            offline.validate().unwrap_err().key,
            "offline.confidence_threshold"
        );
        let unknown = toml::from_str::<LlmConfig>("modle = \"m\"").unwrap_err();
        assert!(unknown.to_string().contains("modle"), "{unknown}");
    }

    #[test]
    fn overrides_replace_only_what_they_name() {
        let base = LlmConfig::default();
        let overridden = base.overridden_by(&LlmOverrides {
            provider: Some(ProviderKind::Openai),
            model: Some("llama3.1".to_owned()),
            ..LlmOverrides::default()
        });
        assert_eq!(overridden.provider, ProviderKind::Openai);
        assert_eq!(overridden.model, "llama3.1");
        assert_eq!(overridden.base_url, base.base_url);
    }
}
