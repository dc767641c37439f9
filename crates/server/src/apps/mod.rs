//! MCP Apps' sandbox origin (extension `io.modelcontextprotocol/ui`, issue 12): a second
//! listener, on an origin of its own (`server.apps_origin`), that serves an app's stored HTML
//! with exactly the Content-Security-Policy the resource declares. The UI frames it with
//! `sandbox="allow-scripts"` (an opaque origin: no cookies, no storage, no access to the page
//! that frames it) and speaks the app's `ui/*` JSON-RPC over `postMessage`.
//!
//! This origin holds no bearer token and serves no API: a page is reached only through a
//! sealed, short-lived [`switchboard_store::app_resources::AppSandboxTicket`] that the API
//! (`GET /chat/conversations/{id}/tool-calls/{tool_call_id}/app`, authorised like the
//! conversation) hands to the UI.

mod csp;
mod origin;
mod permissions;
mod sandbox;

pub use csp::content_security_policy;
pub use origin::AppsOrigin;
pub use permissions::{declared_permissions, permissions_policy};
pub use sandbox::{TICKET_LIFETIME, router, sandbox_url};
