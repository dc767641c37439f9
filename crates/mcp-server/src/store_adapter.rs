//! The product's implementations of [`TokenVerifier`] and [`GraphPersistence`]: tokens are
//! checked with `Store::authenticate`, graphs live in the store's knowledge-graph tables.

use crate::auth::{TokenVerifier, VerifyError};
use crate::persistence::{GraphPersistence, LoadedGraph, PersistenceError};
use async_trait::async_trait;
use switchboard_core::{Principal, WorkspaceId};
use switchboard_kg::{
    KnowledgeGraph, ObjectRecord, RelationshipRecord, SchemaHistory, SchemaUpdate,
};
use switchboard_store::{BackendKind, Store, StoreError, StoredKnowledgeGraph};

/// Verifies bearer tokens against the store (hash lookup; revoked and expired tokens fail);
/// its revocation epoch is the store's, so a revocation empties the endpoint's token cache.
#[derive(Clone, Debug)]
pub struct StoreTokenVerifier(pub Store);

#[async_trait]
impl TokenVerifier for StoreTokenVerifier {
    async fn verify(&self, token: &str) -> Result<Option<Principal>, VerifyError> {
        self.0
            .authenticate(token)
            .await
            .map_err(|error| VerifyError(error.to_string()))
    }

    fn revocation_epoch(&self) -> u64 {
        self.0.revocation_epoch()
    }
}

/// Keeps workspace graphs in the store.
#[derive(Clone, Debug)]
pub struct StoreGraphPersistence(pub Store);

fn storage(error: StoreError) -> PersistenceError {
    match error {
        StoreError::Conflict(_) => PersistenceError::Stale,
        other => PersistenceError::Failed(other.to_string()),
    }
}

/// The store's form of a whole graph.
pub fn stored_form(graph: &KnowledgeGraph) -> StoredKnowledgeGraph {
    let data = graph.export();
    StoredKnowledgeGraph {
        generation: 0,
        versions: graph.history().versioned_schemas().to_vec(),
        changelog: graph.history().changelog().to_vec(),
        objects: data.objects,
        relationships: data.relationships,
    }
}

#[async_trait]
impl GraphPersistence for StoreGraphPersistence {
    async fn load_graph(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Option<LoadedGraph>, PersistenceError> {
        let Some(stored) = self.0.kg_load(workspace_id).await.map_err(storage)? else {
            return Ok(None);
        };
        let history =
            SchemaHistory::from_parts(stored.versions, stored.changelog).map_err(|error| {
                PersistenceError::Failed(format!(
                    "stored schema history of {workspace_id}: {error}"
                ))
            })?;
        let graph = KnowledgeGraph::restore(history, stored.objects, stored.relationships)
            .map_err(|error| {
                PersistenceError::Failed(format!("stored graph of {workspace_id}: {error}"))
            })?;
        Ok(Some(LoadedGraph {
            graph,
            generation: stored.generation,
        }))
    }

    /// Only PostgreSQL is shared by several processes (one process per SQLite file).
    async fn shared_generation(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Option<u64>, PersistenceError> {
        if self.0.backend_kind() != BackendKind::Postgres {
            return Ok(None);
        }
        self.0
            .kg_generation(workspace_id)
            .await
            .map(Some)
            .map_err(storage)
    }

    async fn save_new_graph(
        &self,
        workspace_id: &WorkspaceId,
        graph: &KnowledgeGraph,
    ) -> Result<Option<u64>, PersistenceError> {
        self.0
            .kg_save_new_graph(workspace_id, &stored_form(graph))
            .await
            .map_err(storage)
    }

    async fn save_schema_update(
        &self,
        workspace_id: &WorkspaceId,
        expected_generation: u64,
        update: &SchemaUpdate,
    ) -> Result<(), PersistenceError> {
        self.0
            .kg_save_schema_update(workspace_id, expected_generation, update)
            .await
            .map_err(storage)
    }

    async fn save_records(
        &self,
        workspace_id: &WorkspaceId,
        expected_generation: u64,
        objects: &[ObjectRecord],
        relationships: &[RelationshipRecord],
    ) -> Result<(), PersistenceError> {
        self.0
            .kg_insert_records(workspace_id, expected_generation, objects, relationships)
            .await
            .map_err(storage)
    }

    async fn delete_records(
        &self,
        workspace_id: &WorkspaceId,
        expected_generation: u64,
        object_ids: &[String],
        relationship_ids: &[String],
    ) -> Result<(), PersistenceError> {
        self.0
            .kg_delete_records(
                workspace_id,
                expected_generation,
                object_ids,
                relationship_ids,
            )
            .await
            .map_err(storage)
    }
}
