//! Read-only questions over a [`crate::KnowledgeGraph`]: listing, name search, traversal,
//! paths, counts and schema lookups. Each submodule adds methods to the graph or schema and
//! returns borrowed records, leaving serialization to the caller.

pub mod count;
pub mod find;
pub mod path;
pub mod schema_info;
pub mod search;
pub mod traverse;

pub use count::{CountResult, GroupCount};
pub use find::{DEFAULT_FIND_LIMIT, FindPage, MAX_FIND_LIMIT, ObjectFilter};
pub use path::{DEFAULT_PATH_DEPTH, GraphPath, MAX_PATH_DEPTH, PathStep};
pub use schema_info::{SearchHit, SearchHitKind, TypeDetails};
pub use search::{
    DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, NameMatch, ObjectSearch, ObjectSearchHit,
};
pub use traverse::{
    MAX_TRAVERSE_DEPTH, MAX_TRAVERSE_RESULTS, ReachedObject, TraverseQuery, TraverseResult,
};
