//! Switchboard as an OAuth client of remote MCP servers, over HTTP: the Client ID Metadata
//! Document, the `auth_required` event of a chat answer.

mod auth_required;
mod client_metadata;
