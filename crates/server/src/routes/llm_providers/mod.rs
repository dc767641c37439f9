//! `/api/llm/providers`: named LLM providers. Every member (`chat:use`) lists them and their
//! models — never a key (`has_api_key`); admins add, change and delete the workspace's stored
//! ones (keys sealed at rest). The configuration file's providers (`default` = the `[llm]`
//! keys, then `[[llm.providers]]`) are listed read-only: changing or deleting one is 409, as
//! is adding a provider under a name already taken, or deleting one a bud answers with.

mod views;

pub use views::{
    CreateLlmProviderBody, LlmModelConfig, LlmModelList, LlmModelView, LlmProviderKindView,
    LlmProviderList, LlmProviderSourceView, LlmProviderView, RemoteListingStatus,
    UpdateLlmProviderBody,
};

use super::chat::chat_service;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use crate::wire_common::audit_details;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Serialize;
use switchboard_approvals::ConfigurationChange;
use switchboard_chat::{ApiKey, LlmProviderInput, LlmProviderUpdate, ProviderEntry};
use switchboard_core::Principal;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_llm_providers, create_llm_provider))
        .routes(routes!(
            get_llm_provider,
            update_llm_provider,
            delete_llm_provider
        ))
        .routes(routes!(list_llm_provider_models))
}

