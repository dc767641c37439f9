//! Objects and relationships, and their validation against the schema.
//!
//! Validation reports every problem at once, each naming the property and saying what was
//! expected, so a caller can fix a whole request in one go.

use crate::error::KgError;
use crate::schema::{PropertyDefinition, PropertyType, Schema};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Longest value accepted for a `string` property (`text` has no limit of its own).
pub const MAX_STRING_PROPERTY_CHARS: usize = 1_000;

/// One object of the graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectRecord {
    pub id: String,
    #[serde(rename = "type")]
    pub object_type: String,
    #[serde(default)]
    pub properties: Map<String, Value>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ObjectRecord {
    /// A short label for listings: the `title` or `name` property when there is one.
    pub fn label(&self) -> &str {
        ["title", "name"]
            .iter()
            .find_map(|key| self.properties.get(*key).and_then(Value::as_str))
            .unwrap_or(&self.id)
    }
}

/// One directed, typed link between two objects.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelationshipRecord {
    pub id: String,
    #[serde(rename = "type")]
    pub relationship_type: String,
    pub from_id: String,
    pub to_id: String,
    #[serde(default)]
    pub properties: Map<String, Value>,
    pub created_at: DateTime<Utc>,
}

/// A request to create an object (the id is generated when absent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewObject {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(rename = "type")]
    pub object_type: String,
    #[serde(default)]
    pub properties: Map<String, Value>,
}

/// A request to create a relationship (the id is generated when absent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewRelationship {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(rename = "type")]
    pub relationship_type: String,
    pub from_id: String,
    pub to_id: String,
    #[serde(default)]
    pub properties: Map<String, Value>,
}

/// Checks an id chosen by a caller: 1-128 characters without whitespace or control characters.
pub fn validate_id(id: &str) -> Result<(), KgError> {
    if id.is_empty()
        || id.chars().count() > 128
        || id.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(KgError::invalid_data(format!(
            "id '{id}' is invalid: use 1-128 characters without spaces"
        )));
    }
    Ok(())
}

