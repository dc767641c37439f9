//! `[chat]` configuration: the agent loop's limits and budgets, with the documented defaults.
//!
//! The binary composes this section into the TOML file and applies env overrides
//! (`CHAT_ENABLE_MCP_TOOLS`, `CHAT_ENABLE_CITATIONS`, `SWITCHBOARD_CHAT_*`). Nothing here does IO.

use serde::Deserialize;
use std::time::Duration;
use switchboard_core::InvalidSetting;

/// The `[chat]` section.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChatConfig {
    /// Most LLM ↔ tool round trips in one turn; after the last one the model is asked once
    /// more with tools switched off so it answers from what it has. Default 8.
    pub max_tool_steps: u32,
    /// Offer MCP tools to the model at all. Default true. Env also `CHAT_ENABLE_MCP_TOOLS`.
    pub enable_mcp_tools: bool,
    /// Document-chunk citations. Default false, and it stays off: there is no document-chunk
    /// retrieval (the graph tools replace it). `true` is accepted for compatibility and
    /// reported once at start-up as having no effect ([`ChatConfig::warnings`]).
    pub enable_citations: bool,
    /// Tool calls of one LLM step that run at the same time. Default 4.
    pub max_parallel_tool_calls: usize,
    /// Longest tool result text stored as the tool message, in characters; longer results are
    /// cut to head and tail with a marker (the full result is stored with the call and
    /// readable through the API). Default 16 000.
    pub tool_result_max_chars: usize,
    /// Longest tool result in a request to the model, in the model's tokens; longer ones are
    /// cut to head and tail with a marker saying so (and cut further when the request would
    /// not fit the context window otherwise). Default 4 000.
    pub tool_result_max_tokens: u32,
    /// The context window (tokens) assumed for a model whose provider does not list it
    /// (`models[].context_window`). The history is trimmed to fit it, by tokens. Default
    /// 32 768.
    pub default_context_window: u32,
    /// Retired: the history was once trimmed to this many characters; it is now fitted to the
    /// model's context window by tokens. Still accepted, so configuration files that set it
    /// keep starting, with a warning that it has no effect.
    pub history_budget_chars: Option<usize>,
    /// Most tools offered to the model at once. A turn with more offers the `tool_budget`
    /// best matches for the question plus `search_tools`, whose matches are offered for the
    /// rest of the turn. 0: always offer every tool. Default 40.
    pub tool_budget: usize,
    /// Longest accepted user message, in characters. Default 32 000.
    pub max_message_chars: usize,
    /// Interval of the SSE heartbeat comment. Default 15 s.
    pub heartbeat_secs: u64,
    /// How long the tools discovered on a request's ephemeral `mcp_servers` URL are reused.
    /// Default 300 s.
    pub ephemeral_tool_cache_secs: u64,
    /// Ephemeral servers accepted in one request. Default 5.
    pub max_ephemeral_servers: usize,
    /// While an answer streams, its text is saved at most this often (so a crash keeps what
    /// was said). Default 500 ms.
    pub partial_save_interval_ms: u64,
    /// Used when the conversation's bud has no system prompt (or there is no bud).
    pub default_system_prompt: String,
    /// Tokens (input + output, as the providers report them) the whole workspace may use per
    /// calendar month (UTC); past it a new answer is refused (HTTP 429). Default 0: no budget.
    pub monthly_token_budget_workspace: u64,
    /// The same per person (over the conversations they own). Default 0: no budget.
    pub monthly_token_budget_user: u64,
}

