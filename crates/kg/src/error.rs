//! The one error type of the knowledge-graph crate. Messages are written for the person (or
//! model) who sent the request: they name the offending type, property or id and, for lookups
//! that fail, list what does exist.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KgError {
    #[error("unknown object type '{name}'; available types: {}", list(available))]
    UnknownObjectType {
        name: String,
        available: Vec<String>,
    },

    #[error(
        "unknown relationship type '{name}'; available relationship types: {}",
        list(available)
    )]
    UnknownRelationshipType {
        name: String,
        available: Vec<String>,
    },

    #[error(
        "object '{id}' does not exist; the graph holds objects of types: {} (find_objects lists them)",
        list(available_types)
    )]
    UnknownObject {
        id: String,
        available_types: Vec<String>,
    },

    #[error(
        "unknown schema version '{version}'; known versions, newest first: {}",
        list(known)
    )]
    UnknownVersion { version: String, known: Vec<String> },

    #[error("invalid schema: {}", problems.join("; "))]
    InvalidSchema { problems: Vec<String> },

    #[error("invalid data: {}", problems.join("; "))]
    InvalidData { problems: Vec<String> },

    #[error("schema change rejected because existing data would no longer be valid: {}", problems.join("; "))]
    SchemaBreaksData { problems: Vec<String> },

    #[error("{what} already exists")]
    AlreadyExists { what: String },

    #[error("{message}")]
    InvalidArgument { message: String },
}

/// Coarse classes of [`KgError`], for mapping onto protocol error codes and HTTP statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KgErrorKind {
    /// A named type, relationship type, object or version does not exist.
    NotFound,
    /// The request or the data in it is malformed or breaks the schema.
    Invalid,
    /// The request is well-formed but collides with existing state.
    Conflict,
}

impl KgError {
    pub fn kind(&self) -> KgErrorKind {
        match self {
            KgError::UnknownObjectType { .. }
            | KgError::UnknownRelationshipType { .. }
            | KgError::UnknownObject { .. }
            | KgError::UnknownVersion { .. } => KgErrorKind::NotFound,
            KgError::InvalidSchema { .. }
            | KgError::InvalidData { .. }
            | KgError::InvalidArgument { .. } => KgErrorKind::Invalid,
            KgError::SchemaBreaksData { .. } | KgError::AlreadyExists { .. } => {
                KgErrorKind::Conflict
            }
        }
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        KgError::InvalidArgument {
            message: message.into(),
        }
    }

    pub fn invalid_data(problem: impl Into<String>) -> Self {
        KgError::InvalidData {
            problems: vec![problem.into()],
        }
    }
}

struct ListDisplay<'a>(&'a [String]);

impl fmt::Display for ListDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(none)");
        }
        f.write_str(&self.0.join(", "))
    }
}

fn list(items: &[String]) -> ListDisplay<'_> {
    ListDisplay(items)
}