/// Validates `properties` against `definitions`, dropping explicit `null`s (null means unset).
/// `owner` names the type in messages, e.g. "Document".
pub fn validate_properties(
    owner: &str,
    definitions: &[PropertyDefinition],
    properties: &mut Map<String, Value>,
) -> Result<(), KgError> {
    properties.retain(|_, value| !value.is_null());
    let mut problems = Vec::new();
    for (name, value) in properties.iter() {
        match definitions
            .iter()
            .find(|definition| &definition.name == name)
        {
            None => {
                let known: Vec<&str> = definitions.iter().map(|d| d.name.as_str()).collect();
                problems.push(format!(
                    "{owner} has no property '{name}' (its properties: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ));
            }
            Some(definition) => {
                if let Err(problem) = check_value(definition, value) {
                    problems.push(format!("{owner}.{name}: {problem}"));
                }
            }
        }
    }
    for definition in definitions.iter().filter(|d| d.required) {
        if !properties.contains_key(&definition.name) {
            problems.push(format!(
                "{owner}.{} is required ({})",
                definition.name, definition.property_type
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(KgError::InvalidData { problems })
    }
}

/// Why `value` does not fit `definition`, if it does not: one line of a
/// [`KgError::InvalidData`] problem list, which the caller prefixes with the property's owner
/// and name (so it is a plain message, not an error of its own).
pub(crate) fn check_value(definition: &PropertyDefinition, value: &Value) -> Result<(), String> {
    let describe = || describe_json(value);
    match definition.property_type {
        PropertyType::String => match value.as_str() {
            Some(text) if text.chars().count() > MAX_STRING_PROPERTY_CHARS => Err(format!(
                "expected a string of at most {MAX_STRING_PROPERTY_CHARS} characters (use a text property for long values)"
            )),
            Some(_) => Ok(()),
            None => Err(format!("expected a string, got {}", describe())),
        },
        PropertyType::Text => value
            .as_str()
            .map(|_| ())
            .ok_or_else(|| format!("expected text, got {}", describe())),
        PropertyType::Integer => {
            if value.is_i64() || value.is_u64() {
                Ok(())
            } else {
                Err(format!("expected an integer, got {}", describe()))
            }
        }
        PropertyType::Number => value
            .as_f64()
            .map(|_| ())
            .ok_or_else(|| format!("expected a number, got {}", describe())),
        PropertyType::Boolean => value
            .as_bool()
            .map(|_| ())
            .ok_or_else(|| format!("expected true or false, got {}", describe())),
        PropertyType::Date => match value.as_str() {
            Some(text) if NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok() => Ok(()),
            _ => Err(format!(
                "expected a date such as 2026-10-15, got {}",
                describe()
            )),
        },
        PropertyType::Datetime => match value.as_str() {
            Some(text) if DateTime::parse_from_rfc3339(text).is_ok() => Ok(()),
            _ => Err(format!(
                "expected an RFC 3339 timestamp such as 2026-10-15T08:30:00Z, got {}",
                describe()
            )),
        },
        PropertyType::Enum => match value.as_str() {
            Some(text) if definition.enum_values.iter().any(|allowed| allowed == text) => Ok(()),
            _ => Err(format!(
                "expected one of {}, got {}",
                definition.enum_values.join(", "),
                describe()
            )),
        },
    }
}

/// A short description of a JSON value for error messages: `"abc"`, `42`, `an object`.
pub fn describe_json(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) if text.chars().count() > 40 => {
            let head: String = text.chars().take(40).collect();
            format!("\"{head}…\"")
        }
        Value::String(text) => format!("\"{text}\""),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// Checks a whole relationship: its type exists, both ends fit its endpoint types, and its
/// properties fit. `from_type` / `to_type` are the types of the objects at each end.
pub fn validate_relationship(
    schema: &Schema,
    relationship_type: &str,
    from_type: &str,
    to_type: &str,
    properties: &mut Map<String, Value>,
) -> Result<(), KgError> {
    let definition = schema.require_relationship_type(relationship_type)?;
    let mut problems = Vec::new();
    if !definition.from_types.iter().any(|name| name == from_type) {
        problems.push(format!(
            "{relationship_type} cannot start at a {from_type} (allowed: {})",
            definition.from_types.join(", ")
        ));
    }
    if !definition.to_types.iter().any(|name| name == to_type) {
        problems.push(format!(
            "{relationship_type} cannot end at a {to_type} (allowed: {})",
            definition.to_types.join(", ")
        ));
    }
    if let Err(KgError::InvalidData {
        problems: property_problems,
    }) = validate_properties(relationship_type, &definition.properties, properties)
    {
        problems.extend(property_problems);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(KgError::InvalidData { problems })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn document_properties() -> Vec<PropertyDefinition> {
        vec![
            PropertyDefinition::new("title", PropertyType::String, "").required(),
            PropertyDefinition::enumeration("status", &["draft", "published"], ""),
            PropertyDefinition::new("pages", PropertyType::Integer, ""),
            PropertyDefinition::new("published_on", PropertyType::Date, ""),
        ]
    }

    #[test]
    fn reports_every_problem_with_property_names() {
        let mut properties =
            json!({"status": "lost", "pages": 2.5, "color": "red", "published_on": "15/10/2026"})
                .as_object()
                .unwrap()
                .clone();
        let KgError::InvalidData { problems } =
            validate_properties("Document", &document_properties(), &mut properties).unwrap_err()
        else {
            panic!("expected InvalidData");
        };
        let joined = problems.join("\n");
        assert!(
            joined.contains("Document.status: expected one of draft, published, got \"lost\""),
            "{joined}"
        );
        assert!(
            joined.contains("Document.pages: expected an integer, got 2.5"),
            "{joined}"
        );
        assert!(joined.contains("Document has no property 'color' (its properties: title, status, pages, published_on)"), "{joined}");
        assert!(
            joined.contains("Document.published_on: expected a date such as 2026-10-15"),
            "{joined}"
        );
        assert!(
            joined.contains("Document.title is required (string)"),
            "{joined}"
        );
    }

    #[test]
    fn nulls_mean_unset_and_valid_values_pass() {
        let mut properties =
            json!({"title": "Roadmap", "status": null, "pages": 12, "published_on": "2026-10-15"})
                .as_object()
                .unwrap()
                .clone();
        validate_properties("Document", &document_properties(), &mut properties).unwrap();
        assert!(!properties.contains_key("status"));
    }

    #[test]
    fn ids_with_spaces_are_rejected() {
        assert!(validate_id("doc-1").is_ok());
        assert!(validate_id("doc 1").is_err());
        assert!(validate_id("").is_err());
    }
}
