//! The in-memory graphs of all workspaces, loaded from persistence on first use, and the only
//! way to change them: every change is validated (plan), stored, then made visible (commit),
//! one writer per workspace at a time. Readers never wait for storage.
//!
//! Replicas sharing a database each hold their own copy, kept coherent by the stored graph's
//! generation: a change is stored only from the generation its plan was made against (else it
//! is planned again on the reloaded graph, so no replica's change is lost or made on a stale
//! graph), and a workspace's graph is reloaded before use when the stored generation is ahead
//! of it (one indexed read per use, only where the database is shared).
//!
//! Used by the MCP tools and by the admin HTTP routes alike, so both see the same graph.

use crate::answer_cache::AnswerCache;
use crate::config::CacheLifetimes;
use crate::persistence::{GraphPersistence, InMemoryOnly, PersistenceError};
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
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
        let cached = self
            .workspaces
            .read()
            .expect("graphs lock")
            .get(workspace_id)
            .cloned();
        if let Some(graph) = cached {
            graph.catch_up().await?;
            return Ok(graph);
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
        let loaded = self.shared.persistence.load_graph(workspace_id).await?;
        let (graph, generation) =
            loaded.map_or_else(Default::default, |loaded| (loaded.graph, loaded.generation));
        Ok(self.install(workspace_id, graph, generation))
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
        let Some(generation) = self
            .shared
            .persistence
            .save_new_graph(workspace_id, &sample)
            .await?
        else {
            return Ok(false);
        };
        self.install(workspace_id, sample, generation);
        Ok(true)
    }

    fn install(
        &self,
        workspace_id: &WorkspaceId,
        graph: KnowledgeGraph,
        generation: u64,
    ) -> Arc<WorkspaceGraph> {
        let workspace_graph = Arc::new(WorkspaceGraph {
            workspace_id: workspace_id.clone(),
            graph: RwLock::new(graph),
            generation: AtomicU64::new(generation),
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
    /// The stored generation `graph` is of (moved on by each change this process stores).
    generation: AtomicU64,
    /// Serializes plan → store → commit (and reloads) so a plan is never stale when committed.
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

    /// Catches up with changes another process stored (a replica on the same database): the
    /// graph is reloaded when the stored generation is ahead of it. No query where only this
    /// process writes.
    async fn catch_up(&self) -> Result<(), GraphError> {
        let Some(stored) = self
            .shared
            .persistence
            .shared_generation(&self.workspace_id)
            .await?
        else {
            return Ok(());
        };
        if stored <= self.generation.load(Ordering::SeqCst) {
            return Ok(());
        }
        let _writer = self.writer.lock().await;
        if stored <= self.generation.load(Ordering::SeqCst) {
            return Ok(());
        }
        self.reload().await
    }

    /// Replaces the graph with the stored one; the writer lock must be held. Cached answers
    /// are dropped.
    async fn reload(&self) -> Result<(), GraphError> {
        let loaded = self
            .shared
            .persistence
            .load_graph(&self.workspace_id)
            .await?;
        let (graph, generation) =
            loaded.map_or_else(Default::default, |loaded| (loaded.graph, loaded.generation));
        *self.graph.write().expect("graph lock") = graph;
        self.generation.store(generation, Ordering::SeqCst);
        self.answers.invalidate();
        tracing::debug!(workspace_id = %self.workspace_id, generation, "reloaded the knowledge graph another process changed");
        Ok(())
    }

    /// Plans a change on the graph and stores it from the graph's generation; when another
    /// process stored a change first, reloads and plans again (a few times at most). The
    /// writer lock must be held; the caller makes the stored plan visible. `store` gives no
    /// future when the plan changes nothing (nothing is stored, the generation stays).
    async fn store_planned<P>(
        &self,
        plan: impl Fn(&KnowledgeGraph) -> Result<P, KgError>,
        store: impl for<'p> Fn(
            &'p dyn GraphPersistence,
            &'p WorkspaceId,
            &'p P,
            u64,
        ) -> Option<StoreFuture<'p>>,
    ) -> Result<P, GraphError> {
        let mut attempts = 0;
        loop {
            let planned = plan(&self.read())?;
            let generation = self.generation.load(Ordering::SeqCst);
            let persistence = self.shared.persistence.as_ref();
            let Some(stored) = store(persistence, &self.workspace_id, &planned, generation) else {
                return Ok(planned);
            };
            match stored.await {
                Ok(()) => {
                    self.generation.store(generation + 1, Ordering::SeqCst);
                    return Ok(planned);
                }
                Err(PersistenceError::Stale) if attempts < STALE_RETRIES => {
                    attempts += 1;
                    self.reload().await?;
                }
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// Replaces the whole schema; `None` when nothing changed.
    pub async fn apply_schema(
        &self,
        schema: Schema,
        message: Option<String>,
    ) -> Result<Option<SchemaUpdate>, GraphError> {
        self.change_schema(|graph, at| graph.plan_schema(schema.clone(), at, message.clone()))
            .await
    }

    /// Applies one targeted schema edit; `None` when nothing changed.
    pub async fn edit_schema(
        &self,
        edit: SchemaEdit,
        message: Option<String>,
    ) -> Result<Option<SchemaUpdate>, GraphError> {
        self.change_schema(|graph, at| graph.plan_schema_edit(edit.clone(), at, message.clone()))
            .await
    }

    /// Plans a schema change (`plan`, given the graph and the change's time), stores it and
    /// makes it visible, under the writer lock; `None` when nothing changed.
    async fn change_schema(
        &self,
        plan: impl Fn(&KnowledgeGraph, DateTime<Utc>) -> Result<Option<SchemaUpdate>, KgError>,
    ) -> Result<Option<SchemaUpdate>, GraphError> {
        let _writer = self.writer.lock().await;
        let at = now();
        let update = self
            .store_planned(|graph| plan(graph, at), store_schema_update)
            .await?;
        Ok(self.commit_schema_update(update))
    }

    /// Makes a stored schema update visible.
    fn commit_schema_update(&self, update: Option<SchemaUpdate>) -> Option<SchemaUpdate> {
        let update = update?;
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
        Some(update)
    }

    pub async fn create_object(&self, new_object: NewObject) -> Result<ObjectRecord, GraphError> {
        let _writer = self.writer.lock().await;
        let at = now();
        let object = self
            .store_planned(
                |graph| graph.plan_object(new_object.clone(), at),
                |persistence, workspace_id, object, generation| {
                    Some(persistence.save_records(
                        workspace_id,
                        generation,
                        std::slice::from_ref(object),
                        &[],
                    ))
                },
            )
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
        let at = now();
        let relationship = self
            .store_planned(
                |graph| graph.plan_relationship(new_relationship.clone(), at),
                |persistence, workspace_id, relationship, generation| {
                    Some(persistence.save_records(
                        workspace_id,
                        generation,
                        &[],
                        std::slice::from_ref(relationship),
                    ))
                },
            )
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
        let deletion = self
            .store_planned(
                |graph| graph.plan_delete_object(id),
                |persistence, workspace_id, deletion, generation| {
                    let relationship_ids: Vec<String> = deletion
                        .relationships
                        .iter()
                        .map(|r| r.id.clone())
                        .collect();
                    let object_ids = std::slice::from_ref(&deletion.object.id);
                    Some(Box::pin(async move {
                        persistence
                            .delete_records(workspace_id, generation, object_ids, &relationship_ids)
                            .await
                    }))
                },
            )
            .await?;
        self.graph.write().expect("graph lock").delete_object(id)?;
        self.data_changed(vec![deletion.object.object_type.clone()]);
        Ok(deletion)
    }

    pub async fn delete_relationship(&self, id: &str) -> Result<RelationshipRecord, GraphError> {
        let _writer = self.writer.lock().await;
        let relationship = self
            .store_planned(
                |graph| graph.plan_delete_relationship(id),
                |persistence, workspace_id, relationship, generation| {
                    Some(persistence.delete_records(
                        workspace_id,
                        generation,
                        &[],
                        std::slice::from_ref(&relationship.id),
                    ))
                },
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
        let at = now();
        let plan = self
            .store_planned(
                |graph| graph.plan_import(objects.clone(), relationships.clone(), at),
                |persistence, workspace_id, plan, generation| {
                    Some(persistence.save_records(
                        workspace_id,
                        generation,
                        &plan.objects,
                        &plan.relationships,
                    ))
                },
            )
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

/// How many times a change is planned again after another process stored one first.
const STALE_RETRIES: u32 = 20;

/// A store of a planned change (see [`WorkspaceGraph::store_planned`]).
type StoreFuture<'p> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), PersistenceError>> + Send + 'p>>;

/// Stores a schema update (none when the plan changed nothing).
fn store_schema_update<'p>(
    persistence: &'p dyn GraphPersistence,
    workspace_id: &'p WorkspaceId,
    update: &'p Option<SchemaUpdate>,
    generation: u64,
) -> Option<StoreFuture<'p>> {
    let update = update.as_ref()?;
    Some(persistence.save_schema_update(workspace_id, generation, update))
}
