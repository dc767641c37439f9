//! Every way a [`crate::KnowledgeGraph`] changes. Each change validates first and changes
//! nothing on error, and each reports exactly what it adds or removes so callers can persist it
//! (see the plan/commit pairs in the submodules).

mod records;
mod schema_change;

pub use records::{ImportPlan, ImportSummary, ObjectDeletion};
pub use schema_change::{SchemaEdit, SchemaUpdate};
