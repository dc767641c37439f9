//! The bodies of `/api/llm/providers`: provider and model views (never a key: `has_api_key`),
//! and the create and update bodies. The provider kind is mirrored here as
//! [`LlmProviderKindView`] with exhaustive conversions, so `llm` stays free of utoipa.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchboard_chat::{
    ModelEntry, ModelInfo, ModelListing, ProviderEntry, ProviderKind, ProviderSource, RemoteListing,
};
use utoipa::ToSchema;

/// A provider's wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LlmProviderKindView {
    /// OpenAI-compatible Chat Completions (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, Groq,
    /// OpenRouter, Gemini's OpenAI-compatible endpoint).
    Openai,
    /// Azure OpenAI: a deployment (`api_version` set) or the v1 endpoint; `api-key` header.
    AzureOpenai,
    /// Anthropic's native Messages API.
    Anthropic,
    /// The embedded offline rules planner.
    Offline,
}

impl From<ProviderKind> for LlmProviderKindView {
    fn from(kind: ProviderKind) -> Self {
        match kind {
            ProviderKind::Openai => Self::Openai,
            ProviderKind::AzureOpenai => Self::AzureOpenai,
            ProviderKind::Anthropic => Self::Anthropic,
            ProviderKind::Offline => Self::Offline,
        }
    }
}

impl LlmProviderKindView {
    pub fn as_kind(self) -> ProviderKind {
        match self {
            Self::Openai => ProviderKind::Openai,
            Self::AzureOpenai => ProviderKind::AzureOpenai,
            Self::Anthropic => ProviderKind::Anthropic,
            Self::Offline => ProviderKind::Offline,
        }
    }
}

/// Where a provider is described.
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LlmProviderSourceView {
    /// The configuration file (`[llm]` is `default`, then `[[llm.providers]]`): read-only here.
    Config,
    /// Added by an admin through this API, stored in the workspace.
    Api,
}

/// A model as configured for a provider.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmModelConfig {
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

impl From<ModelInfo> for LlmModelConfig {
    fn from(model: ModelInfo) -> Self {
        Self {
            id: model.id,
            context_window: model.context_window,
            supports_images: model.supports_images,
            supports_tools: model.supports_tools,
        }
    }
}

impl From<LlmModelConfig> for ModelInfo {
    fn from(model: LlmModelConfig) -> Self {
        Self {
            id: model.id,
            context_window: model.context_window,
            supports_images: model.supports_images,
            supports_tools: model.supports_tools,
        }
    }
}

/// A named LLM provider.
#[derive(Debug, Serialize, ToSchema)]
pub struct LlmProviderView {
    pub name: String,
    pub kind: LlmProviderKindView,
    /// Empty: the kind's own endpoint.
    pub base_url: String,
    /// Whether a key is set (the key itself is never returned).
    pub has_api_key: bool,
    /// The model asked when a bud or conversation names none.
    pub default_model: String,
    /// `azure_openai` only: the deployment endpoint's `api-version`; empty: the v1 endpoint.
    pub api_version: String,
    pub models: Vec<LlmModelConfig>,
    pub source: LlmProviderSourceView,
    /// `null` for the configuration file's providers.
    pub created_at: Option<DateTime<Utc>>,
    pub updated_at: Option<DateTime<Utc>>,
}

impl From<ProviderEntry> for LlmProviderView {
    fn from(entry: ProviderEntry) -> Self {
        Self {
            name: entry.name,
            kind: entry.kind.into(),
            base_url: entry.base_url,
            has_api_key: entry.has_api_key,
            default_model: entry.default_model,
            api_version: entry.api_version,
            models: entry.models.into_iter().map(LlmModelConfig::from).collect(),
            source: match entry.source {
                ProviderSource::Config => LlmProviderSourceView::Config,
                ProviderSource::Api => LlmProviderSourceView::Api,
            },
            created_at: entry.created_at,
            updated_at: entry.updated_at,
        }
    }
}

/// `GET /api/llm/providers` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct LlmProviderList {
    pub providers: Vec<LlmProviderView>,
}

/// `POST /api/llm/providers` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateLlmProviderBody {
    /// 1 to 64 of `a-z`, `0-9`, `-`, `_`; not a name of the configuration file.
    pub name: String,
    pub kind: LlmProviderKindView,
    /// Empty: the kind's own endpoint (required for `azure_openai`: the resource endpoint).
    #[serde(default)]
    pub base_url: String,
    /// Required for `anthropic` and `azure_openai`; sealed at rest, never returned.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Required for network kinds.
    #[serde(default)]
    pub default_model: String,
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub models: Vec<LlmModelConfig>,
}

/// `PATCH /api/llm/providers/{name}` body: only the fields given change; `api_key: null`
/// removes the key.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateLlmProviderBody {
    #[serde(default)]
    pub kind: Option<LlmProviderKindView>,
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub api_key: Option<Option<String>>,
    #[serde(default)]
    pub default_model: Option<String>,
    #[serde(default)]
    pub api_version: Option<String>,
    #[serde(default)]
    pub models: Option<Vec<LlmModelConfig>>,
}

/// Absent → `None`; `null` → `Some(None)`; a value → `Some(Some(value))`.
fn nullable<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<String>>, D::Error> {
    Ok(Some(Option::<String>::deserialize(deserializer)?))
}

/// One model of a provider.
#[derive(Debug, Serialize, ToSchema)]
pub struct LlmModelView {
    pub id: String,
    /// The provider's display name, when its API gives one (Anthropic).
    pub display_name: Option<String>,
    pub context_window: Option<u32>,
    pub supports_images: bool,
    pub supports_tools: bool,
    /// Listed in the provider's configuration.
    pub configured: bool,
    /// Listed by the provider's own `GET /models`.
    pub listed: bool,
}

impl From<ModelEntry> for LlmModelView {
    fn from(model: ModelEntry) -> Self {
        Self {
            id: model.id,
            display_name: model.display_name,
            context_window: model.context_window,
            supports_images: model.supports_images,
            supports_tools: model.supports_tools,
            configured: model.configured,
            listed: model.listed,
        }
    }
}

/// How asking the provider's API for its models went.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RemoteListingStatus {
    /// The API answered its list.
    Listed,
    /// The API has no model listing (offline planner, Azure deployments): configured only.
    Unsupported,
    /// The API failed; `error` says how.
    Failed,
}

/// `GET /api/llm/providers/{name}/models` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct LlmModelList {
    pub provider: String,
    /// Configured models first, then the ones only the API listed, by id.
    pub models: Vec<LlmModelView>,
    pub remote_status: RemoteListingStatus,
    /// The provider's error (status and body excerpt, timeout, unreachable) when `failed`.
    pub remote_error: Option<String>,
}

impl From<ModelListing> for LlmModelList {
    fn from(listing: ModelListing) -> Self {
        let (remote_status, remote_error) = match listing.remote {
            RemoteListing::Listed(_) => (RemoteListingStatus::Listed, None),
            RemoteListing::Unsupported => (RemoteListingStatus::Unsupported, None),
            RemoteListing::Failed(error) => (RemoteListingStatus::Failed, Some(error)),
        };
        Self {
            provider: listing.provider,
            models: listing.models.into_iter().map(LlmModelView::from).collect(),
            remote_status,
            remote_error,
        }
    }
}