/// Every provider the workspace sees: the configuration file's first, then the stored ones.
#[utoipa::path(
    get,
    path = "/llm/providers",
    tag = "llm",
    responses(
        (status = 200, description = "The providers, without keys", body = LlmProviderList),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 503, description = "The chat engine is not running in this process", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn list_llm_providers(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
) -> Result<Json<LlmProviderList>, ApiError> {
    let providers = chat_service(&state)?.list_llm_providers(&principal).await?;
    Ok(Json(LlmProviderList {
        providers: providers.into_iter().map(LlmProviderView::from).collect(),
    }))
}

/// Add a provider to the workspace (admins).
#[utoipa::path(
    post,
    path = "/llm/providers",
    tag = "llm",
    request_body = CreateLlmProviderBody,
    responses(
        (status = 201, description = "The new provider", body = LlmProviderView),
        (status = 400, description = "The body is not JSON of this shape", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `admin`", body = ErrorBody),
        (status = 409, description = "The name is taken (configuration file or stored)", body = ErrorBody),
        (status = 422, description = "Invalid fields, naming the field", body = ErrorBody),
        (status = 503, description = "The chat engine is not running in this process", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn create_llm_provider(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Json(body): Json<CreateLlmProviderBody>,
) -> Result<(StatusCode, Json<LlmProviderView>), ApiError> {
    let entry = chat_service(&state)?
        .create_llm_provider(
            &principal,
            LlmProviderInput {
                name: body.name,
                kind: body.kind.as_kind().as_str().to_owned(),
                base_url: body.base_url,
                api_key: body.api_key.map(ApiKey::new),
                default_model: body.default_model,
                api_version: body.api_version,
                models: body.models.into_iter().map(Into::into).collect(),
            },
        )
        .await?;
    audit_provider(&state, &principal, "llm_provider.created", &entry).await;
    Ok((StatusCode::CREATED, Json(entry.into())))
}

/// Read one provider.
#[utoipa::path(
    get,
    path = "/llm/providers/{name}",
    tag = "llm",
    params(("name" = String, Path, description = "The provider's name")),
    responses(
        (status = 200, description = "The provider, without its key", body = LlmProviderView),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such provider in this workspace", body = ErrorBody),
        (status = 503, description = "The chat engine is not running in this process", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn get_llm_provider(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(name): Path<String>,
) -> Result<Json<LlmProviderView>, ApiError> {
    let entry = chat_service(&state)?
        .get_llm_provider(&principal, &name)
        .await?;
    Ok(Json(entry.into()))
}

/// Change a stored provider (admins); its name stays.
#[utoipa::path(
    patch,
    path = "/llm/providers/{name}",
    tag = "llm",
    params(("name" = String, Path, description = "The provider's name")),
    request_body = UpdateLlmProviderBody,
    responses(
        (status = 200, description = "The provider as it is now", body = LlmProviderView),
        (status = 400, description = "The body is not JSON of this shape", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `admin`", body = ErrorBody),
        (status = 404, description = "No such provider in this workspace", body = ErrorBody),
        (status = 409, description = "The provider is defined in the configuration file", body = ErrorBody),
        (status = 422, description = "Invalid fields, naming the field", body = ErrorBody),
        (status = 503, description = "The chat engine is not running in this process", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn update_llm_provider(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Path(name): Path<String>,
    Json(body): Json<UpdateLlmProviderBody>,
) -> Result<Json<LlmProviderView>, ApiError> {
    let update = LlmProviderUpdate {
        kind: body.kind.map(|kind| kind.as_kind().as_str().to_owned()),
        base_url: body.base_url,
        api_key: body.api_key.map(|key| key.map(ApiKey::new)),
        default_model: body.default_model,
        api_version: body.api_version,
        models: body
            .models
            .map(|models| models.into_iter().map(Into::into).collect()),
    };
    let entry = chat_service(&state)?
        .update_llm_provider(&principal, &name, update)
        .await?;
    audit_provider(&state, &principal, "llm_provider.updated", &entry).await;
    Ok(Json(entry.into()))
}

/// Delete a stored provider (admins).
#[utoipa::path(
    delete,
    path = "/llm/providers/{name}",
    tag = "llm",
    params(("name" = String, Path, description = "The provider's name")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `admin`", body = ErrorBody),
        (status = 404, description = "No such provider in this workspace", body = ErrorBody),
        (status = 409, description = "Defined in the configuration file, or a bud answers with it", body = ErrorBody),
        (status = 503, description = "The chat engine is not running in this process", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn delete_llm_provider(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    chat_service(&state)?
        .delete_llm_provider(&principal, &name)
        .await?;
    state
        .approvals
        .audit()
        .configuration_change(
            &principal,
            ConfigurationChange::new(
                "llm_provider.deleted",
                &name,
                audit_details(&ProviderDeletedDetails {}),
            ),
        )
        .await;
    Ok(StatusCode::NO_CONTENT)
}

/// A provider's models: the configured ones merged with its API's `GET /models` (where it has
/// one); a failing provider API is reported in `remote_status` / `remote_error`.
#[utoipa::path(
    get,
    path = "/llm/providers/{name}/models",
    tag = "llm",
    params(("name" = String, Path, description = "The provider's name")),
    responses(
        (status = 200, description = "The models", body = LlmModelList),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such provider in this workspace", body = ErrorBody),
        (status = 503, description = "The chat engine is not running in this process", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn list_llm_provider_models(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(name): Path<String>,
) -> Result<Json<LlmModelList>, ApiError> {
    let listing = chat_service(&state)?
        .llm_provider_models(&principal, &name)
        .await?;
    Ok(Json(listing.into()))
}

/// What the audit log keeps of a created or changed provider (never its key).
#[derive(Debug, Serialize)]
struct ProviderDetails<'a> {
    kind: &'a str,
    base_url: &'a str,
    has_api_key: bool,
    default_model: &'a str,
}

/// What the audit log keeps of a deleted provider: its name (the entry's target) only.
#[derive(Debug, Serialize)]
struct ProviderDeletedDetails {}

async fn audit_provider(
    state: &AppState,
    principal: &Principal,
    action: &str,
    entry: &ProviderEntry,
) {
    state
        .approvals
        .audit()
        .configuration_change(
            principal,
            ConfigurationChange::new(
                action,
                &entry.name,
                audit_details(&ProviderDetails {
                    kind: entry.kind.as_str(),
                    base_url: &entry.base_url,
                    has_api_key: entry.has_api_key,
                    default_model: &entry.default_model,
                }),
            ),
        )
        .await;
}
