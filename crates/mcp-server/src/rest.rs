//! The REST reads of the first design document, for clients that do not speak MCP:
//! `GET /mcp/schema/version`, `GET /mcp/schema/changelog?since=&limit=` and
//! `GET /mcp/types/{name}/schema`. Each answers what the tool of the same name answers
//! (`schema_version`, `schema_changelog`, `type_info` for one type), as a typed JSON body.
//!
//! Behind the same checks as `/mcp`, in the same order: Host/Origin (403), bearer token (401,
//! or the anonymous scopes), the tool's scope (403 naming it, as -32001 does), the per-token
//! rate limit (429 with `Retry-After`). An unknown type is 404 listing the known ones; an
//! unknown `since` version 404 listing the known versions; an unreadable `since` or `limit` 400.
//! Errors are `{"error": {"code", "message", …}}`, the shape of Switchboard's JSON API.

use crate::auth::{Authentication, Caller};
use crate::graphs::{GraphError, WorkspaceGraph};
use crate::handler::KgServerState;
use crate::http::guard::Guard;
use crate::tools::KgTool;
use crate::tools::output::{
    ChangeOutput, ChangelogOutput, RelationshipOutput, SchemaVersionOutput, TypeOutput,
};
use crate::tools::schema_tools::{DEFAULT_CHANGELOG_LIMIT, MAX_CHANGELOG_LIMIT, type_output};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use switchboard_kg::{ChangelogSince, KgError, KgErrorKind};

#[derive(Clone)]
struct RestState {
    kg: Arc<KgServerState>,
    guard: Arc<Guard>,
}

/// The three reads, sharing `/mcp`'s guard (its origin policy and authenticator).
pub fn router<S: Clone + Send + Sync + 'static>(
    kg: Arc<KgServerState>,
    guard: Arc<Guard>,
) -> Router<S> {
    Router::new()
        .route("/mcp/schema/version", get(schema_version))
        .route("/mcp/schema/changelog", get(schema_changelog))
        .route("/mcp/types/{name}/schema", get(type_schema))
        .with_state(RestState { kg, guard })
}

