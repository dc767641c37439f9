//! `/api/mcp/servers`: the registry's records, sync, tests and tool calls through the API.
//! `directory`: adding servers from an MCP registry (`/api/mcp/registry/*`).

mod api;
mod directory;
mod export;
mod failed_start;
mod import;
mod kg;
mod locking;
mod slow;
mod test_count;
mod tool_switch;
mod user_fields;
