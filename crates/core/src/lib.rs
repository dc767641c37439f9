//! Switchboard's shared vocabulary: identifiers, scopes, tool and message shapes, and the
//! state machines every other crate agrees on.
//!
//! Invariant: this crate does no IO and names no protocol SDK type (no rmcp, no sqlx, no axum).
//! Anything here must be cheap to depend on from every other crate.

pub mod canonical;
pub mod client_approval;
pub mod ids;
pub mod log_text;
pub mod message;
pub mod message_context;
pub mod policy;
pub mod principal;
pub mod redact;
pub mod result_content;
pub mod scope;
pub mod setting;
pub mod sync;
pub mod tool;
pub mod tool_call;
pub mod tool_message;
pub mod tool_task;
pub mod transport;

pub use client_approval::{ApprovalQuestion, ClientAnswer};
pub use ids::*;
pub use log_text::{log_json, log_text};
pub use message::{ChatMessage, ChatRole, ToolCallRequest};
pub use message_context::{AttachmentRef, MESSAGE_CONTEXT_KEY, MessageContext, PromptOrigin};
pub use policy::ApprovalPolicy;
pub use principal::Principal;
pub use result_content::{ImageInput, ResultBlock};
pub use scope::{Scope, ScopeSet, UnknownScope};
pub use setting::InvalidSetting;
pub use sync::LockUnpoisoned;
pub use tool::{
    AppResource, ToolDefinition, ToolMeta, ToolSpec, ToolUi, UI_EXTENSION_ID, UI_RESOURCE_MIME_TYPE,
};
pub use tool_call::{ToolCallState, ToolCallTransitionError};
pub use tool_message::{ToolApp, ToolMessageMetadata};
pub use tool_task::{ToolTask, ToolTaskStatus};
pub use transport::{SessionScope, SessionState, TransportKind};
