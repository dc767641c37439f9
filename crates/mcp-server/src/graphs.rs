//! The in-memory graphs of all workspaces, loaded from persistence on first use, and the only
//! way to change them: every change is validated (plan), stored, then made visible (commit),
//! one writer per workspace at a time. Readers never wait for storage.
//!
//! Used by the MCP tools and by the admin HTTP routes alike, so both see the same graph.

use crate::answer_cache::AnswerCache;
use crate::config::CacheLifetimes;
use crate::persistence::{GraphPersistence, InMemoryOnly, PersistenceError};
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard};
use switchboard_core::WorkspaceId;
use switchboard_kg::{
    ImportPlan, KgError, KnowledgeGraph, NewObject, NewRelationship, ObjectDeletion, ObjectRecord,
    RelationshipRecord, Schema, SchemaEdit, SchemaUpdate, sample_graph,
};
use tokio::sync::{Mutex as AsyncMutex, broadcast};

/// The time stamped on changes: microsecond precision, as the store keeps it, so a graph reads
/// back identical from storage.
fn now() -> DateTime<Utc> {
    let now = Utc::now();
    now.duration_trunc(TimeDelta::microseconds(1))
        .unwrap_or(now)
}

/// Why a graph operation failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GraphError {
    #[error(transparent)]
    Kg(#[from] KgError),
    #[error(transparent)]
    Storage(#[from] PersistenceError),
}

/// Something changed in a workspace's graph (for resource subscriptions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphEvent {
    SchemaChanged {
        workspace_id: WorkspaceId,
        version: String,
        changed_types: Vec<String>,
    },
    DataChanged {
        workspace_id: WorkspaceId,
        object_types: Vec<String>,
    },
}

struct Shared {
    persistence: Arc<dyn GraphPersistence>,
    lifetimes: CacheLifetimes,
    events: broadcast::Sender<GraphEvent>,
}

/// Every workspace's graph. Cheap to clone.
#[derive(Clone)]
pub struct KnowledgeGraphs {
    shared: Arc<Shared>,
    workspaces: Arc<RwLock<HashMap<WorkspaceId, Arc<WorkspaceGraph>>>>,
    loading: Arc<AsyncMutex<()>>,
}

impl std::fmt::Debug for KnowledgeGraphs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let loaded = self
            .workspaces
            .read()
            .map(|map| map.len())
            .unwrap_or_default();
        f.debug_struct("KnowledgeGraphs")
            .field("loaded_workspaces", &loaded)
            .finish_non_exhaustive()
    }
}

impl KnowledgeGraphs {
    pub fn new(persistence: Arc<dyn GraphPersistence>, lifetimes: CacheLifetimes) -> Self {
        let (events, _) = broadcast::channel(256);
        Self {
            shared: Arc::new(Shared {
                persistence,
                lifetimes,
                events,
            }),
            workspaces: Arc::default(),
            loading: Arc::default(),
        }
    }

    /// Graphs that live only in memory.
    pub fn in_memory() -> Self {
        Self::new(Arc::new(InMemoryOnly), CacheLifetimes::default())
    }

    pub fn subscribe(&self) -> broadcast::Receiver<GraphEvent> {
        self.shared.events.subscribe()
    }

    /// The workspace's graph, loading it on first use (an empty graph if none is stored).
    pub async fn workspace(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Arc<WorkspaceGraph>, GraphError> {
        if let Some(graph) = self
            .workspaces
            .read()
            .expect("graphs lock")
            .get(workspace_id)
        {
            return Ok(graph.clone());
        }
        let _loading = self.loading.lock().await;
        if let Some(graph) = self
            .workspaces
            .read()
            .expect("graphs lock")
            .get(workspace_id)
        {
            return Ok(graph.clone());
        }
        let graph = self
            .shared
            .persistence
            .load_graph(workspace_id)
            .await?
            .unwrap_or_default();
        Ok(self.install(workspace_id, graph))
    }

    /// Loads the sample dataset into `workspace_id` unless it already has a stored graph.
    /// Returns whether the sample was loaded.
    pub async fn load_sample_if_empty(
        &self,
        workspace_id: &WorkspaceId,
        now: DateTime<Utc>,
    ) -> Result<bool, GraphError> {
        let _loading = self.loading.lock().await;
        if self
            .shared
            .persistence
            .load_graph(workspace_id)
            .await?
            .is_some()
        {
            return Ok(false);
        }
        let now = now
            .duration_trunc(TimeDelta::microseconds(1))
            .unwrap_or(now);
        let sample = sample_graph(now);
        if !self
            .shared
            .persistence
            .save_new_graph(workspace_id, &sample)
            .await?
        {
            return Ok(false);
        }
        self.install(workspace_id, sample);
        Ok(true)
    }

    fn install(&self, workspace_id: &WorkspaceId, graph: KnowledgeGraph) -> Arc<WorkspaceGraph> {
        let workspace_graph = Arc::new(WorkspaceGraph {
            workspace_id: workspace_id.clone(),
            graph: RwLock::new(graph),
            writer: AsyncMutex::new(()),
            answers: AnswerCache::new(self.shared.lifetimes),
            shared: self.shared.clone(),
        });
        self.workspaces
            .write()
            .expect("graphs lock")
            .insert(workspace_id.clone(), workspace_graph.clone());
        workspace_graph
    }
}

/// One workspace's graph with its answer cache.
pub struct WorkspaceGraph {
    workspace_id: WorkspaceId,
    graph: RwLock<KnowledgeGraph>,
    /// Serializes plan → store → commit so a plan is never stale when committed.
    writer: AsyncMutex<()>,
    answers: AnswerCache,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for WorkspaceGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceGraph")
            .field("workspace_id", &self.workspace_id)
            .finish_non_exhaustive()
    }
}

