//! Requests an upstream makes in the middle of a call (`elicitation/create`,
//! `sampling/createMessage`) passed on to the client that made the call, when there is one
//! that can answer them: the MCP gateway's client ([`ClientLink`], set per call in
//! [`crate::CallContext::client_link`]). Request-scoped: a request goes only to the link of the
//! call whose response stream carried it (or, when the transport cannot tell, of the only call
//! running on the session), never to another caller of a shared session.
//!
//! The link speaks JSON in MCP's shapes (the gateway's own rmcp side turns them into its
//! requests); this module checks what comes back before it goes upstream: a sampling answer
//! must be a `CreateMessageResult`, an elicitation answer an `ElicitResult` whose accepted
//! content fits the form that was asked ([`check_elicitation_content`]).

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use std::fmt;

/// Which upstream request a link is asked to pass on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForwardedKind {
    /// `elicitation/create` (form mode).
    Elicitation,
    /// `sampling/createMessage`.
    Sampling,
}

impl ForwardedKind {
    /// The request's method.
    pub fn method(self) -> &'static str {
        match self {
            Self::Elicitation => "elicitation/create",
            Self::Sampling => "sampling/createMessage",
        }
    }
}

/// One upstream request to pass on.
#[derive(Clone, Debug, PartialEq)]
pub struct ForwardedRequest {
    pub kind: ForwardedKind,
    /// The upstream that asked (its registered name).
    pub server_name: String,
    /// The request's `params`, as the upstream sent them.
    pub params: Value,
}

/// The client's JSON-RPC error (or why it could not be asked), passed back upstream.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ForwardError {
    pub code: i32,
    pub message: String,
}

impl ForwardError {
    /// JSON-RPC -32603: the client could not be asked or its answer was unusable.
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            code: -32603,
            message: message.into(),
        }
    }
}

/// The client of one call, able to answer some upstream requests itself.
pub trait ClientLink: Send + Sync + fmt::Debug {
    /// Whether this client declared the capability `kind` needs.
    fn answers(&self, kind: ForwardedKind) -> bool;

    /// Asks the client; the answer is the `result` it sent (an `ElicitResult`, a
    /// `CreateMessageResult`).
    fn forward(&self, request: ForwardedRequest)
    -> BoxFuture<'static, Result<Value, ForwardError>>;
}

/// Why accepted elicitation content does not fit its form, or `Ok`. The form is MCP's
/// restricted schema: a flat object of string, number, integer and boolean properties,
/// single-select enums (`enum`, or `oneOf` of `const`s) and multi-select ones (an `array` of
/// such `items`).
pub fn check_elicitation_content(schema: &Value, content: &Value) -> Result<(), String> {
    let Some(content) = content.as_object() else {
        return Err("the accepted content is not an object".to_owned());
    };
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !content.contains_key(required) {
            return Err(format!("the required field {required:?} is missing"));
        }
    }
    for (name, value) in content {
        let Some(property) = properties.get(name) else {
            return Err(format!("{name:?} is not a field of the form"));
        };
        check_field(name, property, value)?;
    }
    Ok(())
}

fn check_field(name: &str, property: &Value, value: &Value) -> Result<(), String> {
    let kind = property.get("type").and_then(Value::as_str).unwrap_or("");
    let fits = match kind {
        "string" => value.is_string() && is_allowed(property, value),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "array" => value.as_array().is_some_and(|items| {
            let item_schema = property.get("items").cloned().unwrap_or(Value::Null);
            items
                .iter()
                .all(|item| item.is_string() && is_allowed(&item_schema, item))
        }),
        _ => false,
    };
    if fits {
        Ok(())
    } else {
        Err(format!(
            "the field {name:?} does not fit its schema ({})",
            Value::Object(Map::from_iter([("type".to_owned(), Value::from(kind))]))
        ))
    }
}

/// A string against the choices of its schema (`enum`, `oneOf`/`anyOf` of `const`s), if any.
fn is_allowed(schema: &Value, value: &Value) -> bool {
    if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
        return choices.contains(value);
    }
    let constants = ["oneOf", "anyOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .filter_map(|choice| choice.get("const"))
        .collect::<Vec<_>>();
    constants.is_empty() || constants.contains(&value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepted_content_must_fit_the_form() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer"},
                "score": {"type": "number"},
                "ok": {"type": "boolean"},
                "colour": {"type": "string", "enum": ["red", "blue"]},
                "size": {"type": "string", "oneOf": [{"const": "s"}, {"const": "m"}]},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
            },
            "required": ["name"]
        });
        let good = json!({"name": "x", "age": 3, "score": 1.5, "ok": true, "colour": "red",
            "size": "m", "tags": ["a", "b"]});
        assert_eq!(check_elicitation_content(&schema, &good), Ok(()));
        for bad in [
            json!([]),
            json!({"age": 3}),
            json!({"name": "x", "age": 1.5}),
            json!({"name": "x", "colour": "green"}),
            json!({"name": "x", "size": "xl"}),
            json!({"name": "x", "tags": ["c"]}),
            json!({"name": "x", "other": 1}),
            json!({"name": {"nested": true}}),
        ] {
            assert!(check_elicitation_content(&schema, &bad).is_err(), "{bad}");
        }
    }
}
