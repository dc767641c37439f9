//! `ApprovalError`, this crate's error at its boundary. The HTTP layer maps each variant to a
//! status once: not found 404, forbidden 403, already settled 409, invalid input 422.

use switchboard_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// The thing does not exist in the caller's workspace (never says whether it exists
    /// elsewhere).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The caller may see it but not act on it (someone else's approval).
    #[error("{0}")]
    Forbidden(String),
    /// The request cannot take this answer: it was already decided, answered, expired or
    /// cancelled, or (an accepted form) it waits on another replica, which its content cannot
    /// reach.
    #[error("{0}")]
    AlreadySettled(String),
    /// A request field is unusable; `field` names it.
    #[error("{field}: {message}")]
    InvalidInput { field: String, message: String },
    #[error(transparent)]
    Store(StoreError),
}

impl ApprovalError {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApprovalError::InvalidInput {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl From<StoreError> for ApprovalError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound { entity } => ApprovalError::NotFound(entity),
            StoreError::Conflict(message) => ApprovalError::AlreadySettled(message),
            StoreError::InvalidInput { field, reason } => ApprovalError::InvalidInput {
                field: field.to_owned(),
                message: reason,
            },
            other => ApprovalError::Store(other),
        }
    }
}

pub type ApprovalResult<T> = Result<T, ApprovalError>;
