//! The stored shapes (JSON objects in `buds.mcp_config` and
//! `conversations.mcp_config_overrides`), parsed strictly so a typo is an error, not a silently
//! ignored key.
//!
//! A server reference is a server's id or its name (names are at most 32 characters, ids are
//! 36-character UUIDs, so the two never clash). A tool reference is `<server ref>.<tool name>`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchboard_llm::ToolChoice;

/// A bud's `mcp_config`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudMcpConfig {
    /// Servers the bud uses. Absent: every active server of the workspace; `[]`: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<Vec<String>>,
    /// When present, only these tools (`server.tool`) are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_tools: Option<Vec<String>>,
    /// Tools never offered (`server.tool`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled_tools: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoiceSetting>,
}

/// A conversation's `mcp_config_overrides`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfigOverrides {
    /// Added to the bud's servers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_servers: Vec<String>,
    /// Added to the bud's disabled tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled_tools: Vec<String>,
    /// Replaces the bud's choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoiceSetting>,
}

/// `tool_choice` as configured: `auto | none | required | {"function": "<tool>"}`, where
/// `<tool>` is a catalog name (`kg__schema_version`) or a tool reference (`kg.schema_version`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolChoiceSetting(pub ToolChoice);

/// A configuration that cannot be used; `field` is a JSON path (`mcp_config.servers[1]`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct McpConfigError {
    pub field: String,
    pub message: String,
}

impl McpConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl BudMcpConfig {
    /// Parses a stored or submitted `mcp_config` (`null` means the default).
    pub fn parse(value: &Value) -> Result<Self, McpConfigError> {
        parse_object(value, "mcp_config")
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Default::default()))
    }
}

impl McpConfigOverrides {
    /// Parses `mcp_config_overrides` (`null` means none).
    pub fn parse(value: &Value) -> Result<Self, McpConfigError> {
        parse_object(value, "mcp_config_overrides")
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Default::default()))
    }
}

fn parse_object<T: serde::de::DeserializeOwned + Default>(
    value: &Value,
    field: &str,
) -> Result<T, McpConfigError> {
    match value {
        Value::Null => Ok(T::default()),
        Value::Object(_) => serde_path_to_error::deserialize(value).map_err(|error| {
            let path = error.path().to_string();
            let inner = error.into_inner().to_string();
            let field = if path == "." || path.is_empty() {
                field.to_owned()
            } else {
                format!("{field}.{path}")
            };
            McpConfigError::new(field, inner)
        }),
        _ => Err(McpConfigError::new(field, "must be a JSON object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_documented_key_and_refuses_typos() {
        let config = BudMcpConfig::parse(&json!({
            "servers": ["kg", "files"],
            "available_tools": ["kg.schema_version"],
            "disabled_tools": ["files.write_file"],
            "tool_choice": {"function": "kg__schema_version"}
        }))
        .unwrap();
        assert_eq!(config.servers.as_deref().unwrap().len(), 2);
        assert_eq!(
            config.tool_choice.unwrap().0,
            ToolChoice::Function {
                name: "kg__schema_version".into()
            }
        );
        let typo = BudMcpConfig::parse(&json!({"server": ["kg"]})).unwrap_err();
        assert_eq!(typo.field, "mcp_config.server");
        assert!(typo.message.contains("unknown field `server`"), "{typo}");
        let bad_choice =
            McpConfigOverrides::parse(&json!({"tool_choice": "sometimes"})).unwrap_err();
        assert_eq!(bad_choice.field, "mcp_config_overrides.tool_choice");
        assert!(
            bad_choice.message.contains("unknown tool_choice"),
            "{bad_choice}"
        );
        let not_object = McpConfigOverrides::parse(&json!(["kg"])).unwrap_err();
        assert_eq!(not_object.message, "must be a JSON object");
        assert_eq!(
            BudMcpConfig::parse(&Value::Null).unwrap(),
            BudMcpConfig::default()
        );
    }

    #[test]
    fn round_trips_without_noise() {
        let overrides = McpConfigOverrides {
            additional_servers: vec!["files".into()],
            ..McpConfigOverrides::default()
        };
        assert_eq!(
            overrides.to_value(),
            json!({"additional_servers": ["files"]})
        );
        assert_eq!(BudMcpConfig::default().to_value(), json!({}));
    }
}
