//! Tool shapes shared by the MCP client side, the LLM providers and the chat engine.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool as an upstream MCP server describes it (rmcp-free copy, as cached in the store).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
    #[serde(
        rename = "outputSchema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

/// A tool as offered to an LLM: OpenAI function format, with a name that is unique in the
/// turn's catalog and matches `^[a-zA-Z0-9_-]{1,64}$`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Value,
}
