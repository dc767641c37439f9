//! `/api/kg`: the workspace's knowledge graph over our JSON API. Reading the schema and its
//! versions needs `schema:read`; editing the schema and importing, exporting or deleting
//! objects and relationships needs `data:write` (or `admin`, which implies it). Every change
//! goes through the same graphs the `/mcp` endpoint serves, so its answers follow at once.
//! The web UI's Knowledge graph page reads through here (see [`changelog`] for why).
//! The shapes are in `wire` (mirrors of `kg`'s types, so `kg` stays free of HTTP concerns).

mod changelog;
mod convert;
mod wire;

pub use changelog::ChangelogView;
pub use wire::*;

use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use switchboard_core::Principal;
use switchboard_kg::{KgError, KgErrorKind, SchemaUpdate};
use switchboard_mcp_server::{GraphError, WorkspaceGraph};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_schema, replace_schema))
        .routes(routes!(edit_schema))
        .routes(routes!(list_versions))
        .routes(routes!(changelog::schema_changelog))
        .routes(routes!(export_graph))
        .routes(routes!(import_graph))
        .routes(routes!(delete_object))
        .routes(routes!(delete_relationship))
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
#[derive(Debug, Serialize, ToSchema)]
pub struct SchemaView {
    /// `null` before the first schema version.
    pub version: Option<SchemaVersion>,
    pub schema: Schema,
}

/// Read the current schema and its version.
#[utoipa::path(
    get,
    path = "/kg/schema",
    tag = "kg",
    responses(
        (status = 200, description = "The current schema", body = SchemaView),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `schema:read`", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn get_schema(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::SchemaRead>,
) -> Result<Json<SchemaView>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let knowledge = graph.read();
    Ok(Json(SchemaView {
        version: knowledge.history().current().cloned().map(Into::into),
        schema: knowledge.schema().clone().into(),
    }))
}

/// `PUT /api/kg/schema` body: the whole new schema.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceSchemaRequest {
    pub schema: Schema,
    /// Why the schema changed, kept with the version.
    #[serde(default)]
    pub message: Option<String>,
}

/// The answer to a schema change: whether a version was created, and which.
#[derive(Debug, Serialize, ToSchema)]
pub struct SchemaChangeView {
    /// `false` when the schema was already so (no new version).
    pub changed: bool,
    pub version: Option<SchemaVersion>,
    pub changes: Vec<ChangelogEntry>,
}

impl From<Option<SchemaUpdate>> for SchemaChangeView {
    fn from(update: Option<SchemaUpdate>) -> Self {
        match update {
            Some(update) => Self {
                changed: true,
                version: Some(update.version.into()),
                changes: update.changes.into_iter().map(Into::into).collect(),
            },
            None => Self {
                changed: false,
                version: None,
                changes: Vec::new(),
            },
        }
    }
}

/// Replace the whole schema; a new version when it differs.
#[utoipa::path(
    put,
    path = "/kg/schema",
    tag = "kg",
    request_body = ReplaceSchemaRequest,
    responses(
        (status = 200, description = "The change, if any", body = SchemaChangeView),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `data:write`", body = ErrorBody),
        (status = 409, description = "Existing data would break under the new schema", body = ErrorBody),
        (status = 422, description = "An inconsistent schema", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn replace_schema(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::DataWrite>,
    Json(request): Json<ReplaceSchemaRequest>,
) -> Result<Json<SchemaChangeView>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let update = graph
        .apply_schema(request.schema.into(), request.message)
        .await?;
    Ok(Json(update.into()))
}

/// `POST /api/kg/schema/edits` body: one targeted edit, e.g.
/// `{"edit": {"op": "upsert_object_type", "object_type": {...}}, "message": "…"}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditSchemaRequest {
    pub edit: SchemaEdit,
    /// Why the schema changed, kept with the version.
    #[serde(default)]
    pub message: Option<String>,
}

