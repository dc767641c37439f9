//! A tool's parameters read from its JSON Schema the way generators write them: `$ref`s into
//! `$defs`/`definitions` resolved, `type: ["integer", "null"]` and `anyOf` with null read as
//! optional types, enums from `enum` or from `oneOf`/`anyOf` entries with `const`.

use serde_json::Value;
use switchboard_core::ToolSpec;

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Parameter {
    pub name: String,
    pub required: bool,
    pub is_number: bool,
    pub is_string: bool,
    pub enum_values: Vec<String>,
    pub default: Option<Value>,
    pub minimum: Option<Value>,
    pub maximum: Option<Value>,
}

/// The parameters of `tool`, in schema order.
pub(crate) fn parameters(tool: &ToolSpec) -> Vec<Parameter> {
    let root = &tool.parameters;
    let required: Vec<&str> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = root.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, schema)| {
            let resolved = resolve(root, schema);
            let mut enum_values = Vec::new();
            collect_enum(root, schema, &mut enum_values, 0);
            Parameter {
                name: name.clone(),
                required: required.contains(&name.as_str()),
                is_number: has_type(root, schema, &["integer", "number"], 0),
                is_string: has_type(root, schema, &["string"], 0),
                enum_values,
                default: schema.get("default").or(resolved.get("default")).cloned(),
                minimum: schema.get("minimum").or(resolved.get("minimum")).cloned(),
                maximum: schema.get("maximum").or(resolved.get("maximum")).cloned(),
            }
        })
        .collect()
}

/// Follows a local `$ref` (`#/$defs/Name`, `#/definitions/Name`).
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
        return schema;
    };
    let Some(pointer) = reference.strip_prefix('#') else {
        return schema;
    };
    root.pointer(pointer).unwrap_or(schema)
}

fn alternatives(schema: &Value) -> impl Iterator<Item = &Value> {
    ["oneOf", "anyOf"]
        .into_iter()
        .filter_map(|key| schema.get(key).and_then(Value::as_array))
        .flatten()
}

fn has_type(root: &Value, schema: &Value, wanted: &[&str], depth: usize) -> bool {
    if depth > 4 {
        return false;
    }
    let schema = resolve(root, schema);
    let direct = match schema.get("type") {
        Some(Value::String(kind)) => wanted.contains(&kind.as_str()),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .any(|kind| wanted.contains(&kind)),
        _ => false,
    };
    direct || alternatives(schema).any(|inner| has_type(root, inner, wanted, depth + 1))
}

fn collect_enum(root: &Value, schema: &Value, values: &mut Vec<String>, depth: usize) {
    if depth > 4 {
        return;
    }
    let schema = resolve(root, schema);
    for value in schema
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(schema.get("const"))
        .filter_map(Value::as_str)
    {
        if !values.iter().any(|known| known == value) {
            values.push(value.to_owned());
        }
    }
    for inner in alternatives(schema) {
        collect_enum(root, inner, values, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_generated_schemas() {
        let tool = ToolSpec {
            name: "kg__traverse".into(),
            description: String::new(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "start_id": {"type": "string"},
                    "direction": {"$ref": "#/$defs/DirectionArgument", "default": "out"},
                    "depth": {"type": ["integer", "null"], "minimum": 1, "maximum": 5, "default": 1},
                    "mode": {"anyOf": [{"type": "string", "enum": ["fast", "slow"]}, {"type": "null"}]}
                },
                "required": ["start_id"],
                "$defs": {"DirectionArgument": {"oneOf": [
                    {"type": "string", "const": "out", "description": "Relationships that start at the object."},
                    {"type": "string", "const": "in"},
                    {"type": "string", "enum": ["both"]}
                ]}}
            }),
        };
        let parameters = parameters(&tool);
        assert_eq!(parameters.len(), 4);
        assert!(parameters[0].required && !parameters[0].is_number);
        assert_eq!(parameters[1].enum_values, ["out", "in", "both"]);
        assert_eq!(parameters[1].default, Some(json!("out")));
        assert!(parameters[2].is_number);
        assert_eq!(parameters[2].maximum, Some(json!(5)));
        assert_eq!(parameters[3].enum_values, ["fast", "slow"]);
    }
}
