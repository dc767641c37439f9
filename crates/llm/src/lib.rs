//! LLM providers behind one trait: the embedded offline rules planner (the default, so a fresh
//! machine works with no key), OpenAI-compatible Chat Completions (and Azure OpenAI, the same
//! wire at another URL) and Anthropic's native Messages API; several of them per instance by
//! name (`named`), each listing its models (`models`).
//!
//! The chat engine builds a provider with [`build_provider`] and speaks only [`LlmProvider`],
//! [`LlmRequest`] and [`LlmEvent`]. This crate knows nothing about MCP, HTTP routes or storage:
//! tools arrive as `core::ToolSpec`s and history as `core::ChatMessage`s.

pub mod anthropic;
pub mod config;
pub mod error;
mod http;
pub mod models;
pub mod named;
pub mod offline;
pub mod openai;
pub mod provider;
mod retry;
pub mod tokens;
pub mod tool_search;

pub use anthropic::AnthropicProvider;
pub use config::{ApiKey, LlmConfig, LlmOverrides, OfflinePlannerConfig, ProviderKind};
pub use error::{LlmError, TimeoutPhase};
pub use models::{ListedModel, list_models};
pub use named::{
    DEFAULT_PROVIDER_NAME, ModelInfo, NamedProviderConfig, validate_named, validate_provider_name,
};
pub use offline::{OFFLINE_MODEL_NAME, OfflineProvider};
pub use openai::OpenAiProvider;
pub use provider::{
    FinishReason, IndexedToolCall, LlmEvent, LlmEventStream, LlmProvider, LlmRequest, TokenUsage,
    ToolCallArgumentsDelta, ToolChoice,
};
pub use tokens::{ESTIMATE_BYTES_PER_TOKEN, TokenCounter, TokenizerKind};
pub use tool_search::ToolSearch;

/// Builds the provider a configuration names. Validate the configuration first.
pub fn build_provider(config: &LlmConfig) -> Result<std::sync::Arc<dyn LlmProvider>, LlmError> {
    Ok(match config.provider {
        ProviderKind::Openai => std::sync::Arc::new(OpenAiProvider::new(config)?),
        ProviderKind::AzureOpenai => std::sync::Arc::new(OpenAiProvider::azure(config)?),
        ProviderKind::Anthropic => std::sync::Arc::new(AnthropicProvider::new(config)?),
        ProviderKind::Offline => std::sync::Arc::new(OfflineProvider::new(config.offline.clone())),
    })
}
