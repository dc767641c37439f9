//! The one provider trait every LLM backend implements, and the request and event types that
//! cross it. The chat engine speaks only these types; it never sees a provider's wire format.
//!
//! A provider turns one [`LlmRequest`] into a stream of [`LlmEvent`]s. Text arrives as deltas,
//! tool calls arrive already assembled (arguments complete), then optional usage, and the stream
//! ends with exactly one [`LlmEvent::Finished`]. Dropping the stream cancels the generation
//! (for HTTP providers the request is aborted).

use std::fmt;
use std::pin::Pin;

use async_trait::async_trait;
use futures::Stream;
use serde::{Deserialize, Serialize};
use switchboard_core::{ChatMessage, ToolCallRequest, ToolSpec};

use crate::error::LlmError;

/// The stream a provider returns. Items after an `Err` are never produced: an error ends it.
pub type LlmEventStream = Pin<Box<dyn Stream<Item = Result<LlmEvent, LlmError>> + Send>>;

/// An LLM backend: OpenAI-compatible Chat Completions, Anthropic Messages, the offline
/// planner, or a test double.
///
/// Object safe: the chat engine holds `Arc<dyn LlmProvider>`.
#[async_trait]
pub trait LlmProvider: Send + Sync + fmt::Debug {
    /// Short provider name for logs and the `meta` SSE event (`openai`, `anthropic`,
    /// `offline`).
    fn provider_name(&self) -> &str;

    /// The model used when a request does not name one (an empty `LlmRequest::model`).
    fn default_model(&self) -> &str;

    /// Starts one generation. Errors that happen before anything was produced (bad status
    /// after retries, connect failure, invalid request) are returned here; errors after that
    /// arrive as the stream's last item.
    async fn stream_chat(&self, request: LlmRequest) -> Result<LlmEventStream, LlmError>;
}

/// Which tools the model may or must call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// No tool calls, text only.
    None,
    /// At least one tool call.
    Required,
    /// Exactly this tool (its catalog name).
    Function { name: String },
}

/// Serde shape shared with bud configuration: `"auto" | "none" | "required" | {"function": "name"}`.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum ToolChoiceRepr {
    Keyword(String),
    Function { function: String },
}

impl Serialize for ToolChoice {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let repr = match self {
            ToolChoice::Auto => ToolChoiceRepr::Keyword("auto".to_owned()),
            ToolChoice::None => ToolChoiceRepr::Keyword("none".to_owned()),
            ToolChoice::Required => ToolChoiceRepr::Keyword("required".to_owned()),
            ToolChoice::Function { name } => ToolChoiceRepr::Function {
                function: name.clone(),
            },
        };
        repr.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolChoice {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match ToolChoiceRepr::deserialize(deserializer)? {
            ToolChoiceRepr::Keyword(keyword) => match keyword.as_str() {
                "auto" => Ok(ToolChoice::Auto),
                "none" => Ok(ToolChoice::None),
                "required" => Ok(ToolChoice::Required),
                other => Err(serde::de::Error::custom(format!(
                    "unknown tool_choice '{other}': expected auto, none, required or {{\"function\": \"name\"}}"
                ))),
            },
            ToolChoiceRepr::Function { function } => Ok(ToolChoice::Function { name: function }),
        }
    }
}

/// One generation request: the whole conversation so far plus the tools on offer.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmRequest {
    /// Model name; empty means the provider's [`LlmProvider::default_model`].
    pub model: String,
    pub messages: Vec<ChatMessage>,
    /// Offered tools, sent in exactly this order (keep it deterministic: stable prompts cache
    /// better upstream). [`LlmRequest::with_tools`] sorts by name.
    pub tools: Vec<ToolSpec>,
    pub tool_choice: ToolChoice,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

impl LlmRequest {
    pub fn new(model: impl Into<String>, messages: Vec<ChatMessage>) -> Self {
        Self {
            model: model.into(),
            messages,
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            max_tokens: None,
            temperature: None,
        }
    }

    /// Offers `tools`, sorted by name so the same catalog always yields the same prompt.
    pub fn with_tools(mut self, mut tools: Vec<ToolSpec>) -> Self {
        tools.sort_by(|left, right| left.name.cmp(&right.name));
        self.tools = tools;
        self
    }

    pub fn with_tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = tool_choice;
        self
    }

    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The model to ask: the request's own, else the provider's `configured` one; an error
    /// when neither names one.
    pub fn model_or<'a>(&'a self, configured: &'a str) -> Result<&'a str, LlmError> {
        let model = if self.model.is_empty() {
            configured
        } else {
            self.model.as_str()
        };
        if model.is_empty() {
            return Err(LlmError::InvalidRequest(
                "no model named in the request and no llm.model configured".to_owned(),
            ));
        }
        Ok(model)
    }

    /// Checks what any provider would reject: a forced function that is not on offer, or a
    /// required tool call with no tools.
    pub fn validate(&self) -> Result<(), LlmError> {
        match &self.tool_choice {
            ToolChoice::Function { name } if !self.tools.iter().any(|tool| &tool.name == name) => {
                Err(LlmError::InvalidRequest(format!(
                    "tool_choice names function '{name}', which is not among the offered tools"
                )))
            }
            ToolChoice::Required if self.tools.is_empty() => Err(LlmError::InvalidRequest(
                "tool_choice is 'required' but no tools are offered".to_owned(),
            )),
            _ => Ok(()),
        }
    }
}

