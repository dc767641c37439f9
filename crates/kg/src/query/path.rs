//! Shortest path between two objects, following relationships in either direction: "how is X
//! related to Y?". Breadth-first, so the first path found is a shortest one; neighbours are
//! visited in creation order, so the answer is deterministic.

use crate::data::{ObjectRecord, RelationshipRecord};
use crate::error::KgError;
use crate::graph::{Direction, KnowledgeGraph};
use std::collections::{HashMap, VecDeque};

pub const MAX_PATH_DEPTH: usize = 6;
pub const DEFAULT_PATH_DEPTH: usize = 4;

/// One hop of a path.
#[derive(Clone, Debug, PartialEq)]
pub struct PathStep<'a> {
    pub relationship: &'a RelationshipRecord,
    /// True when the hop follows the relationship's own direction (from → to).
    pub forward: bool,
    /// The object this hop arrives at.
    pub object: &'a ObjectRecord,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GraphPath<'a> {
    pub start: &'a ObjectRecord,
    pub steps: Vec<PathStep<'a>>,
}

impl GraphPath<'_> {
    pub fn length(&self) -> usize {
        self.steps.len()
    }
}

impl KnowledgeGraph {
    /// A shortest path of at most `max_depth` (1..=6) hops, or `None` when there is none.
    pub fn find_path(
        &self,
        from_id: &str,
        to_id: &str,
        max_depth: usize,
    ) -> Result<Option<GraphPath<'_>>, KgError> {
        if max_depth == 0 || max_depth > MAX_PATH_DEPTH {
            return Err(KgError::invalid_argument(format!(
                "max_depth must be between 1 and {MAX_PATH_DEPTH}, got {max_depth}"
            )));
        }
        let start = self.require_object(from_id)?;
        let goal = self.require_object(to_id)?;
        if start.id == goal.id {
            return Ok(Some(GraphPath {
                start,
                steps: Vec::new(),
            }));
        }
        // For each discovered object: the relationship and object it was reached from.
        let mut came_from: HashMap<&str, (&RelationshipRecord, &str)> = HashMap::new();
        let mut frontier: VecDeque<(&str, usize)> = VecDeque::from([(start.id.as_str(), 0)]);
        while let Some((object_id, depth)) = frontier.pop_front() {
            if depth == max_depth {
                continue;
            }
            for (relationship, other_id) in self.neighbours(object_id, Direction::Both) {
                if other_id == start.id || came_from.contains_key(other_id) {
                    continue;
                }
                came_from.insert(other_id, (relationship, object_id));
                if other_id == goal.id {
                    return Ok(Some(self.rebuild_path(start, goal, &came_from)));
                }
                frontier.push_back((other_id, depth + 1));
            }
        }
        Ok(None)
    }

    fn rebuild_path<'a>(
        &'a self,
        start: &'a ObjectRecord,
        goal: &'a ObjectRecord,
        came_from: &HashMap<&str, (&'a RelationshipRecord, &str)>,
    ) -> GraphPath<'a> {
        let mut steps = Vec::new();
        let mut current = goal.id.as_str();
        while current != start.id {
            let (relationship, previous) = came_from[current];
            steps.push(PathStep {
                relationship,
                forward: relationship.to_id == current && relationship.from_id == previous,
                object: &self.objects[current],
            });
            current = previous;
        }
        steps.reverse();
        GraphPath { start, steps }
    }
}
