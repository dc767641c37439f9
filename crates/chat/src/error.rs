//! `ChatError`, the chat engine's error at its boundary. The HTTP layer maps each variant to a
//! status once; store errors keep their meaning (not found, conflict, invalid input).

use crate::mcp_config::McpConfigError;
use crate::service::BudgetExceeded;
use switchboard_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    /// The thing does not exist for this caller (or belongs to someone else: never said).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// A request field is unusable; `field` names it.
    #[error("{field}: {message}")]
    InvalidInput { field: String, message: String },
    /// The MCP configuration (bud or overrides) refers to something that is not usable.
    #[error("invalid MCP configuration: {0}")]
    McpConfig(#[from] McpConfigError),
    /// The request clashes with what is going on (an answer is already being generated).
    #[error("{0}")]
    Conflict(String),
    /// The caller sees the thing but may not change it (another member's bud).
    #[error("{0}")]
    Forbidden(String),
    /// An MCP server the request names failed to answer (a resource to attach, a prompt, a
    /// completion); `field` names what asked for it.
    #[error("{field}: {message}")]
    Upstream { field: String, message: String },
    /// The chat engine is shutting down.
    #[error("the chat engine is shutting down")]
    ShuttingDown,
    /// A monthly token budget is used up: no new answer until it resets.
    #[error(transparent)]
    BudgetExceeded(Box<BudgetExceeded>),
    #[error(transparent)]
    Store(StoreError),
}

impl ChatError {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        ChatError::InvalidInput {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl From<StoreError> for ChatError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound { entity } => ChatError::NotFound(entity),
            other => ChatError::Store(other),
        }
    }
}

pub type ChatResult<T> = Result<T, ChatError>;