impl WorkspaceGraph {
    pub fn workspace_id(&self) -> &WorkspaceId {
        &self.workspace_id
    }

    /// Read access. Do not hold it across an `.await`.
    pub fn read(&self) -> RwLockReadGuard<'_, KnowledgeGraph> {
        self.graph.read().expect("graph lock")
    }

    pub fn answers(&self) -> &AnswerCache {
        &self.answers
    }

    /// Replaces the whole schema; `None` when nothing changed.
    pub async fn apply_schema(
        &self,
        schema: Schema,
        message: Option<String>,
    ) -> Result<Option<SchemaUpdate>, GraphError> {
        let _writer = self.writer.lock().await;
        let update = self.read().plan_schema(schema, now(), message)?;
        self.commit_schema_update(update).await
    }

    /// Applies one targeted schema edit; `None` when nothing changed.
    pub async fn edit_schema(
        &self,
        edit: SchemaEdit,
        message: Option<String>,
    ) -> Result<Option<SchemaUpdate>, GraphError> {
        let _writer = self.writer.lock().await;
        let update = self.read().plan_schema_edit(edit, now(), message)?;
        self.commit_schema_update(update).await
    }

    async fn commit_schema_update(
        &self,
        update: Option<SchemaUpdate>,
    ) -> Result<Option<SchemaUpdate>, GraphError> {
        let Some(update) = update else {
            return Ok(None);
        };
        self.shared
            .persistence
            .save_schema_update(&self.workspace_id, &update)
            .await?;
        {
            let mut graph = self.graph.write().expect("graph lock");
            graph.commit_schema(update.clone());
            self.answers.invalidate();
        }
        let mut changed_types: Vec<String> = update
            .changes
            .iter()
            .filter_map(|entry| entry.change.type_name.clone())
            .collect();
        changed_types.sort();
        changed_types.dedup();
        let _ = self.shared.events.send(GraphEvent::SchemaChanged {
            workspace_id: self.workspace_id.clone(),
            version: update.version.version.clone(),
            changed_types,
        });
        Ok(Some(update))
    }

    pub async fn create_object(&self, new_object: NewObject) -> Result<ObjectRecord, GraphError> {
        let _writer = self.writer.lock().await;
        let object = self.read().plan_object(new_object, now())?;
        self.shared
            .persistence
            .save_records(&self.workspace_id, std::slice::from_ref(&object), &[])
            .await?;
        self.graph
            .write()
            .expect("graph lock")
            .insert_object(object.clone());
        self.data_changed(vec![object.object_type.clone()]);
        Ok(object)
    }

    pub async fn create_relationship(
        &self,
        new_relationship: NewRelationship,
    ) -> Result<RelationshipRecord, GraphError> {
        let _writer = self.writer.lock().await;
        let relationship = self.read().plan_relationship(new_relationship, now())?;
        self.shared
            .persistence
            .save_records(&self.workspace_id, &[], std::slice::from_ref(&relationship))
            .await?;
        let types = self.endpoint_types(&relationship);
        self.graph
            .write()
            .expect("graph lock")
            .insert_relationship(relationship.clone());
        self.data_changed(types);
        Ok(relationship)
    }

    pub async fn delete_object(&self, id: &str) -> Result<ObjectDeletion, GraphError> {
        let _writer = self.writer.lock().await;
        let deletion = self.read().plan_delete_object(id)?;
        let relationship_ids: Vec<String> = deletion
            .relationships
            .iter()
            .map(|r| r.id.clone())
            .collect();
        self.shared
            .persistence
            .delete_records(
                &self.workspace_id,
                std::slice::from_ref(&deletion.object.id),
                &relationship_ids,
            )
            .await?;
        self.graph.write().expect("graph lock").delete_object(id)?;
        self.data_changed(vec![deletion.object.object_type.clone()]);
        Ok(deletion)
    }

    pub async fn delete_relationship(&self, id: &str) -> Result<RelationshipRecord, GraphError> {
        let _writer = self.writer.lock().await;
        let relationship = self.read().plan_delete_relationship(id)?;
        self.shared
            .persistence
            .delete_records(
                &self.workspace_id,
                &[],
                std::slice::from_ref(&relationship.id),
            )
            .await?;
        let types = self.endpoint_types(&relationship);
        self.graph
            .write()
            .expect("graph lock")
            .delete_relationship(id)?;
        self.data_changed(types);
        Ok(relationship)
    }

    /// Adds all objects and relationships, or none.
    pub async fn import(
        &self,
        objects: Vec<NewObject>,
        relationships: Vec<NewRelationship>,
    ) -> Result<ImportPlan, GraphError> {
        let _writer = self.writer.lock().await;
        let plan = self.read().plan_import(objects, relationships, now())?;
        self.shared
            .persistence
            .save_records(&self.workspace_id, &plan.objects, &plan.relationships)
            .await?;
        let mut types: Vec<String> = plan.objects.iter().map(|o| o.object_type.clone()).collect();
        types.sort();
        types.dedup();
        self.graph
            .write()
            .expect("graph lock")
            .commit_import(plan.clone());
        self.data_changed(types);
        Ok(plan)
    }

    fn endpoint_types(&self, relationship: &RelationshipRecord) -> Vec<String> {
        let graph = self.read();
        [&relationship.from_id, &relationship.to_id]
            .into_iter()
            .filter_map(|id| graph.object(id).map(|object| object.object_type.clone()))
            .collect()
    }

    fn data_changed(&self, object_types: Vec<String>) {
        let _ = self.shared.events.send(GraphEvent::DataChanged {
            workspace_id: self.workspace_id.clone(),
            object_types,
        });
    }
}
