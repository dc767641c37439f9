//! Breadth-first traversal from one object: follow relationships (optionally of one type) in a
//! direction up to a depth, and report each object reached once, at its shortest distance,
//! with the relationship it was reached through.

use crate::data::{ObjectRecord, RelationshipRecord};
use crate::error::KgError;
use crate::graph::{Direction, KnowledgeGraph};
use std::collections::{HashSet, VecDeque};

pub const MAX_TRAVERSE_DEPTH: usize = 5;
/// A traversal stops collecting after this many objects and says it was truncated.
pub const MAX_TRAVERSE_RESULTS: usize = 500;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraverseQuery {
    pub start_id: String,
    /// Follow only relationships of this type.
    pub relationship: Option<String>,
    pub direction: Direction,
    /// Report only objects of this type (traversal still passes through others).
    pub target_type: Option<String>,
    /// 1..=5.
    pub depth: usize,
}

/// An object reached by a traversal.
#[derive(Clone, Debug, PartialEq)]
pub struct ReachedObject<'a> {
    pub object: &'a ObjectRecord,
    /// Number of relationships between the start and this object.
    pub depth: usize,
    /// The relationship this object was first reached through.
    pub via: &'a RelationshipRecord,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TraverseResult<'a> {
    pub start: &'a ObjectRecord,
    /// Reached objects (filtered by `target_type`), ordered by depth then discovery.
    pub reached: Vec<ReachedObject<'a>>,
    /// True when more than [`MAX_TRAVERSE_RESULTS`] objects were reachable.
    pub truncated: bool,
}

impl KnowledgeGraph {
    pub fn traverse(&self, query: &TraverseQuery) -> Result<TraverseResult<'_>, KgError> {
        if query.depth == 0 || query.depth > MAX_TRAVERSE_DEPTH {
            return Err(KgError::invalid_argument(format!(
                "depth must be between 1 and {MAX_TRAVERSE_DEPTH}, got {}",
                query.depth
            )));
        }
        if let Some(relationship) = &query.relationship {
            self.schema.require_relationship_type(relationship)?;
        }
        if let Some(target_type) = &query.target_type {
            self.schema.require_object_type(target_type)?;
        }
        let start = self.require_object(&query.start_id)?;
        let mut visited: HashSet<&str> = HashSet::from([start.id.as_str()]);
        let mut frontier: VecDeque<(&str, usize)> = VecDeque::from([(start.id.as_str(), 0)]);
        let mut reached = Vec::new();
        let mut truncated = false;
        while let Some((object_id, depth)) = frontier.pop_front() {
            if depth == query.depth {
                continue;
            }
            for (relationship, other_id) in self.neighbours(object_id, query.direction) {
                if query
                    .relationship
                    .as_ref()
                    .is_some_and(|wanted| wanted != &relationship.relationship_type)
                {
                    continue;
                }
                if !visited.insert(other_id) {
                    continue;
                }
                let other = &self.objects[other_id];
                if query
                    .target_type
                    .as_ref()
                    .is_none_or(|wanted| wanted == &other.object_type)
                {
                    if reached.len() == MAX_TRAVERSE_RESULTS {
                        truncated = true;
                        break;
                    }
                    reached.push(ReachedObject {
                        object: other,
                        depth: depth + 1,
                        via: relationship,
                    });
                }
                frontier.push_back((other_id, depth + 1));
            }
            if truncated {
                break;
            }
        }
        Ok(TraverseResult {
            start,
            reached,
            truncated,
        })
    }
}
