//! JSON-RPC errors of the knowledge-graph server, in one place: `-32001` missing scope (data:
//! `required_scope`, `user_scopes`), `-32002` unknown type/object/version (the message and data
//! list what exists), `-32003` rate limited, `-32602` invalid arguments or data, `-32603`
//! storage failures. Domain errors are converted here and nowhere else.

use crate::auth::Caller;
use crate::graphs::GraphError;
use crate::rate_limit::RateLimited;
use rmcp::model::{ErrorCode, ErrorData};
use serde_json::json;
use switchboard_core::Scope;
use switchboard_kg::{KgError, KgErrorKind};

pub const MISSING_SCOPE: ErrorCode = ErrorCode(-32001);
pub const NOT_FOUND: ErrorCode = ErrorCode(-32002);
pub const RATE_LIMITED: ErrorCode = ErrorCode(-32003);

/// The caller's token lacks `required`.
pub fn missing_scope(required: Scope, caller: &Caller) -> ErrorData {
    ErrorData::new(
        MISSING_SCOPE,
        format!("Missing required scope: {required}"),
        Some(json!({
            "required_scope": required.as_str(),
            "user_scopes": caller.principal.scopes.names(),
        })),
    )
}

pub fn rate_limited(limited: RateLimited) -> ErrorData {
    let retry_after_ms = limited.retry_after.as_millis().max(1) as u64;
    ErrorData::new(
        RATE_LIMITED,
        format!(
            "Rate limit exceeded ({} requests per minute); retry in {retry_after_ms} ms",
            limited.limit_per_minute
        ),
        Some(
            json!({ "retry_after_ms": retry_after_ms, "limit_per_minute": limited.limit_per_minute }),
        ),
    )
}

/// A method the server does not have (-32601), naming it, so a hand-written client sees
/// which call was wrong.
pub fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: {method}"),
        None,
    )
}

/// Arguments that do not fit a tool's input schema.
pub fn invalid_arguments(tool: &str, problem: impl std::fmt::Display) -> ErrorData {
    ErrorData::invalid_params(format!("Invalid arguments for {tool}: {problem}"), None)
}

pub fn from_kg(error: &KgError) -> ErrorData {
    let message = error.to_string();
    match error.kind() {
        KgErrorKind::NotFound => ErrorData::new(NOT_FOUND, message, Some(not_found_data(error))),
        KgErrorKind::Invalid => {
            let problems = match error {
                KgError::InvalidSchema { problems } | KgError::InvalidData { problems } => {
                    problems.clone()
                }
                _ => vec![message.clone()],
            };
            ErrorData::invalid_params(message, Some(json!({ "problems": problems })))
        }
        KgErrorKind::Conflict => {
            ErrorData::invalid_params(message, Some(json!({ "conflict": true })))
        }
    }
}

fn not_found_data(error: &KgError) -> serde_json::Value {
    match error {
        KgError::UnknownObjectType { name, available } => {
            json!({ "type": name, "available_types": available })
        }
        KgError::UnknownRelationshipType { name, available } => {
            json!({ "relationship": name, "available_relationship_types": available })
        }
        KgError::UnknownObject {
            id,
            available_types,
        } => json!({ "id": id, "available_types": available_types }),
        KgError::UnknownVersion { version, known } => {
            json!({ "version": version, "known_versions": known })
        }
        _ => json!({}),
    }
}

pub fn from_graph(error: &GraphError) -> ErrorData {
    match error {
        GraphError::Kg(error) => from_kg(error),
        GraphError::Storage(error) => {
            tracing::error!(%error, "knowledge graph storage failed");
            ErrorData::internal_error(
                "The knowledge graph could not be stored or loaded; nothing was changed",
                None,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_type_is_32002_listing_available_types() {
        let error = from_kg(&KgError::UnknownObjectType {
            name: "Invoice".into(),
            available: vec!["Document".into(), "Person".into()],
        });
        assert_eq!(error.code, NOT_FOUND);
        assert_eq!(
            error.message,
            "unknown object type 'Invoice'; available types: Document, Person"
        );
        assert_eq!(
            error.data.unwrap()["available_types"],
            json!(["Document", "Person"])
        );
    }

    #[test]
    fn invalid_data_is_32602_with_every_problem() {
        let error = from_kg(&KgError::InvalidData {
            problems: vec!["a".into(), "b".into()],
        });
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(error.data.unwrap()["problems"], json!(["a", "b"]));
    }
}
