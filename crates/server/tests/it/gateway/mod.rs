//! The gateway (`/gateway/mcp`, `/gateway/buds/{bud}/mcp`) through the real MCP wire, with a
//! client we did not write (rmcp's Streamable HTTP client) and a real upstream
//! (`server-everything` over stdio, registered in the workspace): the union of the allowed
//! tools named as the chat names them, ASK_USER calls waiting for a person deciding over the
//! HTTP API, ALWAYS_DENY tools unknown, every call audited with origin `gateway`, and
//! `gateway:use` required; the offer built once and reused until something changes, with
//! per-server and per-tool metrics (`catalog`); `notifications/tools/list_changed` when a
//! client's list changes (`list_changed`); resources, templates, prompts and completions
//! aggregated per server, and every list paged (`items`); the official TypeScript and Python
//! SDK clients listing, calling and reading through it (`sdk_clients`); the official
//! Inspector's CLI listing and calling stdio, Streamable HTTP and legacy-SSE upstreams
//! (`inspector`); an eliciting client's user approving its own calls, progress forwarded and
//! cancellation (`client_calls`); the per-token rate limit (`rate_limit`); the upstream's
//! elicitation, sampling and log messages passed on to the client whose call caused them
//! (`forwarding`); the official conformance suite through `/gateway/servers/{server}/mcp`
//! (`passthrough`); an upstream's `notifications/resources/updated` to exactly the sessions
//! that subscribed, and its subscriptions released when they let go (`resource_updates`).

mod catalog;
mod client_calls;
mod forwarding;
mod inspector;
mod items;
mod list_changed;
mod passthrough;
mod rate_limit;
mod resource_updates;
mod sdk_clients;
mod subscription_lifetime;
mod wire;
