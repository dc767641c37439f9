//! Switchboard's HTTP surface (axum): [`app`] builds the router, [`run`] serves it on a
//! listener until a shutdown future resolves. This crate is the only one that knows our HTTP
//! and JSON wire shapes: errors ([`ApiError`]), authentication ([`Authenticated`], [`Scoped`]),
//! request ids, metrics, and one route module per area under `routes/`.

pub mod app;
pub mod apps;
pub mod auth;
mod body_timeout;
pub mod config;
mod connection_limits;
pub mod directory;
pub mod error;
pub mod gateway;
pub mod metrics;
mod middleware;
mod mirrors;
pub mod oauth;
pub mod oidc;
pub mod openapi;
pub mod readiness;
pub mod route_access;
pub mod routes;
pub mod schema_context;
pub mod serve;
pub mod state;
pub mod web;
pub mod wire_common;

pub use app::{app, openapi_document};
pub use auth::{Authenticated, RequiredScope, Scoped, scopes};
pub use config::{PublicUrl, ServerConfig};
pub use error::ApiError;
pub use readiness::{CheckKind, CheckReport, CheckStatus, ReadinessCheck};
pub use schema_context::KgSchemaContext;
pub use serve::{run, run_apps, serve_router};
pub use state::AppState;
