//! `meta.schemaContext` of the chat stream from the knowledge graph: the chat engine does not
//! know the graph, so the HTTP layer, which holds both, plugs this source into it.

use switchboard_chat::{SchemaContext, SchemaContextSource};
use switchboard_core::WorkspaceId;
use switchboard_mcp_server::KnowledgeGraphService;

/// The workspace graph's current schema version, type count and when it was made.
#[derive(Clone, Debug)]
pub struct KgSchemaContext {
    kg: KnowledgeGraphService,
}

impl KgSchemaContext {
    pub fn new(kg: KnowledgeGraphService) -> Self {
        Self { kg }
    }
}

#[async_trait::async_trait]
impl SchemaContextSource for KgSchemaContext {
    async fn schema_context(&self, workspace_id: &WorkspaceId) -> Option<SchemaContext> {
        let graph = match self.kg.graphs().workspace(workspace_id).await {
            Ok(graph) => graph,
            Err(error) => {
                tracing::warn!(%error, "the schema context of an answer could not be read");
                return None;
            }
        };
        let knowledge = graph.read();
        let current = knowledge.history().current()?;
        Some(SchemaContext {
            version: current.version.clone(),
            type_count: current.object_type_count,
            last_modified: current.created_at,
        })
    }
}
