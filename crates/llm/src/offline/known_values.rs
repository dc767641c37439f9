//! Values the planner can recognise in a question: type names and named objects, learnt from
//! the offered tools' schemas (enums of type-like parameters) and from tool results earlier in
//! the conversation (a type list, a found object…).

use std::collections::BTreeMap;

use serde_json::Value;
use switchboard_core::ToolSpec;

use super::text::singular;

/// An object seen in a tool result: its id, display name and type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KnownObject {
    pub id: String,
    pub name: String,
    pub type_name: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct KnownValues {
    /// Lower-cased singular form → canonical type name.
    type_names: BTreeMap<String, String>,
    pub objects: Vec<KnownObject>,
    /// Stemmed words of the offered tools' names with their server ("file", "memory").
    tool_words: std::collections::BTreeSet<String>,
}

/// Keys whose string value names an object's type.
const TYPE_VALUE_KEYS: &[&str] = &["type", "type_name", "object_type", "typeName"];
/// Keys holding lists of type names.
const TYPE_LIST_KEYS: &[&str] = &["from_types", "to_types", "types", "object_types"];
/// Keys that give an object its human name, in order of preference.
pub(crate) const NAME_KEYS: &[&str] = &["name", "title", "label", "display_name", "displayName"];

impl KnownValues {
    pub fn gather<'a>(tools: &[ToolSpec], results: impl IntoIterator<Item = &'a Value>) -> Self {
        let mut known = KnownValues::default();
        for tool in tools {
            known.learn_from_tool(tool);
        }
        for result in results {
            known.learn_from_result(result, None);
        }
        known
    }

    pub fn has_types(&self) -> bool {
        !self.type_names.is_empty()
    }

    /// The canonical type name for a word ("documents" → "Document"), if known.
    pub fn type_named(&self, word: &str) -> Option<&str> {
        let key = singular(word).to_lowercase();
        self.type_names.get(&key).map(String::as_str)
    }

    pub fn add_type(&mut self, name: &str) {
        let name = name.trim();
        if name.is_empty() || name.len() > 64 || name.contains(char::is_whitespace) {
            return;
        }
        self.type_names
            .entry(singular(name).to_lowercase())
            .or_insert_with(|| name.to_owned());
    }

    /// Whether `word` is a word of an offered tool's name ("files" → `read_file`).
    pub fn is_tool_word(&self, word: &str) -> bool {
        self.tool_words.contains(&super::text::stem(word))
    }

    fn learn_from_tool(&mut self, tool: &ToolSpec) {
        self.tool_words.extend(
            super::text::words(&tool.name)
                .iter()
                .map(|word| super::text::stem(word)),
        );
        for parameter in super::parameters::parameters(tool) {
            let lower = parameter.name.to_lowercase();
            // `type`, `object_type`, `from_type`… name object types; `messageType` or
            // `resourceType` of other servers do not.
            if lower == "type" || lower.ends_with("_type") || lower.ends_with("type_name") {
                for value in &parameter.enum_values {
                    self.add_type(value);
                }
            }
        }
    }

    /// Walks a result: `parent_key` is the key under which `value` was found.
    fn learn_from_result(&mut self, value: &Value, parent_key: Option<&str>) {
        match value {
            Value::Object(map) => {
                let in_type_list = parent_key.is_some_and(|key| {
                    let key = key.to_lowercase();
                    key == "types" || key == "object_types" || key == "objecttypes"
                });
                if in_type_list && let Some(name) = map.get("name").and_then(Value::as_str) {
                    self.add_type(name);
                }
                for key in TYPE_VALUE_KEYS {
                    if let Some(name) = map.get(*key).and_then(Value::as_str)
                        && name.starts_with(char::is_uppercase)
                    {
                        self.add_type(name);
                    }
                }
                if let Some(id) = map.get("id").and_then(Value::as_str)
                    && let Some(name) = object_display_name(map)
                {
                    let type_name = TYPE_VALUE_KEYS
                        .iter()
                        .find_map(|key| map.get(*key).and_then(Value::as_str))
                        .map(str::to_owned);
                    let object = KnownObject {
                        id: id.to_owned(),
                        name,
                        type_name,
                    };
                    if !self.objects.contains(&object) {
                        self.objects.push(object);
                    }
                }
                for (key, inner) in map {
                    if TYPE_LIST_KEYS.contains(&key.as_str())
                        && let Value::Array(items) = inner
                    {
                        for name in items.iter().filter_map(Value::as_str) {
                            self.add_type(name);
                        }
                    }
                    self.learn_from_result(inner, Some(key));
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.learn_from_result(item, parent_key);
                }
            }
            _ => {}
        }
    }
}

/// An object's human name: a name-like key at the top or inside its `properties`.
pub(crate) fn object_display_name(map: &serde_json::Map<String, Value>) -> Option<String> {
    let direct = NAME_KEYS
        .iter()
        .find_map(|key| map.get(*key).and_then(Value::as_str));
    let nested = || {
        let properties = map.get("properties")?.as_object()?;
        NAME_KEYS
            .iter()
            .find_map(|key| properties.get(*key).and_then(Value::as_str))
    };
    direct.or_else(nested).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn learns_types_and_objects_from_results_and_schemas() {
        let tools = vec![ToolSpec {
            name: "t".into(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": {"object_type": {"type": "string", "enum": ["Invoice"]}}}),
        }];
        let results = [
            json!({"types": [{"name": "Document", "description": "d"}, {"name": "Project"}]}),
            json!({"objects": [{"id": "doc-1", "type": "Document", "properties": {"title": "Product Roadmap"}}]}),
            json!({"relationships": [{"name": "leads", "from_types": ["Person"], "to_types": ["Project"]}]}),
        ];
        let known = KnownValues::gather(&tools, results.iter());
        assert_eq!(known.type_named("documents"), Some("Document"));
        assert_eq!(known.type_named("Invoice"), Some("Invoice"));
        assert_eq!(known.type_named("person"), Some("Person"));
        assert_eq!(known.type_named("roadmap"), None);
        assert_eq!(
            known.objects,
            vec![KnownObject {
                id: "doc-1".into(),
                name: "Product Roadmap".into(),
                type_name: Some("Document".into())
            }]
        );
    }
}
