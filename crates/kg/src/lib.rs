//! Switchboard's knowledge graph: a schema of object and relationship types with a versioned
//! history and changelog, objects and relationships validated against it, and the queries our
//! MCP server answers (find, get, traverse, shortest path, counts, schema lookups).
//!
//! Invariant: this crate does no IO and knows no protocol. One [`KnowledgeGraph`] is one
//! workspace's graph in memory; callers persist the changes each mutation returns.

pub mod changelog;
pub mod data;
pub mod error;
pub mod graph;
pub mod history;
pub mod mutation;
pub mod query;
pub mod sample;
pub mod schema;

pub use changelog::{ChangeKind, ChangeSubject, ChangelogEntry, SchemaChange, diff_schemas};
pub use data::{NewObject, NewRelationship, ObjectRecord, RelationshipRecord};
pub use error::{KgError, KgErrorKind};
pub use graph::{Direction, GraphData, KnowledgeGraph};
pub use history::{ChangelogSince, SchemaHistory, SchemaVersion, VersionedSchema};
pub use mutation::{ImportPlan, ImportSummary, ObjectDeletion, SchemaEdit, SchemaUpdate};
pub use sample::sample_graph;
pub use schema::{ObjectType, PropertyDefinition, PropertyType, RelationshipType, Schema};
