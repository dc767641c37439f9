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
    pub const ALL: [ToolTaskStatus; 5] = [
        ToolTaskStatus::Working,
        ToolTaskStatus::InputRequired,
        ToolTaskStatus::Completed,
        ToolTaskStatus::Failed,
        ToolTaskStatus::Cancelled,
    ];

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

impl std::str::FromStr for ToolTaskStatus {
    type Err = String;

    /// The status as [`ToolTaskStatus::as_str`] writes it (how the store keeps it).
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        ToolTaskStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == value)
            .ok_or_else(|| format!("unknown task status '{value}'"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_reads_back_from_its_text() {
        for status in ToolTaskStatus::ALL {
            assert_eq!(status.as_str().parse::<ToolTaskStatus>(), Ok(status));
        }
        assert!("done".parse::<ToolTaskStatus>().is_err());
    }
}
