//! A tool call that became a task (the MCP tasks extension, `io.modelcontextprotocol/tasks`):
//! the upstream answered `tools/call` with a task handle and the host follows it with
//! `tasks/get` until it ends. This is what the chat, the store and the API say about it;
//! the wire types are rmcp's, in `mcp-client`.

use serde::{Deserialize, Serialize};

/// A task's status as its server last reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolTaskStatus {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl ToolTaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolTaskStatus::Working => "working",
            ToolTaskStatus::InputRequired => "input_required",
            ToolTaskStatus::Completed => "completed",
            ToolTaskStatus::Failed => "failed",
            ToolTaskStatus::Cancelled => "cancelled",
        }
    }
}

/// What the host knows of a running task: its id (kept with the call's row, so a restarted
/// host follows the same task instead of losing the call) and its latest status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolTask {
    pub task_id: String,
    pub status: ToolTaskStatus,
    /// The server's `statusMessage`, meant for people.
    pub status_message: Option<String>,
}
