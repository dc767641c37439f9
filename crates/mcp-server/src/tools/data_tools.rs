//! `find_objects`, `search_objects`, `get_object`, `traverse`, `find_path`, `count_objects`: questions about the
//! graph's data, answered under the workspace's read lock.

use super::arguments::*;
use super::output::*;
use super::structured;
use crate::errors;
use crate::graphs::WorkspaceGraph;
use rmcp::model::{CallToolResult, ErrorData};
use serde_json::Value;
use switchboard_kg::Direction;
use switchboard_kg::query::TraverseQuery;

fn kg_error(error: switchboard_kg::KgError) -> ErrorData {
    errors::from_kg(&error)
}

pub fn find_objects(
    graph: &WorkspaceGraph,
    arguments: FindObjectsArguments,
) -> Result<CallToolResult, ErrorData> {
    let knowledge = graph.read();
    let filter = arguments.filter.map(Value::Object);
    let page = knowledge
        .find_objects(
            &arguments.object_type,
            filter.as_ref(),
            arguments.limit.map(|limit| limit as usize),
            arguments.cursor.as_deref(),
        )
        .map_err(kg_error)?;
    Ok(structured(&FindObjectsOutput {
        object_type: arguments.object_type,
        objects: page.objects.into_iter().map(ObjectOutput::from).collect(),
        total_matching: page.total_matching,
        next_cursor: page.next_cursor,
    }))
}

pub fn search_objects(
    graph: &WorkspaceGraph,
    arguments: SearchObjectsArguments,
) -> Result<CallToolResult, ErrorData> {
    let knowledge = graph.read();
    let search = knowledge
        .search_objects(
            &arguments.query,
            arguments.object_type.as_deref(),
            arguments.limit.map(|limit| limit as usize),
        )
        .map_err(kg_error)?;
    Ok(structured(&SearchObjectsOutput {
        query: arguments.query,
        object_type: arguments.object_type,
        matches: search
            .hits
            .into_iter()
            .map(|hit| ObjectMatchOutput {
                object: ObjectOutput::from(hit.object),
                matched: hit.matched.as_str().to_owned(),
            })
            .collect(),
        total_matching: search.total_matching,
        object_types: knowledge.schema().object_type_names(),
    }))
}

pub fn get_object(
    graph: &WorkspaceGraph,
    arguments: GetObjectArguments,
) -> Result<CallToolResult, ErrorData> {
    let knowledge = graph.read();
    let object = knowledge.require_object(&arguments.id).map_err(kg_error)?;
    Ok(structured(&GetObjectOutput {
        object: ObjectOutput::from(object),
        outgoing: LinkOutput::all(&knowledge, &object.id, Direction::Out),
        incoming: LinkOutput::all(&knowledge, &object.id, Direction::In),
    }))
}

pub fn traverse(
    graph: &WorkspaceGraph,
    arguments: TraverseArguments,
) -> Result<CallToolResult, ErrorData> {
    let direction = Direction::from(arguments.direction);
    let query = TraverseQuery {
        start_id: arguments.start_id,
        relationship: arguments.relationship,
        direction,
        target_type: arguments.target_type,
        depth: arguments.depth as usize,
    };
    let knowledge = graph.read();
    let result = knowledge.traverse(&query).map_err(kg_error)?;
    Ok(structured(&TraverseOutput {
        start: ObjectOutput::from(result.start),
        direction: match direction {
            Direction::Out => "out",
            Direction::In => "in",
            Direction::Both => "both",
        }
        .to_owned(),
        relationship: query.relationship.clone(),
        target_type: query.target_type.clone(),
        depth: query.depth,
        results: result
            .reached
            .iter()
            .map(|reached| TraverseHitOutput {
                object: ObjectOutput::from(reached.object),
                depth: reached.depth,
                via: RelationshipRecordOutput::from(reached.via),
            })
            .collect(),
        truncated: result.truncated,
    }))
}

pub fn find_path(
    graph: &WorkspaceGraph,
    arguments: FindPathArguments,
) -> Result<CallToolResult, ErrorData> {
    let knowledge = graph.read();
    let path = knowledge
        .find_path(
            &arguments.from_id,
            &arguments.to_id,
            arguments.max_depth as usize,
        )
        .map_err(kg_error)?;
    let output = match path {
        Some(path) => {
            let mut summary = path.start.label().to_owned();
            for step in &path.steps {
                let kind = &step.relationship.relationship_type;
                let arrow = if step.forward {
                    format!(" -{kind}-> ")
                } else {
                    format!(" <-{kind}- ")
                };
                summary.push_str(&arrow);
                summary.push_str(step.object.label());
            }
            FindPathOutput {
                from_id: arguments.from_id,
                to_id: arguments.to_id,
                found: true,
                length: Some(path.length()),
                steps: path
                    .steps
                    .iter()
                    .map(|step| PathStepOutput {
                        relationship: RelationshipRecordOutput::from(step.relationship),
                        forward: step.forward,
                        object: ObjectOutput::from(step.object),
                    })
                    .collect(),
                summary,
            }
        }
        None => FindPathOutput {
            summary: format!(
                "No path of at most {} relationships connects {} and {}",
                arguments.max_depth, arguments.from_id, arguments.to_id
            ),
            from_id: arguments.from_id,
            to_id: arguments.to_id,
            found: false,
            length: None,
            steps: Vec::new(),
        },
    };
    Ok(structured(&output))
}

pub fn count_objects(
    graph: &WorkspaceGraph,
    arguments: CountObjectsArguments,
) -> Result<CallToolResult, ErrorData> {
    let knowledge = graph.read();
    let counts = knowledge
        .count_objects(&arguments.object_type, arguments.group_by.as_deref())
        .map_err(kg_error)?;
    Ok(structured(&CountObjectsOutput {
        object_type: arguments.object_type,
        total: counts.total,
        group_by: arguments.group_by,
        groups: counts
            .groups
            .into_iter()
            .map(|group| GroupOutput {
                value: group.value,
                count: group.count,
            })
            .collect(),
    }))
}
