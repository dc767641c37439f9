//! Transports to upstream MCP servers, one file each. rmcp supplies Streamable HTTP; stdio,
//! legacy HTTP+SSE and WebSocket are written here as rmcp `Transport`s. All remote transports
//! go through the URL policy; HTTP ones share one `reqwest::Client`.

pub(crate) mod call_notifications;
pub(crate) mod framing;
pub mod http_client;
pub(crate) mod http_measured;
pub(crate) mod legacy_sse;
pub(crate) mod sse_events;
pub(crate) mod stdio;
pub(crate) mod stdio_process;
pub(crate) mod streamable_http;
pub(crate) mod websocket;

pub use http_client::build_shared_http_client;
