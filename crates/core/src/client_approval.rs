//! Asking the program that made a tool call to have its own user approve it (a gateway client
//! that declared MCP elicitation): the question the approval gate puts and the answers it can
//! get. Shared by the gate (`chat`, `approvals`), which asks, and the gateway's wire
//! (`mcp-server`), which turns the question into an `elicitation/create` form.

use serde_json::Value;
use std::time::Duration;

/// What the client's user is asked to approve.
#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalQuestion {
    /// The server's registered name.
    pub server: String,
    /// The tool's own name on that server.
    pub tool: String,
    /// The tool's description, sanitised (shown, never trusted).
    pub description: String,
    /// The call's arguments, an object.
    pub arguments: Value,
    /// How long the answer is waited for.
    pub timeout: Duration,
}

/// How the client's user answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientAnswer {
    /// Accepted the form choosing "approve".
    Approved,
    /// Accepted the form choosing "deny".
    Denied,
    /// Declined the form.
    Declined,
    /// Dismissed the form.
    Cancelled,
    /// No usable answer (the request failed, or the form came back unreadable): the call
    /// waits for a person through Switchboard's own approvals instead.
    Unanswered(String),
}
