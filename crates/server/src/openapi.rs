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
        (name = "kg", description = "The knowledge graph"),
        (name = "policies", description = "Approval policies"),
        (name = "tokens", description = "API tokens"),
        (name = "users", description = "The workspace's users"),
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

/// The document the areas' routers are merged into.
pub fn base() -> OpenApiDocument {
    BaseDocument::openapi()
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
