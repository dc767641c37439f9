//! Where workspace graphs are stored. The registry ([`crate::KnowledgeGraphs`]) calls these
//! methods after validating a change and before making it visible, so a change that cannot be
//! stored is never seen. The product implements this with the store (`store_adapter`); tests,
//! benchmarks and the conformance fixture use [`InMemoryOnly`].

use async_trait::async_trait;
use switchboard_core::WorkspaceId;
use switchboard_kg::{KnowledgeGraph, ObjectRecord, RelationshipRecord, SchemaUpdate};

/// Storing or loading a graph failed; the change was not applied.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PersistenceError {
    #[error("knowledge graph storage failed: {0}")]
    Failed(String),
    /// Another process (a replica on the same database) stored a change after the generation
    /// this one was planned against: nothing was stored; reload and plan again.
    #[error("the knowledge graph was changed by another process meanwhile")]
    Stale,
}

/// A stored graph and its generation (moved on by every stored change, whichever process
/// made it).
#[derive(Debug)]
pub struct LoadedGraph {
    pub graph: KnowledgeGraph,
    pub generation: u64,
}

/// Each change names the generation its plan was made against and is stored only if the
/// stored graph is still of that generation ([`PersistenceError::Stale`] otherwise).
#[async_trait]
pub trait GraphPersistence: Send + Sync + 'static {
    /// The stored graph of a workspace; `None` when it never stored one.
    async fn load_graph(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Option<LoadedGraph>, PersistenceError>;

    /// The stored generation when other processes may change the graph (replicas sharing a
    /// PostgreSQL database), for readers to catch up first; `None` when only this process
    /// writes it (there is nothing to check).
    async fn shared_generation(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Option<u64>, PersistenceError>;

    /// Stores a whole graph for a workspace that has none yet (the sample dataset): its
    /// generation, or `None`, storing nothing, when the workspace already has a graph.
    async fn save_new_graph(
        &self,
        workspace_id: &WorkspaceId,
        graph: &KnowledgeGraph,
    ) -> Result<Option<u64>, PersistenceError>;

    async fn save_schema_update(
        &self,
        workspace_id: &WorkspaceId,
        expected_generation: u64,
        update: &SchemaUpdate,
    ) -> Result<(), PersistenceError>;

    /// Inserts new objects, then new relationships, atomically.
    async fn save_records(
        &self,
        workspace_id: &WorkspaceId,
        expected_generation: u64,
        objects: &[ObjectRecord],
        relationships: &[RelationshipRecord],
    ) -> Result<(), PersistenceError>;

    /// Deletes relationships, then objects, atomically.
    async fn delete_records(
        &self,
        workspace_id: &WorkspaceId,
        expected_generation: u64,
        object_ids: &[String],
        relationship_ids: &[String],
    ) -> Result<(), PersistenceError>;
}

/// Keeps graphs in memory only (nothing survives a restart).
#[derive(Debug, Default, Clone, Copy)]
pub struct InMemoryOnly;

#[async_trait]
impl GraphPersistence for InMemoryOnly {
    async fn load_graph(&self, _: &WorkspaceId) -> Result<Option<LoadedGraph>, PersistenceError> {
        Ok(None)
    }

    async fn shared_generation(&self, _: &WorkspaceId) -> Result<Option<u64>, PersistenceError> {
        Ok(None)
    }

    async fn save_new_graph(
        &self,
        _: &WorkspaceId,
        _: &KnowledgeGraph,
    ) -> Result<Option<u64>, PersistenceError> {
        Ok(Some(1))
    }

    async fn save_schema_update(
        &self,
        _: &WorkspaceId,
        _: u64,
        _: &SchemaUpdate,
    ) -> Result<(), PersistenceError> {
        Ok(())
    }

    async fn save_records(
        &self,
        _: &WorkspaceId,
        _: u64,
        _: &[ObjectRecord],
        _: &[RelationshipRecord],
    ) -> Result<(), PersistenceError> {
        Ok(())
    }

    async fn delete_records(
        &self,
        _: &WorkspaceId,
        _: u64,
        _: &[String],
        _: &[String],
    ) -> Result<(), PersistenceError> {
        Ok(())
    }
}
