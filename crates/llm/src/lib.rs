//! LLM providers behind one trait: the embedded offline rules planner (the default, so a fresh
//! machine works with no key) and OpenAI-compatible Chat Completions.
//!
//! The chat engine builds a provider with [`build_provider`] and speaks only [`LlmProvider`],
//! [`LlmRequest`] and [`LlmEvent`]. This crate knows nothing about MCP, HTTP routes or storage:
//! tools arrive as `core::ToolSpec`s and history as `core::ChatMessage`s.

pub mod config;
pub mod error;
pub mod openai;
pub mod provider;

pub use config::{
    ApiKey, LlmConfig, LlmConfigError, LlmOverrides, OfflinePlannerConfig, ProviderKind,
};
pub use error::{LlmError, TimeoutPhase};
pub use openai::OpenAiProvider;
pub use provider::{
    FinishReason, IndexedToolCall, LlmEvent, LlmEventStream, LlmProvider, LlmRequest, TokenUsage,
    ToolChoice,
};