/// `GET /mcp/types/{name}/schema`: one type and the relationship types that involve it.
#[derive(Debug, Serialize)]
pub struct TypeSchema {
    pub schema_version: Option<String>,
    #[serde(rename = "type")]
    pub object_type: TypeOutput,
    pub relationships: Vec<RelationshipOutput>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangelogQuery {
    #[serde(default)]
    since: Option<String>,
    #[serde(default)]
    limit: Option<u32>,
}

async fn schema_version(
    State(state): State<RestState>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Json<SchemaVersionOutput>, RestError> {
    let graph = admit(&state, &uri, &headers, KgTool::SchemaVersion).await?;
    let knowledge = graph.read();
    Ok(Json(SchemaVersionOutput::new(
        knowledge.history().current(),
    )))
}

async fn schema_changelog(
    State(state): State<RestState>,
    uri: Uri,
    headers: HeaderMap,
    query: Result<Query<ChangelogQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ChangelogOutput>, RestError> {
    let graph = admit(&state, &uri, &headers, KgTool::SchemaChangelog).await?;
    let Query(query) = query.map_err(|rejection| RestError::BadRequest(rejection.body_text()))?;
    let limit = query.limit.unwrap_or(DEFAULT_CHANGELOG_LIMIT);
    if limit == 0 || limit > MAX_CHANGELOG_LIMIT {
        return Err(RestError::BadRequest(format!(
            "limit must be between 1 and {MAX_CHANGELOG_LIMIT}, got {limit}"
        )));
    }
    let since = query
        .since
        .as_deref()
        .map(ChangelogSince::parse)
        .transpose()?;
    let knowledge = graph.read();
    let history = knowledge.history();
    let (entries, total_matching) = history.changes_since(since.as_ref(), limit as usize)?;
    Ok(Json(ChangelogOutput {
        since: query.since.clone(),
        current_version: history.current().map(|version| version.version.clone()),
        total_matching,
        changes: entries.into_iter().map(ChangeOutput::from).collect(),
    }))
}

async fn type_schema(
    State(state): State<RestState>,
    uri: Uri,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Json<TypeSchema>, RestError> {
    let graph = admit(&state, &uri, &headers, KgTool::TypeInfo).await?;
    let knowledge = graph.read();
    let schema = knowledge.schema();
    let found = schema.require_object_type(&name)?.name.clone();
    Ok(Json(TypeSchema {
        schema_version: knowledge.history().current().map(|v| v.version.clone()),
        object_type: type_output(schema, &found),
        relationships: schema
            .relationship_types
            .iter()
            .filter(|relationship| relationship.involves(&found))
            .map(RelationshipOutput::from)
            .collect(),
    }))
}

/// Origin, token, the tool's scope, rate limit; then the caller's workspace graph.
async fn admit(
    state: &RestState,
    uri: &Uri,
    headers: &HeaderMap,
    tool: KgTool,
) -> Result<Arc<WorkspaceGraph>, RestError> {
    let authority = uri.authority().map(|authority| authority.as_str());
    if let Err(rejection) = state.guard.origins.check(authority, headers) {
        return Err(RestError::Forbidden(rejection.message().to_owned()));
    }
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(|value| value.as_bytes());
    let caller: Arc<Caller> = match state.guard.authenticator.authenticate(authorization).await {
        Authentication::Accepted(caller) => caller,
        Authentication::Missing => {
            return Err(RestError::Unauthorized(
                "Authentication required: send Authorization: Bearer <token>",
            ));
        }
        Authentication::Invalid => {
            return Err(RestError::Unauthorized(
                "The bearer token is invalid, expired or revoked",
            ));
        }
        Authentication::Unavailable(error) => {
            tracing::error!(%error, "token verification unavailable");
            return Err(RestError::Unavailable(
                "token verification is unavailable".to_owned(),
            ));
        }
    };
    let scope = tool.required_scope();
    if !caller.principal.allows(scope) {
        return Err(RestError::MissingScope {
            required_scope: scope.as_str(),
        });
    }
    if let Err(limited) = state.kg.limiter.check(caller.key) {
        return Err(RestError::RateLimited {
            retry_after_secs: limited.retry_after.as_secs().max(1),
            limit_per_minute: limited.limit_per_minute,
        });
    }
    Ok(state
        .kg
        .graphs
        .workspace(&caller.principal.workspace_id)
        .await?)
}

/// Why a REST read failed.
#[derive(Debug, thiserror::Error)]
pub enum RestError {
    #[error("{0}")]
    Unauthorized(&'static str),
    #[error("Missing required scope: {required_scope}")]
    MissingScope { required_scope: &'static str },
    #[error("{0}")]
    Forbidden(String),
    #[error("Rate limit exceeded ({limit_per_minute} requests per minute)")]
    RateLimited {
        retry_after_secs: u64,
        limit_per_minute: u32,
    },
    #[error("{0}")]
    BadRequest(String),
    #[error(transparent)]
    Kg(#[from] KgError),
    #[error("{0}")]
    Unavailable(String),
    #[error("the knowledge graph could not be read: {0}")]
    Storage(String),
}

impl From<GraphError> for RestError {
    fn from(error: GraphError) -> Self {
        match error {
            GraphError::Kg(error) => RestError::Kg(error),
            GraphError::Storage(error) => RestError::Storage(error.to_string()),
        }
    }
}

#[derive(Debug, Serialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Debug, Serialize)]
struct ErrorDetail {
    code: &'static str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    required_scope: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    available_types: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    known_versions: Option<Vec<String>>,
}

impl RestError {
    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            RestError::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "unauthorized"),
            RestError::MissingScope { .. } => (StatusCode::FORBIDDEN, "insufficient_scope"),
            RestError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            RestError::RateLimited { .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            RestError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            RestError::Kg(error) => match error.kind() {
                KgErrorKind::NotFound => (StatusCode::NOT_FOUND, "not_found"),
                KgErrorKind::Invalid => (StatusCode::BAD_REQUEST, "bad_request"),
                KgErrorKind::Conflict => (StatusCode::CONFLICT, "conflict"),
            },
            RestError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            RestError::Storage(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

impl IntoResponse for RestError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        if status.is_server_error() {
            tracing::error!(error = %self, "a knowledge-graph REST read failed");
        }
        let (available_types, known_versions) = match &self {
            RestError::Kg(KgError::UnknownObjectType { available, .. }) => {
                (Some(available.clone()), None)
            }
            RestError::Kg(KgError::UnknownVersion { known, .. }) => (None, Some(known.clone())),
            _ => (None, None),
        };
        let required_scope = match &self {
            RestError::MissingScope { required_scope } => Some(*required_scope),
            _ => None,
        };
        let body = ErrorBody {
            error: ErrorDetail {
                code,
                message: self.to_string(),
                required_scope,
                available_types,
                known_versions,
            },
        };
        let mut response = (status, Json(body)).into_response();
        match self {
            RestError::Unauthorized(_) => {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"switchboard\""),
                );
            }
            RestError::RateLimited {
                retry_after_secs, ..
            } => {
                if let Ok(value) = HeaderValue::from_str(&retry_after_secs.to_string()) {
                    response.headers_mut().insert(header::RETRY_AFTER, value);
                }
            }
            _ => {}
        }
        response
    }
}
