//! Validation of tool arguments against the tool's `inputSchema` before a call leaves: an LLM's
//! malformed arguments come back at once with precise messages, without a round trip. And of a
//! result's `structuredContent` against the tool's `outputSchema` when it comes back: the MCP
//! spec asks clients to validate it, and a result that breaks its own promise becomes an error
//! result (the model must not trust data of the wrong shape).
//!
//! Compiled validators are cached by schema text. A schema that does not compile is logged and
//! skipped (a sloppy upstream schema must not make its tool unusable). Remote `$ref`s are never
//! fetched (the validator is built without network resolvers).

use crate::{ToolResult, UpstreamError};
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

const CACHE_LIMIT: usize = 2048;
const MAX_REPORTED_ERRORS: usize = 5;

#[derive(Default)]
pub(crate) struct ArgumentValidator {
    compiled: Mutex<HashMap<u64, Option<Arc<jsonschema::Validator>>>>,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentValidator").finish_non_exhaustive()
    }
}

impl ArgumentValidator {
    /// Returns the arguments as a JSON object (`null` becomes `{}`) when they satisfy the schema.
    pub fn check(
        &self,
        tool_name: &str,
        schema: &Value,
        arguments: Value,
    ) -> Result<serde_json::Map<String, Value>, UpstreamError> {
        let arguments = match arguments {
            Value::Null => serde_json::Map::new(),
            Value::Object(map) => map,
            other => {
                return Err(UpstreamError::InvalidArguments {
                    tool: tool_name.to_owned(),
                    details: vec![format!(
                        "arguments must be a JSON object, not {}",
                        json_kind(&other)
                    )],
                });
            }
        };
        let Some(validator) = self.validator_for(tool_name, schema) else {
            return Ok(arguments);
        };
        let instance = Value::Object(arguments);
        let details = error_details(&validator, &instance);
        if !details.is_empty() {
            return Err(UpstreamError::InvalidArguments {
                tool: tool_name.to_owned(),
                details,
            });
        }
        match instance {
            Value::Object(map) => Ok(map),
            _ => unreachable!("constructed as an object above"),
        }
    }

    /// Checks a successful result against the tool's `outputSchema`: `Err` with a message for
    /// the model when `structuredContent` is missing or does not match. No schema (or one
    /// that does not compile) accepts anything; tool errors are not checked.
    pub fn check_output(
        &self,
        tool_name: &str,
        schema: Option<&Value>,
        result: &ToolResult,
    ) -> Result<(), String> {
        let Some(schema) = schema else {
            return Ok(());
        };
        if result.is_error {
            return Ok(());
        }
        let Some(structured) = &result.structured_content else {
            return Err(format!(
                "the tool '{tool_name}' declares an outputSchema but returned no structuredContent"
            ));
        };
        let Some(validator) = self.validator_for(tool_name, schema) else {
            return Ok(());
        };
        let details = error_details(&validator, structured);
        if details.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the structuredContent of '{tool_name}' does not match its outputSchema: {}",
                details.join("; ")
            ))
        }
    }

    fn validator_for(&self, tool_name: &str, schema: &Value) -> Option<Arc<jsonschema::Validator>> {
        if !schema.is_object() {
            return None;
        }
        let key = {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            schema.to_string().hash(&mut hasher);
            hasher.finish()
        };
        if let Some(cached) = self.compiled.lock().ok()?.get(&key) {
            return cached.clone();
        }
        let compiled = match jsonschema::validator_for(schema) {
            Ok(validator) => Some(Arc::new(validator)),
            Err(error) => {
                tracing::warn!(tool = %switchboard_core::log_text(tool_name), error = %switchboard_core::log_text(&error.to_string()), "the tool's inputSchema does not compile; arguments are not validated");
                None
            }
        };
        if let Ok(mut cache) = self.compiled.lock() {
            if cache.len() >= CACHE_LIMIT {
                cache.clear();
            }
            cache.insert(key, compiled.clone());
        }
        compiled
    }
}

/// The first few validation errors of `instance`, each with its JSON pointer.
fn error_details(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .take(MAX_REPORTED_ERRORS)
        .map(|error| {
            let path = error.instance_path().to_string();
            if path.is_empty() {
                error.to_string()
            } else {
                format!("{path}: {error}")
            }
        })
        .collect()
}

/// "null", "a boolean", "a number", "a string", "an array", "an object" — for messages about
/// a value that has the wrong JSON type.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
            "additionalProperties": false
        })
    }

    #[test]
    fn accepts_valid_arguments_and_explains_invalid_ones() {
        let validator = ArgumentValidator::default();
        validator
            .check("add", &schema(), json!({"a": 1, "b": 2}))
            .unwrap();
        let error = validator
            .check("add", &schema(), json!({"a": "one"}))
            .unwrap_err();
        let UpstreamError::InvalidArguments { tool, details } = &error else {
            panic!("{error:?}")
        };
        assert_eq!(tool, "add");
        assert!(
            details.iter().any(|detail| detail.starts_with("/a:")),
            "{details:?}"
        );
        assert!(
            details
                .iter()
                .any(|detail| detail.contains("\"b\" is a required property")),
            "{details:?}"
        );
        let error = validator
            .check("add", &schema(), json!([1, 2]))
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("must be a JSON object, not an array")
        );
    }

    #[test]
    fn null_arguments_are_an_empty_object_and_broken_schemas_are_skipped() {
        let validator = ArgumentValidator::default();
        assert!(
            validator
                .check("noargs", &json!({"type": "object"}), Value::Null)
                .unwrap()
                .is_empty()
        );
        let broken = json!({"type": "object", "properties": {"a": {"type": "no-such-type"}}});
        validator.check("sloppy", &broken, json!({"a": 1})).unwrap();
    }

    #[test]
    fn structured_content_must_match_the_output_schema() {
        let validator = ArgumentValidator::default();
        let result = |structured: Option<Value>, is_error: bool| ToolResult {
            content: Vec::new(),
            structured_content: structured,
            is_error,
        };
        let schema = schema();
        validator
            .check_output(
                "add",
                Some(&schema),
                &result(Some(json!({"a": 1, "b": 2})), false),
            )
            .unwrap();
        let wrong = validator
            .check_output(
                "add",
                Some(&schema),
                &result(Some(json!({"a": "x"})), false),
            )
            .unwrap_err();
        assert!(wrong.contains("does not match its outputSchema"), "{wrong}");
        assert!(wrong.contains("/a:"), "{wrong}");
        let missing = validator
            .check_output("add", Some(&schema), &result(None, false))
            .unwrap_err();
        assert!(
            missing.contains("returned no structuredContent"),
            "{missing}"
        );
        // Tool errors and tools without a schema are not checked.
        validator
            .check_output("add", Some(&schema), &result(None, true))
            .unwrap();
        validator
            .check_output("add", None, &result(Some(json!(1)), false))
            .unwrap();
    }
}
