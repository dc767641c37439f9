//! The chat engine's side of MCP: which tools one turn offers (from the resolved servers, plus
//! the request's ephemeral servers), how a call reaches its upstream through `mcp-client`, and
//! how results are turned into text for the model.
//!
//! This is a thin adapter over `mcp-client`'s `McpClient` and `ToolCatalog` and the store's
//! cached tool lists: it syncs a server on demand only when it was never synced (the registry's
//! background sync keeps caches fresh otherwise).

mod catalog;
mod catalog_cache;
mod ephemeral;
mod listing;
mod per_user;
mod result_text;
mod search;
mod upstream;

pub use catalog::{CallTarget, McpTools, TurnTools};
pub use ephemeral::{EphemeralServer, EphemeralToolCache};
pub(crate) use result_text::result_block;
pub use result_text::{
    CutText, EVENT_RESULT_MAX_BYTES, STORED_CONTENT_MAX_BYTES, STORED_STRUCTURED_MAX_BYTES,
    cut_for_model, cut_keeping_ends, error_text_for_model, event_result, result_text_for_model,
    stored_content,
};
pub use search::{FoundTool, SEARCH_TOOLS_NAME, SearchResult, ToolOffer};
pub use upstream::{OwnEndpoints, UserCredential, upstream_for_record};
