//! Switchboard as an OAuth client of remote MCP servers, over HTTP: the Client ID Metadata
//! Document, the `auth_required` event of a chat answer, a per-user connection used end to end
//! against a real OAuth-protected server, a refused token refreshed and the call retried.

mod auth_required;
mod callback;
mod client_metadata;
mod connected;
mod fake_authorization_server;
mod log_capture;
mod refresh;
mod refreshing_server;
