//! The knowledge graph through the application: `/api/kg` and `/mcp`.

mod api;
mod session_cookie;