impl Default for ChatConfig {
    fn default() -> Self {
        Self {
            max_tool_steps: 8,
            enable_mcp_tools: true,
            enable_citations: false,
            max_parallel_tool_calls: 4,
            tool_result_max_chars: 16_000,
            tool_result_max_tokens: 4_000,
            default_context_window: 32_768,
            history_budget_chars: None,
            tool_budget: 40,
            max_message_chars: 32_000,
            heartbeat_secs: 15,
            ephemeral_tool_cache_secs: 300,
            max_ephemeral_servers: 5,
            partial_save_interval_ms: 500,
            default_system_prompt: "You are Switchboard's assistant. Use the available tools to \
                answer from real data, say which tool a fact came from when it matters, and say \
                plainly when a tool failed or was not allowed."
                .to_owned(),
            monthly_token_budget_workspace: 0,
            monthly_token_budget_user: 0,
        }
    }
}

impl ChatConfig {
    /// The first invalid key, relative to `[chat]`.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        InvalidSetting::require_positive("max_tool_steps", u64::from(self.max_tool_steps))?;
        if self.max_tool_steps > 64 {
            return Err(InvalidSetting::new("max_tool_steps", "must be at most 64"));
        }
        for (key, value) in [
            (
                "max_parallel_tool_calls",
                self.max_parallel_tool_calls as u64,
            ),
            ("heartbeat_secs", self.heartbeat_secs),
            ("ephemeral_tool_cache_secs", self.ephemeral_tool_cache_secs),
            ("partial_save_interval_ms", self.partial_save_interval_ms),
            ("max_message_chars", self.max_message_chars as u64),
        ] {
            InvalidSetting::require_positive(key, value)?;
        }
        if self.tool_result_max_chars < 200 {
            return Err(InvalidSetting::new(
                "tool_result_max_chars",
                "must be at least 200 (head and tail of a result must stay readable)",
            ));
        }
        if self.default_context_window < 2_048 {
            return Err(InvalidSetting::new(
                "default_context_window",
                "must be at least 2048",
            ));
        }
        if self.tool_result_max_tokens < 100 {
            return Err(InvalidSetting::new(
                "tool_result_max_tokens",
                "must be at least 100 (head and tail of a result must stay readable)",
            ));
        }
        Ok(())
    }

    /// Settings that are accepted but do nothing, for the binary to log at start-up.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.enable_citations {
            warnings.push(
                "chat.enable_citations = true has no effect: there is no document-chunk \
                 retrieval (the knowledge-graph tools replace it)"
                    .to_owned(),
            );
        }
        if self.history_budget_chars.is_some() {
            warnings.push(
                "chat.history_budget_chars has no effect any more: the history is fitted to the \
                 model's context window by tokens (see chat.default_context_window and the \
                 providers' models[].context_window)"
                    .to_owned(),
            );
        }
        warnings
    }

    pub fn heartbeat_interval(&self) -> Duration {
        Duration::from_secs(self.heartbeat_secs)
    }

    pub fn ephemeral_tool_cache_ttl(&self) -> Duration {
        Duration::from_secs(self.ephemeral_tool_cache_secs)
    }

    pub fn partial_save_interval(&self) -> Duration {
        Duration::from_millis(self.partial_save_interval_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        ChatConfig::default().validate().unwrap();
    }

    #[test]
    fn the_retired_history_budget_is_accepted_with_a_warning() {
        let config: ChatConfig =
            serde_json::from_str(r#"{"history_budget_chars": 48000}"#).unwrap();
        config.validate().unwrap();
        let warnings = config.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("chat.history_budget_chars has no effect"));
        assert!(ChatConfig::default().warnings().is_empty());
    }

    #[test]
    fn invalid_values_name_their_key() {
        let cases = [
            (
                ChatConfig {
                    max_tool_steps: 0,
                    ..ChatConfig::default()
                },
                "max_tool_steps",
            ),
            (
                ChatConfig {
                    tool_result_max_chars: 10,
                    ..ChatConfig::default()
                },
                "tool_result_max_chars",
            ),
            (
                ChatConfig {
                    max_parallel_tool_calls: 0,
                    ..ChatConfig::default()
                },
                "max_parallel_tool_calls",
            ),
        ];
        for (config, key) in cases {
            assert_eq!(config.validate().unwrap_err().key, key);
        }
    }
}
