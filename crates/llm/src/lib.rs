//! LLM providers behind one trait: the embedded offline rules planner (the default, so a fresh
//! machine works with no key), OpenAI-compatible Chat Completions and Anthropic's native
//! Messages API.
//!
//! The chat engine builds a provider with [`build_provider`] and speaks only [`LlmProvider`],
//! [`LlmRequest`] and [`LlmEvent`]. This crate knows nothing about MCP, HTTP routes or storage:
//! tools arrive as `core::ToolSpec`s and history as `core::ChatMessage`s.

pub mod anthropic;
pub mod config;
pub mod error;
mod http;
pub mod offline;
pub mod openai;
pub mod provider;
mod retry;

pub use anthropic::AnthropicProvider;
pub use config::{ApiKey, LlmConfig, LlmOverrides, OfflinePlannerConfig, ProviderKind};
pub use error::{LlmError, TimeoutPhase};
pub use offline::{OFFLINE_MODEL_NAME, OfflineProvider};
pub use openai::OpenAiProvider;
pub use provider::{
    FinishReason, IndexedToolCall, LlmEvent, LlmEventStream, LlmProvider, LlmRequest, TokenUsage,
    ToolChoice,
};

/// Builds the provider a configuration names. Validate the configuration first.
pub fn build_provider(config: &LlmConfig) -> Result<std::sync::Arc<dyn LlmProvider>, LlmError> {
    Ok(match config.provider {
        ProviderKind::Openai => std::sync::Arc::new(OpenAiProvider::new(config)?),
        ProviderKind::Anthropic => std::sync::Arc::new(AnthropicProvider::new(config)?),
        ProviderKind::Offline => std::sync::Arc::new(OfflineProvider::new(config.offline.clone())),
    })
}