/// Apply one targeted edit to the schema.
#[utoipa::path(
    post,
    path = "/kg/schema/edits",
    tag = "kg",
    request_body = EditSchemaRequest,
    responses(
        (status = 200, description = "The change, if any", body = SchemaChangeView),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `data:write`", body = ErrorBody),
        (status = 404, description = "The edit removes a type that does not exist", body = ErrorBody),
        (status = 409, description = "Existing data would break under the edited schema", body = ErrorBody),
        (status = 422, description = "The edited schema is inconsistent", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn edit_schema(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::DataWrite>,
    Json(request): Json<EditSchemaRequest>,
) -> Result<Json<SchemaChangeView>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let update = graph
        .edit_schema(request.edit.into(), request.message)
        .await?;
    Ok(Json(update.into()))
}

/// `GET /api/kg/versions` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct VersionList {
    /// Newest first.
    pub versions: Vec<SchemaVersion>,
}

/// List the schema's versions, newest first.
#[utoipa::path(
    get,
    path = "/kg/versions",
    tag = "kg",
    responses(
        (status = 200, description = "Every version", body = VersionList),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `schema:read`", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn list_versions(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::SchemaRead>,
) -> Result<Json<VersionList>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let knowledge = graph.read();
    Ok(Json(VersionList {
        versions: knowledge
            .history()
            .versions()
            .rev()
            .cloned()
            .map(Into::into)
            .collect(),
    }))
}

/// `GET /api/kg/export` answer: the data, with the schema version it was valid under.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExportView {
    /// `null` before the first schema version.
    pub schema_version: Option<String>,
    pub objects: Vec<ObjectRecord>,
    pub relationships: Vec<RelationshipRecord>,
}

/// Export every object and relationship.
#[utoipa::path(
    get,
    path = "/kg/export",
    tag = "kg",
    responses(
        (status = 200, description = "The whole graph", body = ExportView),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `data:write`", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn export_graph(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::DataWrite>,
) -> Result<Json<ExportView>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let knowledge = graph.read();
    let data = knowledge.export();
    Ok(Json(ExportView {
        schema_version: knowledge.history().current().map(|v| v.version.clone()),
        objects: data.objects.into_iter().map(Into::into).collect(),
        relationships: data.relationships.into_iter().map(Into::into).collect(),
    }))
}

/// `POST /api/kg/import` body: objects (created first) and relationships, all or nothing.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    #[serde(default)]
    pub objects: Vec<NewObject>,
    #[serde(default)]
    pub relationships: Vec<NewRelationship>,
}

/// Import objects and relationships, all or nothing.
#[utoipa::path(
    post,
    path = "/kg/import",
    tag = "kg",
    request_body = ImportRequest,
    responses(
        (status = 201, description = "Everything was created", body = ImportSummary),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `data:write`", body = ErrorBody),
        (status = 404, description = "A record names a type or an object that does not exist", body = ErrorBody),
        (status = 409, description = "An id is taken", body = ErrorBody),
        (status = 422, description = "Nothing to import, or records the schema refuses (every problem listed)", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
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
    let plan = graph
        .import(
            request.objects.into_iter().map(Into::into).collect(),
            request.relationships.into_iter().map(Into::into).collect(),
        )
        .await?;
    Ok((StatusCode::CREATED, Json(plan.summary().into())))
}

/// `DELETE /api/kg/objects/{object_id}` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ObjectDeletionView {
    /// The deleted object's id.
    pub deleted_object: String,
    /// How many relationships went with it.
    pub deleted_relationships: usize,
}

/// Delete an object and its relationships.
#[utoipa::path(
    delete,
    path = "/kg/objects/{object_id}",
    tag = "kg",
    params(("object_id" = String, Path, description = "The object's id")),
    responses(
        (status = 200, description = "What was deleted", body = ObjectDeletionView),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `data:write`", body = ErrorBody),
        (status = 404, description = "No such object", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn delete_object(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::DataWrite>,
    Path(object_id): Path<String>,
) -> Result<Json<ObjectDeletionView>, ApiError> {
    let graph = graph_of(&state, &principal).await?;
    let deletion = graph.delete_object(&object_id).await?;
    Ok(Json(ObjectDeletionView {
        deleted_object: deletion.object.id,
        deleted_relationships: deletion.relationships.len(),
    }))
}

/// Delete a relationship.
#[utoipa::path(
    delete,
    path = "/kg/relationships/{relationship_id}",
    tag = "kg",
    params(("relationship_id" = String, Path, description = "The relationship's id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `data:write`", body = ErrorBody),
        (status = 404, description = "No such relationship", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
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
