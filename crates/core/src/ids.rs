//! Identifier newtypes. Every row id is a UUIDv7 string: sortable by creation time, portable
//! across SQLite and PostgreSQL as TEXT, and impossible to mix up across kinds at compile time.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// A fresh, time-ordered id.
            pub fn generate() -> Self {
                Self(uuid::Uuid::now_v7().to_string())
            }

            /// Wraps an id read from storage or from a request path.
            pub fn from_string(value: impl Into<String>) -> Self {
                Self(value.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            /// Honours width and alignment (`{:<38}`), so ids line up in tables.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.pad(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

id_type!(
    /// A tenant: every row belongs to exactly one workspace.
    WorkspaceId
);
id_type!(
    /// A person (or automation) acting through API tokens.
    UserId
);
id_type!(
    /// An API token row (never the secret itself).
    TokenId
);
id_type!(
    /// A registered upstream MCP server.
    ServerId
);
impl ServerId {
    /// The prefix of every id of a request's ephemeral server (`mcp_servers` of a chat request;
    /// `chat`'s `EphemeralServer::id`). No registered server's id has it.
    pub const EPHEMERAL_PREFIX: &'static str = "ephemeral-";

    /// Whether this is a request's ephemeral server rather than a registered one.
    pub fn is_ephemeral(&self) -> bool {
        self.as_str().starts_with(Self::EPHEMERAL_PREFIX)
    }

    /// The `server` label metrics give this server: its `name`, or `ephemeral` for every
    /// ephemeral server, whose names are chosen per request and would grow the series forever.
    pub fn metric_label<'a>(&self, name: &'a str) -> &'a str {
        if self.is_ephemeral() {
            "ephemeral"
        } else {
            name
        }
    }
}

id_type!(
    /// An assistant profile ("bud").
    BudId
);
id_type!(
    /// A chat conversation.
    ConversationId
);
id_type!(
    /// A persisted chat message.
    MessageId
);
id_type!(
    /// One tool call made during a chat turn (our id, not the LLM's call id).
    ToolCallId
);
id_type!(
    /// A pending or decided approval request.
    ApprovalId
);
id_type!(
    /// A pending or answered elicitation request from an upstream server.
    ElicitationId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_sort_by_creation() {
        let first = ConversationId::generate();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let second = ConversationId::generate();
        assert!(first < second);
        assert_ne!(first, second);
    }

    #[test]
    fn ids_serialize_as_plain_strings() {
        let id = ServerId::from_string("abc");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"abc\"");
    }
}
