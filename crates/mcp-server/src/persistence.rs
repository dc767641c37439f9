//! Where workspace graphs are stored. The registry ([`crate::KnowledgeGraphs`]) calls these
//! methods after validating a change and before making it visible, so a change that cannot be
//! stored is never seen. The product implements this with the store (`store_adapter`); tests,
//! benchmarks and the conformance fixture use [`InMemoryOnly`].

use async_trait::async_trait;
use switchboard_core::WorkspaceId;
use switchboard_kg::{KnowledgeGraph, ObjectRecord, RelationshipRecord, SchemaUpdate};

/// Storing or loading a graph failed; the change was not applied.
#[derive(Debug, Clone, thiserror::Error)]
#[error("knowledge graph storage failed: {0}")]
pub struct PersistenceError(pub String);

#[async_trait]
pub trait GraphPersistence: Send + Sync + 'static {
    /// The stored graph of a workspace; `None` when it never stored one.
    async fn load_graph(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Option<KnowledgeGraph>, PersistenceError>;

    /// Stores a whole graph for a workspace that has none yet (the sample dataset). Returns
    /// `false`, storing nothing, when the workspace already has a graph.
    async fn save_new_graph(
        &self,
        workspace_id: &WorkspaceId,
        graph: &KnowledgeGraph,
    ) -> Result<bool, PersistenceError>;

    async fn save_schema_update(
        &self,
        workspace_id: &WorkspaceId,
        update: &SchemaUpdate,
    ) -> Result<(), PersistenceError>;

    /// Inserts new objects, then new relationships, atomically.
    async fn save_records(
        &self,
        workspace_id: &WorkspaceId,
        objects: &[ObjectRecord],
        relationships: &[RelationshipRecord],
    ) -> Result<(), PersistenceError>;

    /// Deletes relationships, then objects, atomically.
    async fn delete_records(
        &self,
        workspace_id: &WorkspaceId,
        object_ids: &[String],
        relationship_ids: &[String],
    ) -> Result<(), PersistenceError>;
}

/// Keeps graphs in memory only (nothing survives a restart).
#[derive(Debug, Default, Clone, Copy)]
pub struct InMemoryOnly;

#[async_trait]
impl GraphPersistence for InMemoryOnly {
    async fn load_graph(
        &self,
        _: &WorkspaceId,
    ) -> Result<Option<KnowledgeGraph>, PersistenceError> {
        Ok(None)
    }

    async fn save_new_graph(
        &self,
        _: &WorkspaceId,
        _: &KnowledgeGraph,
    ) -> Result<bool, PersistenceError> {
        Ok(true)
    }

    async fn save_schema_update(
        &self,
        _: &WorkspaceId,
        _: &SchemaUpdate,
    ) -> Result<(), PersistenceError> {
        Ok(())
    }

    async fn save_records(
        &self,
        _: &WorkspaceId,
        _: &[ObjectRecord],
        _: &[RelationshipRecord],
    ) -> Result<(), PersistenceError> {
        Ok(())
    }

    async fn delete_records(
        &self,
        _: &WorkspaceId,
        _: &[String],
        _: &[String],
    ) -> Result<(), PersistenceError> {
        Ok(())
    }
}
