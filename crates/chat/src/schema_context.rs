//! Where `meta.schemaContext` comes from. The chat engine knows nothing of the knowledge graph
//! (it reaches it only as an MCP server), so whoever wires the engine plugs a source in
//! ([`crate::ChatServiceBuilder::schema_context`]); the turn asks it once, at the start of an
//! answer whose conversation includes our own kg server.

use crate::events::SchemaContext;
use async_trait::async_trait;
use std::fmt;
use switchboard_core::WorkspaceId;

#[async_trait]
pub trait SchemaContextSource: Send + Sync + fmt::Debug {
    /// The workspace's schema right now; `None` when it has none (or cannot be read, which
    /// must not stop the answer).
    async fn schema_context(&self, workspace_id: &WorkspaceId) -> Option<SchemaContext>;
}
