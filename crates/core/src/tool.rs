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
    /// The keys of `_meta` the host acts on (MCP Apps' `ui`); the rest is dropped, so the
    /// definition hash covers exactly what changes our behaviour.
    #[serde(rename = "_meta", default, skip_serializing_if = "ToolMeta::is_empty")]
    pub meta: ToolMeta,
}

impl ToolDefinition {
    /// A tool known only by its name (its server no longer lists it): no description, any
    /// arguments.
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            title: None,
            description: String::new(),
            input_schema: Value::Object(serde_json::Map::new()),
            output_schema: None,
            annotations: None,
            meta: ToolMeta::default(),
        }
    }

    /// The `ui://` resource of the tool's MCP App, if it declares one.
    pub fn app_resource_uri(&self) -> Option<&str> {
        self.meta.ui.as_ref()?.resource_uri.as_deref()
    }

    /// False for a tool only its app may call (`_meta.ui.visibility` without `"model"`):
    /// such a tool is never offered to the model.
    pub fn visible_to_model(&self) -> bool {
        self.visible_to(UI_VISIBILITY_MODEL)
    }

    /// False for a tool the server keeps from apps (`_meta.ui.visibility` without `"app"`).
    pub fn visible_to_app(&self) -> bool {
        self.visible_to(UI_VISIBILITY_APP)
    }

    fn visible_to(&self, audience: &str) -> bool {
        match self.meta.ui.as_ref().and_then(|ui| ui.visibility.as_ref()) {
            None => true,
            Some(visibility) => visibility.iter().any(|entry| entry == audience),
        }
    }
}

/// The MCP Apps extension's identifier (SEP-1865), advertised in client capabilities.
pub const UI_EXTENSION_ID: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP App's HTML resource.
pub const UI_RESOURCE_MIME_TYPE: &str = "text/html;profile=mcp-app";
const UI_VISIBILITY_MODEL: &str = "model";
const UI_VISIBILITY_APP: &str = "app";

/// A tool's `_meta`, read leniently: a malformed `ui` entry is ignored rather than failing the
/// whole tool list. The deprecated flat key `ui/resourceUri` is read as `ui.resourceUri`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "Value")]
pub struct ToolMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<ToolUi>,
}

impl ToolMeta {
    pub fn is_empty(&self) -> bool {
        self.ui.is_none()
    }
}

impl From<Value> for ToolMeta {
    fn from(value: Value) -> Self {
        let mut ui = value
            .get("ui")
            .and_then(|ui| ToolUi::deserialize(ui).ok())
            .unwrap_or_default();
        if ui.resource_uri.is_none() {
            ui.resource_uri = value
                .get("ui/resourceUri")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        if ui
            .resource_uri
            .as_deref()
            .is_some_and(|uri| !uri.starts_with("ui://"))
        {
            ui.resource_uri = None;
        }
        if ui.resource_uri.is_none() {
            ui.resource_sha256 = None;
        }
        let empty = ui == ToolUi::default();
        ToolMeta {
            ui: (!empty).then_some(ui),
        }
    }
}

/// `_meta.ui` of a tool (MCP Apps).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolUi {
    /// The `ui://` resource holding the app's HTML.
    #[serde(
        rename = "resourceUri",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub resource_uri: Option<String>,
    /// Who may call the tool: `"model"`, `"app"` (absent: both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<String>>,
    /// Set by the host (an upstream's own value is replaced): SHA-256 of the app resource as read
    /// when the server was synced, so a changed app is a changed definition (its pins no
    /// longer match).
    #[serde(
        rename = "resourceSha256",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub resource_sha256: Option<String>,
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

/// An MCP App's HTML resource as read with `resources/read` at a server's sync.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppResource {
    /// The `ui://` URI tools name in `_meta.ui.resourceUri`.
    pub uri: String,
    pub mime_type: String,
    pub html: String,
    /// The content's `_meta` (its `ui.csp`, `ui.permissions`, `ui.prefersBorder`…), as sent.
    pub meta: Option<Value>,
    /// SHA-256 (hex) of the canonical JSON of the fields above: what a tool's
    /// `_meta.ui.resourceSha256` holds.
    pub sha256: String,
}

impl AppResource {
    /// Builds the resource and computes its hash.
    pub fn new(uri: String, mime_type: String, html: String, meta: Option<Value>) -> Self {
        let sha256 = crate::canonical::canonical_sha256(&serde_json::json!({
            "uri": uri, "mimeType": mime_type, "html": html, "meta": meta,
        }));
        AppResource {
            uri,
            mime_type,
            html,
            meta,
            sha256,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(meta: Value) -> ToolDefinition {
        serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"}, "_meta": meta,
        }))
        .unwrap()
    }

    #[test]
    fn ui_meta_is_read_leniently_and_only_what_the_host_uses_is_kept() {
        let app = tool(json!({"ui": {"resourceUri": "ui://a/app.html"}, "other": 1}));
        assert_eq!(app.app_resource_uri(), Some("ui://a/app.html"));
        assert_eq!(
            serde_json::to_value(&app).unwrap()["_meta"],
            json!({"ui": {"resourceUri": "ui://a/app.html"}})
        );
        let legacy = tool(json!({"ui/resourceUri": "ui://a/app.html"}));
        assert_eq!(legacy.app_resource_uri(), Some("ui://a/app.html"));
        // Not a ui:// URI, a malformed entry, or no ui at all: no app, and no `_meta` kept
        // (the definition hashes as it did before the extension existed).
        for meta in [
            json!({"ui": {"resourceUri": "https://example.com/app.html"}}),
            json!({"ui": {"visibility": "app"}}),
            json!({"progressToken": 1}),
            Value::Null,
        ] {
            let plain = tool(meta.clone());
            assert_eq!(plain.app_resource_uri(), None, "{meta}");
            assert!(serde_json::to_value(&plain).unwrap().get("_meta").is_none());
            assert!(plain.visible_to_model() && plain.visible_to_app());
        }
        let app_only = tool(json!({"ui": {"visibility": ["app"]}}));
        assert!(!app_only.visible_to_model() && app_only.visible_to_app());
        let model_only = tool(json!({"ui": {"visibility": ["model"]}}));
        assert!(model_only.visible_to_model() && !model_only.visible_to_app());
    }
}
