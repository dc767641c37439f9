//! `create_object` and `create_relationship`: validated against the schema, stored, then
//! visible to every reader.

use super::arguments::*;
use super::output::*;
use super::structured;
use crate::errors;
use crate::graphs::WorkspaceGraph;
use rmcp::model::{CallToolResult, ErrorData};
use switchboard_kg::{NewObject, NewRelationship};

pub async fn create_object(
    graph: &WorkspaceGraph,
    arguments: CreateObjectArguments,
) -> Result<CallToolResult, ErrorData> {
    let new_object = NewObject {
        id: arguments.id,
        object_type: arguments.object_type,
        properties: arguments.properties,
    };
    let object = graph
        .create_object(new_object)
        .await
        .map_err(|error| errors::from_graph(&error))?;
    Ok(structured(&CreateObjectOutput {
        object: ObjectOutput::from(&object),
    }))
}

pub async fn create_relationship(
    graph: &WorkspaceGraph,
    arguments: CreateRelationshipArguments,
) -> Result<CallToolResult, ErrorData> {
    let new_relationship = NewRelationship {
        id: None,
        relationship_type: arguments.relationship_type,
        from_id: arguments.from_id,
        to_id: arguments.to_id,
        properties: arguments.properties,
    };
    let relationship = graph
        .create_relationship(new_relationship)
        .await
        .map_err(|error| errors::from_graph(&error))?;
    Ok(structured(&CreateRelationshipOutput {
        relationship: RelationshipRecordOutput::from(&relationship),
    }))
}