/// What a provider produces, in order: any number of `TextDelta`s and `ToolCallArguments`,
/// then the turn's `ToolCall`s (ordered by index), an optional `Usage`, and one final
/// `Finished`.
#[derive(Clone, Debug, PartialEq)]
pub enum LlmEvent {
    /// A piece of assistant text, to be appended to what came before.
    TextDelta(String),
    /// A piece of a tool call's arguments while the model still writes them (providers that
    /// stream arguments: OpenAI-compatible, Anthropic). Informational: the complete call comes
    /// as a `ToolCall` all the same, so a consumer may ignore these.
    ToolCallArguments(ToolCallArgumentsDelta),
    /// One complete tool call. Parallel calls each get their own event and index.
    ToolCall(IndexedToolCall),
    /// Token counts, when the backend reports them.
    Usage(TokenUsage),
    /// The generation ended normally. Always the last event.
    Finished(FinishReason),
}

/// A tool call with its position among the turn's parallel calls (0-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexedToolCall {
    pub index: u32,
    /// Call id, catalog tool name and the raw JSON arguments text (`{}` when the model sent
    /// none). The arguments are not validated here: the chat engine checks them against the
    /// tool's schema and reports problems back to the model.
    pub call: ToolCallRequest,
}

/// A fragment of the arguments text of the call at `index` (the index its `ToolCall` will
/// have); the fragments of one call, joined, are a prefix of its final arguments text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCallArgumentsDelta {
    pub index: u32,
    /// The call's id, when the provider has sent it yet (empty otherwise).
    pub id: String,
    /// The catalog tool name (the provider sends it before any argument).
    pub name: String,
    pub fragment: String,
}

/// Token counts of one generation, from the provider's own usage fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Every prompt token, cached or not (for Anthropic: `input_tokens` +
    /// `cache_creation_input_tokens` + `cache_read_input_tokens`).
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u32,
    /// Of `prompt_tokens`, those written to the provider's prompt cache (Anthropic's
    /// `cache_creation_input_tokens`). Left out of the stored shape when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_creation_tokens: u32,
    /// Of `prompt_tokens`, those read from the provider's prompt cache (Anthropic's
    /// `cache_read_input_tokens`, OpenAI's `prompt_tokens_details.cached_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u32,
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

/// The counts of several generations (an answer's LLM steps), saturating.
impl std::ops::AddAssign for TokenUsage {
    fn add_assign(&mut self, other: Self) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
        self.cache_creation_tokens = self
            .cache_creation_tokens
            .saturating_add(other.cache_creation_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
    }
}

/// Why the generation stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end of the answer.
    Stop,
    /// The token limit was reached; the text is cut.
    Length,
    /// The model asked for tool calls (reported whenever tool calls were produced, whatever
    /// the upstream said: some backends say `stop`).
    ToolCalls,
    /// The upstream withheld content.
    ContentFilter,
    /// Any other reason, verbatim.
    Other(String),
}

impl FinishReason {
    /// Maps an OpenAI-style `finish_reason` string.
    pub fn from_wire(reason: &str) -> Self {
        match reason {
            "stop" | "eos" | "end_turn" => FinishReason::Stop,
            "length" | "max_tokens" => FinishReason::Length,
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_choice_round_trips_through_its_bud_shape() {
        for (choice, shape) in [
            (ToolChoice::Auto, json!("auto")),
            (ToolChoice::None, json!("none")),
            (ToolChoice::Required, json!("required")),
            (
                ToolChoice::Function {
                    name: "kg__schema_version".to_owned(),
                },
                json!({"function": "kg__schema_version"}),
            ),
        ] {
            assert_eq!(serde_json::to_value(&choice).unwrap(), shape);
            assert_eq!(serde_json::from_value::<ToolChoice>(shape).unwrap(), choice);
        }
        let error = serde_json::from_value::<ToolChoice>(json!("sometimes")).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("unknown tool_choice 'sometimes'")
        );
    }

    #[test]
    fn with_tools_sorts_by_name_and_validate_rejects_unknown_forced_function() {
        let tool = |name: &str| ToolSpec {
            name: name.to_owned(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        };
        let request = LlmRequest::new("m", vec![])
            .with_tools(vec![tool("b"), tool("a")])
            .with_tool_choice(ToolChoice::Function {
                name: "c".to_owned(),
            });
        assert_eq!(request.tools[0].name, "a");
        let error = request.validate().unwrap_err();
        assert!(error.to_string().contains("'c'"), "{error}");
        assert!(
            LlmRequest::new("m", vec![])
                .with_tool_choice(ToolChoice::Required)
                .validate()
                .is_err()
        );
    }
}
