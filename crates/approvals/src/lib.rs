//! Switchboard's human in the loop: approval policies, the approval flow and elicitation
//! (servers asking the user) over the chat's event stream, tool-definition pinning, untrusted
//! text sanitisation, and the audit log of everything tools do.
//!
//! It is its own crate (not a module of `chat`) because it has one job the chat engine only
//! calls through a seam: `chat` defines the [`switchboard_chat::ApprovalGate`] trait and
//! knows nothing of policies; this crate implements it, and also serves the MCP client
//! (elicitation responder) and the HTTP layer (decisions, policies, audit). Depends on `core`,
//! `store`, `chat` (the seam and its event types) and `mcp-client` (the elicitation types) —
//! no rmcp type and no HTTP wire shape appears here.
//!
//! # Public API
//! - [`Approvals`] (`new(store, ApprovalConfig)`): `gate()` for
//!   `ChatServiceBuilder::approval_gate`, `elicitation_responder()` for
//!   `McpClientBuilder::elicitation`, `recover_after_restart()` at start-up,
//!   `start_decision_listener(shutdown)` (PostgreSQL: other replicas' decisions wake the
//!   calls waiting here at once, see [`replicas`]);
//!   decisions `decide(principal, approval_id, ApprovalChoice, Remember)`,
//!   `list_approvals(principal, ApprovalListing)`; elicitation
//!   `answer_elicitation(principal, id, ElicitationAnswer)`, `pending_elicitations`;
//!   policies `tool_policy`, `list_tool_policies`, `set_tool_policy`, `delete_tool_policy`,
//!   `list_bud_policies`, `set_bud_policy`, `delete_bud_policy`, `seed_read_only_policies`;
//!   pins `observe_server_sync(workspace, server, instructions, tools)` (after every sync and
//!   list change); `audit()` → [`AuditLog`] (`tool_call`, `connection_event`,
//!   `configuration_change`).
//! - [`pinning`]: `pin_hash`, `definition_diff`; [`sanitize`]: `sanitize_untrusted_text`.
//!
//! # Invariants
//! - A call is allowed only by an explicit rule (`ALWAYS_ALLOW` of the bud or workspace, or
//!   the owner's remembered "always") whose pin still matches, by a person (in Switchboard, or
//!   the token's user answering a gateway client's elicitation form), or by a default
//!   an operator configured. Server annotations (`readOnlyHint`…) never allow anything.
//! - A request is decided at most once, by the conversation's owner or an admin; requests of
//!   two conversations never mix (decisions go by id; elicitations go only to the one
//!   conversation whose call is running on that server, or are declined).
//! - Nothing waits forever: approvals expire (denied) and forms expire (cancelled); requests
//!   left by a restart are marked expired.
//! - A decision recorded by any replica reaches the waiting call: in memory in the same
//!   process, by a notice (PostgreSQL) or at the latest at the next poll of the store.
//! - Audit writes never fail the action; secrets are redacted before storage.

pub mod asking;
mod asking_client;
pub mod audit;
pub mod audit_details;
pub mod bud_policies;
pub mod config;
pub mod decisions;
pub mod elicitation;
pub mod error;
mod evaluation;
pub mod gate;
mod metrics;
pub mod pin_check;
pub mod pinning;
pub mod policies;
pub mod replicas;
pub mod sanitize;
mod service;
mod waiting;

pub use audit::{AuditLog, ConfigurationChange, ConnectionEvent};
pub use config::ApprovalConfig;
pub use decisions::{ApprovalChoice, ApprovalListing, DecisionOutcome, Remember};
pub use elicitation::{ElicitationAnswer, ElicitationRouter};
pub use error::{ApprovalError, ApprovalResult};
pub use gate::InteractiveApprovalGate;
pub use pin_check::PinDrift;
pub use policies::{PolicySource, ToolPolicyView};
pub use service::{Approvals, RecoveredRequests};
