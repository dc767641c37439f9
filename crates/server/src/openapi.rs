//! The API's OpenAPI 3.1 document, generated from the code: each area's `router()` is a
//! `utoipa_axum` `OpenApiRouter` whose handlers carry `#[utoipa::path]` (tag = area, request
//! and response types, error bodies with their statuses, the bearer scheme), and
//! [`crate::routes::api_router`] merges them. This module owns what is not per area — title,
//! servers, tags, the `bearer` security scheme — and serves the result:
//!
//! - `GET /api/openapi.json`: the document (no token needed: it describes, it holds no data);
//! - `GET /api/docs`: a browsable reference, our own static page under `web/` that reads the
//!   document (no CDN, no third-party viewer).
//!
//! The document is also committed as `docs/openapi.json` and compared by a test, so a route
//! or a type that changes without the spec changing fails the build (`UPDATE_OPENAPI=1`
//! rewrites it). It must not describe routes that are not there: every `#[utoipa::path]`
//! is registered through `routes!`, which mounts the handler and documents it in one step.

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::Arc;
use utoipa::openapi::OpenApi as OpenApiDocument;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{Content, Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi};

/// What every document starts from; the areas add paths and schemas.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Switchboard API",
        description = "Switchboard, an MCP host: chat with tools from MCP servers, the servers' registry, approvals, audit, tokens and the knowledge graph. Every request and response body and every SSE event field is snake_case. Authenticate with `Authorization: Bearer <token>`; each operation names the scope it needs.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    servers((url = "/", description = "This Switchboard")),
    tags(
        (name = "chat", description = "Conversations and answers streamed as Server-Sent Events (`chat:use`)"),
        (name = "mcp_servers", description = "The workspace's registered MCP servers (`servers:read`, `servers:write`)"),
        (name = "health", description = "Readiness of Switchboard and its MCP servers"),
        (name = "me", description = "Who the bearer token belongs to"),
        (name = "approvals", description = "Tool calls waiting for a person's decision, and elicitations"),
        (name = "audit", description = "The workspace's audit log"),
        (name = "buds", description = "Assistants: system prompt, model and MCP configuration"),
        (name = "llm", description = "Named LLM providers and their models"),
        (name = "kg", description = "The knowledge graph"),
        (name = "policies", description = "Approval policies"),
        (name = "tokens", description = "API tokens"),
        (name = "users", description = "The workspace's users"),
        (name = "auth", description = "Signing in to the web UI: single sign-on with an OpenID Connect provider, and the browser session (public: the flow's state and the session cookie are the credentials)"),
        (name = "people", description = "Managing the workspace's people: roles, deactivation, removal"),
    ),
    modifiers(&BearerScheme),
)]
struct BaseDocument;

/// Adds the `bearer` security scheme the operations refer to.
struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut OpenApiDocument) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut http = Http::new(HttpAuthScheme::Bearer);
        http.description = Some(
            "An API token (`switchboard token create`, or the tokens API) as `Authorization: Bearer <token>`"
                .to_owned(),
        );
        components.add_security_scheme("bearer", SecurityScheme::Http(http));
    }
}

/// The statuses the common layers give to any request with a body, before its handler runs:
/// 408 (body sent too slowly), 413 (body over `server.max_request_body_bytes`) and 415 (no
/// `Content-Type: application/json`). Added to every operation that takes a body, so a client
/// reading the document knows them without each handler repeating them.
struct BodyStatuses;

impl BodyStatuses {
    const STATUSES: [(&'static str, &'static str); 3] = [
        (
            "408",
            "The request body arrived too slowly (`request_timeout`)",
        ),
        (
            "413",
            "The request body is larger than `server.max_request_body_bytes`",
        ),
        (
            "415",
            "The request body is not sent as `Content-Type: application/json`",
        ),
    ];
}

impl Modify for BodyStatuses {
    fn modify(&self, openapi: &mut OpenApiDocument) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [&mut item.post, &mut item.put, &mut item.patch];
            for operation in operations.into_iter().flatten() {
                if operation.request_body.is_none() {
                    continue;
                }
                for (status, description) in Self::STATUSES {
                    operation
                        .responses
                        .responses
                        .entry(status.to_owned())
                        .or_insert_with(|| error_response(description));
                }
            }
        }
    }
}

/// A response whose body is the `ErrorBody` document.
fn error_response(description: &str) -> RefOr<utoipa::openapi::Response> {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            Content::new(Some(Ref::from_schema_name("ErrorBody"))),
        )
        .into()
}

/// The document the areas' routers are merged into. The body statuses are added after the
/// areas are merged (see [`with_common_statuses`]).
pub fn base() -> OpenApiDocument {
    BaseDocument::openapi()
}

/// Adds what the common layers answer to the merged document's operations, and who may call
/// each one ([`crate::route_access`]).
pub fn with_common_statuses(mut document: OpenApiDocument) -> OpenApiDocument {
    BodyStatuses.modify(&mut document);
    crate::route_access::describe(&mut document);
    document
}

/// The document as served and committed: pretty JSON, paths and schemas in a stable order.
pub fn to_json(document: &OpenApiDocument) -> String {
    let mut text = document
        .to_pretty_json()
        .unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"));
    text.push('\n');
    text
}

/// `GET /api/openapi.json` and `GET /api/docs`, outside authentication.
pub fn router<S>(document: &OpenApiDocument) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let json: Arc<str> = Arc::from(to_json(document));
    Router::new()
        .route(
            "/api/openapi.json",
            get(move || {
                let json = Arc::clone(&json);
                async move { openapi_json(&json) }
            }),
        )
        .route("/api/docs", get(docs_page))
}

fn openapi_json(json: &str) -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        json.to_owned(),
    )
        .into_response()
}

async fn docs_page(headers: HeaderMap) -> Response {
    crate::web::page("api-docs.html", &headers).into_response()
}
