//! Switchboard's own MCP server: the workspace knowledge graph ([`switchboard_kg`]) served over
//! Streamable HTTP at `/mcp`, as plain JSON-RPC 2.0 at `/mcp/rpc` and as three REST reads
//! (`rest`), with bearer-token auth, per-tool scopes, per-token rate limits and cached schema
//! answers.
//!
//! Mount it with [`KgEndpoint::into_router`]; change graphs (admin routes, imports) through
//! [`KnowledgeGraphs`] so MCP answers and caches follow at once. [`http::mcp_router`] serves any
//! rmcp handler on the same stack (the conformance fixture uses it).
//!
//! Invariant: with `mcp-client`, the only crate that names rmcp types.

pub mod answer_cache;
pub mod auth;
pub mod config;
pub mod endpoint;
pub mod errors;
pub mod gateway;
pub mod graphs;
pub mod handler;
pub mod http;
pub mod listen;
pub mod origin_policy;
pub mod persistence;
pub mod prompts;
pub mod rate_limit;
pub mod resources;
pub mod rest;
pub mod service;
pub mod store_adapter;
pub mod subscriptions;
pub mod tools;

pub use auth::{
    AnonymousAccess, Authenticator, Caller, CallerKey, StaticTokens, TokenVerifier, VerifyError,
};
pub use config::{ANONYMOUS_SCOPES_ENV, CacheLifetimes, KgConfig};
pub use endpoint::{DEFAULT_MAX_REQUEST_BODY_BYTES, KgEndpoint};
pub use graphs::{GraphError, GraphEvent, KnowledgeGraphs, WorkspaceGraph};
pub use persistence::{GraphPersistence, InMemoryOnly, LoadedGraph, PersistenceError};
pub use service::{
    KG_UPSTREAM_NAME, KnowledgeGraphService, OWN_KG_ENDPOINT_MARKER, register_kg_upstream,
};
pub use store_adapter::{StoreGraphPersistence, StoreTokenVerifier};
pub use tools::KgTool;
