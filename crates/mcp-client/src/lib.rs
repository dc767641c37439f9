//! Switchboard's MCP client side: transports to upstream MCP servers (stdio, Streamable HTTP,
//! legacy HTTP+SSE, WebSocket), the pool of live sessions, capability listing, the tool catalog
//! offered to LLMs, and tool execution with its limits.
//!
//! Invariant: this crate knows nothing of the store. The servers a workspace registers, their
//! persisted capability caches and our own kg endpoint's record are `switchboard-registry`'s
//! (`ServerRegistry`, one crate up), which drives this client.
//!
//! Invariant: this crate (with `mcp-server`) is the only one that names rmcp types; everything
//! public here is rmcp-free, so rmcp's churn stays inside — except the OAuth store traits
//! re-exported by [`oauth`] (`CredentialStore`, `StateStore` and their stored types), which the
//! host implements over its database.
//!
//! # Layers
//! - [`McpClient`] — sessions and requests for an [`UpstreamServer`] description: lazily
//!   started, single-flight sessions per (server, [`SessionScopeKey`]), each server's own
//!   `init_timeout_ms`; `call_tool`, `read_resource`, `get_prompt`, `fetch_capabilities`,
//!   `test_connection`; `shutdown`. List changes reach `on_list_changed` from both protocol
//!   generations (notifications of `initialize` sessions, `subscriptions/listen` streams of
//!   2026-07-28 ones). A call's timeout is silence: progress restarts it and an open
//!   elicitation of the call holds it still, under the hard maximum.
//! - [`UpstreamError`] — every failure, mapped once from rmcp and the transports; its
//!   `Display` is a sentence for people (what failed, where, why) and `code()` a stable id.
//! - [`ToolCatalog`] — turns the enabled tools of a set of servers (plus built-in tools) into
//!   OpenAI-format [`switchboard_core::ToolSpec`]s named `server__tool`, and routes a name back
//!   to ([`ToolRoute`]) the server and the upstream's own tool name.
//!
//! # For the chat engine
//! ```text
//! // per resolved server record: Ok(enabled tools, cache refreshed if stale) or Err(Unusable
//! // { state, code: "needs_auth" | "empty" | "inactive" | <error code>, message })
//! // (from switchboard-registry's ServerRegistry)
//! let tools = registry.usable_tools(&record).await;
//! let upstream = registry.upstream_as(&record, user_token_for_own_endpoint).await?;
//! let catalog = ToolCatalog::build(&servers_with_enabled_tools, &builtin_specs);
//! // offer catalog.specs to the LLM; when it calls `name` with `arguments`:
//! let route = catalog.route(&name).ok_or(...)?;          // None: built-in or unknown
//! let result = client.call_tool(&upstream_server, &route.tool, arguments, &CallContext {
//!     caller: Caller { user_id, conversation_id: Some(conversation_id) },
//!     cancellation,                 // cancel to abandon the call (upstream is told)
//!     events: Some(progress_sender), // CallEvent::Progress / Log / Task while it runs
//!     client_link: None,            // the gateway's client, when it answers the upstream
//!     detach: Some(shutdown),       // stop following a task without cancelling it
//! }).await;                         // Ok(ToolResult { is_error, .. }) or Err(UpstreamError)
//! ```
//! `UpstreamError::code()` gives a stable identifier for error events; a call is never retried
//! by this crate.

mod arguments;
mod call_clock;
mod calls;
pub mod capabilities;
pub mod catalog;
mod client;
pub mod client_link;
pub mod config;
pub mod error;
#[cfg(fuzzing)]
pub mod fuzzing;
pub mod handler;
mod input_answers;
mod latency;
mod metrics;
pub mod notifications;
pub mod oauth;
mod resource_listen;
mod resource_watch;
pub mod result;
pub mod server;
pub mod session;
pub mod session_events;
mod task_watch;
pub mod transport;
pub mod url_policy;

pub use arguments::json_kind;
pub use calls::{CallContext, Caller, ConnectionTestReport, ForwardedList};
pub use capabilities::{
    CapabilitySnapshot, PromptArgumentDefinition, PromptDefinition, ResourceDefinition,
    ServerDescription,
};
pub use catalog::{CatalogServer, ToolCatalog, ToolRoute, is_valid_tool_name};
pub use client::{McpClient, McpClientBuilder, ServerListChangedHandler};
pub use client_link::{ClientLink, ForwardError, ForwardedKind, ForwardedRequest};
pub use config::{McpClientConfig, RequestUrlPolicyConfig, StdioConfig, UrlPolicyConfig};
pub use error::{AuthChallenge, UpstreamError};
pub use handler::{
    AcceptSchemaDefaults, ElicitationRequest, ElicitationResponder, ElicitationResponse,
};
pub use latency::{ServerLatency, Slowness};
pub use notifications::{CallEvent, ListChangeKind};
pub use resource_watch::ResourceWatch;
pub use result::{PromptMessage, PromptResult, ResourceContent, ToolContent, ToolResult};
pub use server::{
    RemoteEndpoint, ServerConfigError, StdioCommand, UpstreamEndpoint, UpstreamServer,
    validate_server_name,
};
pub use session::{SessionScopeKey, SessionStatus};
pub use session_events::{SessionEvent, SessionEventHandler, SessionEventKind};
pub use url::Url;
pub use url_policy::{ServerOrigin, UrlPolicy, UrlPolicyError};
