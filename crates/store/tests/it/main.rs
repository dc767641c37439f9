//! The store test story. Every test here runs twice: on a fresh SQLite file and on a fresh
//! PostgreSQL schema (see `harness`).

mod harness;

mod bootstrap;
mod fixtures;
mod isolation;
mod secrets_at_rest;
mod servers;
mod tokens;
mod workspaces;
