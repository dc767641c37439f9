//! `/api/kg`: the workspace's knowledge graph over our JSON API. Reading the schema and its
//! versions needs `schema:read`; editing the schema and importing, exporting or deleting
//! objects and relationships needs `data:write` (or `admin`, which implies it). Every change
//! goes through the same graphs the `/mcp` endpoint serves, so its answers follow at once.

use crate::auth::{Scoped, scopes};
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use switchboard_core::Principal;
use switchboard_kg::{
    ChangelogEntry, GraphData, ImportSummary, KgError, KgErrorKind, NewObject, NewRelationship,
    Schema, SchemaEdit, SchemaUpdate, SchemaVersion,
};
use switchboard_mcp_server::{GraphError, WorkspaceGraph};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/kg/schema", get(get_schema).put(replace_schema))
        .route("/kg/schema/edits", post(edit_schema))
        .route("/kg/versions", get(list_versions))
        .route("/kg/export", get(export_graph))
        .route("/kg/import", post(import_graph))
        .route("/kg/objects/{object_id}", delete(delete_object))
        .route(
            "/kg/relationships/{relationship_id}",
            delete(delete_relationship),
        )
}

impl From<GraphError> for ApiError {
    fn from(error: GraphError) -> Self {
        match error {
            GraphError::Kg(error) => kg_error(error),
            GraphError::Storage(error) => ApiError::internal(error),
        }
    }
}

fn kg_error(error: KgError) -> ApiError {
    match error.kind() {
        KgErrorKind::NotFound => ApiError::NotFound(error.to_string()),
        KgErrorKind::Invalid => ApiError::Unprocessable(error.to_string()),
        KgErrorKind::Conflict => ApiError::Conflict(error.to_string()),
    }
}

async fn graph_of(
    state: &AppState,
    principal: &Principal,
) -> Result<Arc<WorkspaceGraph>, ApiError> {
    Ok(state.kg.graphs().workspace(&principal.workspace_id).await?)
}

/// `GET /api/kg/schema` answer.
#[derive(Debug, Serialize)]
pub struct SchemaView {
    /// `None` before the first schema version.
    pub version: Option<SchemaVersion>,
    pub schema: Schema,
}

async fn get_schema(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::SchemaRead>,
) -> Result<Json<SchemaView>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let knowledge = graph.read();
    Ok(Json(SchemaView {
        version: knowledge.history().current().cloned(),
        schema: knowledge.schema().clone(),
    }))
}

/// `PUT /api/kg/schema` body: the whole new schema.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplaceSchemaRequest {
    pub schema: Schema,
    /// Why the schema changed, kept with the version.
    #[serde(default)]
    pub message: Option<String>,
}

/// The answer to a schema change: whether a version was created, and which.
#[derive(Debug, Serialize)]
pub struct SchemaChangeView {
    pub changed: bool,
    pub version: Option<SchemaVersion>,
    pub changes: Vec<ChangelogEntry>,
}

impl From<Option<SchemaUpdate>> for SchemaChangeView {
    fn from(update: Option<SchemaUpdate>) -> Self {
        match update {
            Some(update) => Self {
                changed: true,
                version: Some(update.version),
                changes: update.changes,
            },
            None => Self {
                changed: false,
                version: None,
                changes: Vec::new(),
            },
        }
    }
}

async fn replace_schema(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::DataWrite>,
    Json(request): Json<ReplaceSchemaRequest>,
) -> Result<Json<SchemaChangeView>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let update = graph.apply_schema(request.schema, request.message).await?;
    Ok(Json(update.into()))
}

/// `POST /api/kg/schema/edits` body: one targeted edit, e.g.
/// `{"edit": {"op": "upsert_object_type", "object_type": {...}}, "message": "…"}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditSchemaRequest {
    pub edit: SchemaEdit,
    #[serde(default)]
    pub message: Option<String>,
}

async fn edit_schema(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::DataWrite>,
    Json(request): Json<EditSchemaRequest>,
) -> Result<Json<SchemaChangeView>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let update = graph.edit_schema(request.edit, request.message).await?;
    Ok(Json(update.into()))
}

async fn list_versions(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::SchemaRead>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let knowledge = graph.read();
    let versions: Vec<&SchemaVersion> = knowledge.history().versions().rev().collect();
    Ok(Json(serde_json::json!({ "versions": versions })))
}

/// `GET /api/kg/export` answer: the data, with the schema version it was valid under.
#[derive(Debug, Serialize)]
pub struct ExportView {
    pub schema_version: Option<String>,
    #[serde(flatten)]
    pub data: GraphData,
}

async fn export_graph(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::DataWrite>,
) -> Result<Json<ExportView>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let knowledge = graph.read();
    Ok(Json(ExportView {
        schema_version: knowledge.history().current().map(|v| v.version.clone()),
        data: knowledge.export(),
    }))
}

/// `POST /api/kg/import` body: objects (created first) and relationships, all or nothing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    #[serde(default)]
    pub objects: Vec<NewObject>,
    #[serde(default)]
    pub relationships: Vec<NewRelationship>,
}

async fn import_graph(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::DataWrite>,
    Json(request): Json<ImportRequest>,
) -> Result<(StatusCode, Json<ImportSummary>), ApiError> {
    if request.objects.is_empty() && request.relationships.is_empty() {
        return Err(ApiError::Unprocessable(
            "nothing to import: `objects` and `relationships` are both empty".into(),
        ));
    }
    let graph = graph_of(&state, &principal).await?;
    let plan = graph.import(request.objects, request.relationships).await?;
    Ok((StatusCode::CREATED, Json(plan.summary())))
}

async fn delete_object(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::DataWrite>,
    Path(object_id): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let deletion = graph.delete_object(&object_id).await?;
    Ok(Json(serde_json::json!({
        "deleted_object": deletion.object.id,
        "deleted_relationships": deletion.relationships.len(),
    })))
}

async fn delete_relationship(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::DataWrite>,
    Path(relationship_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    graph
        .delete_relationship(&relationship_id)
        .await
        .map_err(|error| match error {
            GraphError::Kg(KgError::InvalidArgument { message }) => ApiError::NotFound(message),
            other => other.into(),
        })?;
    Ok(StatusCode::NO_CONTENT)
}
