//! Checking a person's answer to an elicitation form against the schema the upstream asked
//! with: a flat object of primitive properties (MCP's restricted JSON Schema). Defaults the
//! schema declares fill the properties the answer leaves out, then the result is validated
//! (types, required, enums, lengths, ranges, formats); properties the schema does not name are
//! refused. Errors never echo the values (an answer may be a secret).

use serde_json::{Map, Value};

/// Most problems reported for one answer.
const MAX_REPORTED_PROBLEMS: usize = 10;

/// The answer with defaults applied, or what is wrong with it (one line per problem).
pub fn check_answer(
    requested_schema: &Value,
    content: Option<&Value>,
) -> Result<Value, Vec<String>> {
    let answer = match content {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err(vec!["the content must be a JSON object".to_owned()]),
    };
    let properties = requested_schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut problems: Vec<String> = answer
        .keys()
        .filter(|name| !properties.contains_key(*name))
        .map(|name| format!("'{name}' is not a field of this form"))
        .collect();
    let mut completed = answer;
    for (name, property) in &properties {
        if !completed.contains_key(name)
            && let Some(default) = property.get("default")
        {
            completed.insert(name.clone(), default.clone());
        }
    }
    let completed = Value::Object(completed);
    // Formats (email, uri, date, date-time) are part of MCP's form schema; JSON Schema treats
    // them as annotations unless asked to check them.
    match jsonschema::options()
        .should_validate_formats(true)
        .build(requested_schema)
    {
        Ok(validator) => {
            problems.extend(validator.iter_errors(&completed).map(|error| {
                let path = error.instance_path().to_string();
                let message = error.masked().to_string();
                if path.is_empty() {
                    message
                } else {
                    format!("{}: {message}", path.trim_start_matches('/'))
                }
            }));
        }
        Err(error) => problems.push(format!(
            "the server's form schema is not valid JSON Schema ({}), so no answer can be checked",
            error.masked()
        )),
    }
    if problems.is_empty() {
        Ok(completed)
    } else {
        problems.truncate(MAX_REPORTED_PROBLEMS);
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "default": "Ada"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "color": {"type": "string", "enum": ["red", "green"]},
                "newsletter": {"type": "boolean", "default": false},
                "email": {"type": "string", "format": "email"}
            },
            "required": ["name", "age"]
        })
    }

    #[test]
    fn defaults_fill_missing_fields() {
        let checked = check_answer(&schema(), Some(&json!({"age": 36}))).unwrap();
        assert_eq!(
            checked,
            json!({"age": 36, "name": "Ada", "newsletter": false})
        );
        // Given values win over defaults.
        let checked = check_answer(
            &schema(),
            Some(&json!({"age": 1, "name": "Grace", "newsletter": true})),
        )
        .unwrap();
        assert_eq!(checked["name"], "Grace");
        assert_eq!(checked["newsletter"], true);
    }

    #[test]
    fn wrong_answers_say_what_is_wrong_without_echoing_values() {
        let problems = check_answer(
            &schema(),
            Some(&json!({"age": "secret-value", "color": "blue", "extra": 1})),
        )
        .unwrap_err();
        let text = problems.join("\n");
        assert!(text.contains("'extra' is not a field"), "{text}");
        assert!(text.contains("age"), "{text}");
        assert!(text.contains("color"), "{text}");
        assert!(!text.contains("secret-value"), "{text}");
        let missing = check_answer(&schema(), Some(&json!({}))).unwrap_err();
        assert!(missing.join(" ").contains("age"), "{missing:?}");
        assert!(check_answer(&schema(), Some(&json!([1]))).is_err());
        assert!(
            check_answer(&schema(), Some(&json!({"age": 200})))
                .unwrap_err()
                .join(" ")
                .contains("age")
        );
        let bad_email = check_answer(&schema(), Some(&json!({"age": 3, "email": "nope"})));
        assert!(
            bad_email.unwrap_err().join(" ").contains("email"),
            "formats are checked"
        );
        assert!(
            check_answer(
                &schema(),
                Some(&json!({"age": 3, "email": "a@example.org"}))
            )
            .is_ok()
        );
    }
}
