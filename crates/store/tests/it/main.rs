//! The store test story. Every test here runs twice: on a fresh SQLite file and on a fresh
//! PostgreSQL schema (see `harness`).

mod harness;

mod answer_streams;
mod app_model_contexts;
mod approvals;
mod audit;
mod audit_events;
mod bootstrap;
mod buds;
mod conversation_pages;
mod conversations;
mod decision_notices;
mod fixtures;
mod gate_inputs;
mod instances;
mod isolation;
mod kg;
mod llm_providers;
mod mcp_observations;
mod policies;
mod secrets_at_rest;
mod server_auth;
mod server_secrets;
mod server_urls;
mod servers;
mod storable_text;
mod storable_upstream;
mod tokens;
mod tool_call_commits;
mod tool_calls;
mod tools;
mod usage;
mod users;
mod web_sessions;
mod workspaces;
