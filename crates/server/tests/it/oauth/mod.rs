//! Switchboard as an OAuth client of remote MCP servers, over HTTP: the Client ID Metadata
//! Document, the `auth_required` event of a chat answer.

mod auth_required;
mod callback;
mod client_metadata;
mod fake_authorization_server;
