//! The planner end to end over fixture results: the six example questions, multi-step plans,
//! tool_choice, low confidence and failures. Answers are snapshot-tested.

use super::*;
use crate::offline::fixtures::{Transcript, converse, fake_kg, fake_sample_kg, kg_tools};
use switchboard_core::{ChatMessage, ToolCallRequest};

fn ask(question: &str) -> Transcript {
    converse(
        Vec::new(),
        question,
        &kg_tools(),
        ToolChoice::Auto,
        fake_sample_kg,
    )
}

#[test]
fn what_types_of_objects_are_in_my_knowledge_base() {
    let transcript = ask("What types of objects are in my knowledge base?");
    assert_eq!(transcript.calls, [("kg__type_info".into(), json!({}))]);
    insta::assert_snapshot!("types_in_knowledge_base", transcript.answer);
}

#[test]
fn whats_the_schema_version() {
    let transcript = ask("What's the schema version?");
    assert_eq!(transcript.calls, [("kg__schema_version".into(), json!({}))]);
    insta::assert_snapshot!("schema_version", transcript.answer);
}

#[test]
fn show_me_the_recent_changes_to_the_schema() {
    let transcript = ask("Show me the recent changes to the schema");
    assert_eq!(
        transcript.calls,
        [("kg__schema_changelog".into(), json!({}))]
    );
    insta::assert_snapshot!("recent_schema_changes", transcript.answer);
}

#[test]
fn tell_me_about_the_document_type() {
    let transcript = ask("Tell me about the Document type");
    assert_eq!(
        transcript.calls,
        [("kg__type_info".into(), json!({"type_name": "Document"}))]
    );
    insta::assert_snapshot!("document_type", transcript.answer);
}

#[test]
fn what_relationships_can_i_create_between_documents_and_projects() {
    let transcript = ask("What relationships can I create between Documents and Projects?");
    assert_eq!(
        transcript.calls,
        [(
            "kg__relationship_info".into(),
            json!({"from_type": "Document", "to_type": "Project"})
        )]
    );
    insta::assert_snapshot!("relationships_documents_projects", transcript.answer);
}

#[test]
fn the_other_direction_is_tried_when_one_finds_nothing() {
    let transcript = ask("What relationships can I create between Projects and Documents?");
    assert_eq!(
        transcript.calls,
        [
            (
                "kg__relationship_info".into(),
                json!({"from_type": "Project", "to_type": "Document"})
            ),
            (
                "kg__relationship_info".into(),
                json!({"from_type": "Document", "to_type": "Project"})
            ),
        ]
    );
    assert!(
        transcript.answer.contains("`belongs_to`"),
        "{}",
        transcript.answer
    );
    assert!(
        !transcript.answer.contains("No relationship types"),
        "{}",
        transcript.answer
    );
}

#[test]
fn show_me_projects_related_to_the_product_roadmap_document() {
    let transcript = ask("Show me Projects related to the Product Roadmap document");
    assert_eq!(
        transcript.calls,
        [
            (
                "kg__find_objects".into(),
                json!({"type": "Document", "limit": 100})
            ),
            (
                "kg__traverse".into(),
                json!({"start_id": "doc-product-roadmap", "direction": "both", "target_type": "Project"})
            ),
        ]
    );
    insta::assert_snapshot!("projects_related_to_roadmap", transcript.answer);
}

#[test]
fn an_object_that_does_not_exist_is_reported_with_what_exists() {
    let transcript = ask("Show me Projects related to the Moon Base document");
    assert_eq!(transcript.calls.len(), 1, "{:?}", transcript.calls);
    assert!(
        transcript.answer.starts_with("I couldn't find a document named \"Moon Base\". The documents I found are: \"Product Roadmap\""),
        "{}",
        transcript.answer
    );
}

#[test]
fn an_object_known_from_earlier_results_needs_no_lookup() {
    let earlier = vec![
        ChatMessage::user("list documents"),
        ChatMessage::assistant(
            "",
            vec![ToolCallRequest {
                id: "c0".into(),
                name: "kg__find_objects".into(),
                arguments: "{\"type\":\"Document\"}".into(),
            }],
        ),
        ChatMessage::tool_result(
            "c0",
            fake_kg("kg__find_objects", &json!({"type": "Document"})),
        ),
        ChatMessage::assistant("(the list)", vec![]),
    ];
    let transcript = converse(
        earlier,
        "Show me Projects related to the Product Roadmap document",
        &kg_tools(),
        ToolChoice::Auto,
        fake_kg,
    );
    assert_eq!(transcript.calls.len(), 1);
    assert_eq!(transcript.calls[0].0, "kg__traverse");
}

#[test]
fn unrelated_questions_get_a_plain_statement_of_what_it_can_do() {
    // "Lisbon" and "the weather" could be names in someone's graph: they are looked up, and
    // when nothing is found the answer says so and what the assistant can do.
    let transcript = ask("What's the weather like in Lisbon tomorrow?");
    assert!(
        transcript
            .calls
            .iter()
            .all(|(name, _)| name == "kg__search_objects"),
        "{:?}",
        transcript.calls
    );
    insta::assert_snapshot!("low_confidence_help", transcript.answer);
}

#[test]
fn questions_without_names_or_a_fitting_tool_call_nothing() {
    let transcript = ask("hmm, what can you do?");
    assert!(transcript.calls.is_empty(), "{:?}", transcript.calls);
    assert!(
        transcript.answer.contains("These are the tools I can use"),
        "{}",
        transcript.answer
    );
}

#[test]
fn tool_choice_none_and_required_and_forced_function() {
    let none = converse(
        Vec::new(),
        "What's the schema version?",
        &kg_tools(),
        ToolChoice::None,
        fake_kg,
    );
    assert!(none.calls.is_empty());
    assert!(
        none.answer.contains("no tools are available"),
        "{}",
        none.answer
    );

    let required = converse(
        Vec::new(),
        "hmm",
        &kg_tools(),
        ToolChoice::Required,
        fake_kg,
    );
    assert!(
        required.calls.is_empty(),
        "nothing can be bound from 'hmm'... {:?}",
        required.calls
    );

    let forced = converse(
        Vec::new(),
        "anything at all",
        &kg_tools(),
        ToolChoice::Function {
            name: "kg__schema_version".into(),
        },
        fake_kg,
    );
    assert_eq!(forced.calls, [("kg__schema_version".into(), json!({}))]);
}

#[test]
fn a_failing_tool_is_reported_plainly() {
    let transcript = converse(
        Vec::new(),
        "What's the schema version?",
        &kg_tools(),
        ToolChoice::Auto,
        |_, _| "Error: the MCP server 'kg' is unavailable (connection refused)".to_owned(),
    );
    assert_eq!(
        transcript.answer,
        "I could not get an answer from `kg__schema_version`: Error: the MCP server 'kg' is unavailable (connection refused).\n"
    );
}

#[test]
fn write_tools_are_not_chosen_for_questions() {
    let mut tools = kg_tools();
    tools.push(ToolSpec {
        name: "kg__create_relationship".into(),
        description: "Create a relationship between two objects".into(),
        parameters: json!({"type": "object", "properties": {"type": {"type": "string"}}, "required": ["type"]}),
    });
    let transcript = converse(
        Vec::new(),
        "What relationships can I create between Documents and Projects?",
        &tools,
        ToolChoice::Auto,
        fake_kg,
    );
    assert_eq!(transcript.calls[0].0, "kg__relationship_info");
}

#[test]
fn every_suggested_example_question_is_answered_with_its_tool() {
    for (tool_base, question) in super::help::EXAMPLES {
        let transcript = ask(question);
        let tool = format!("kg__{tool_base}");
        assert!(
            transcript.calls.iter().any(|(name, _)| *name == tool),
            "{question}: {:?}\n{}",
            transcript.calls,
            transcript.answer
        );
        assert!(
            !transcript.answer.starts_with("I could"),
            "{question}: {}",
            transcript.answer
        );
    }
}

#[test]
fn a_confident_tool_of_another_server_beats_an_object_search() {
    let mut tools = kg_tools();
    tools.push(ToolSpec {
        name: "zoo__count_zebras".into(),
        description: "Counts the zebras in the zoo.".into(),
        parameters: json!({"type": "object", "properties": {}}),
    });
    let transcript = converse(
        Vec::new(),
        "Count the zebras in the zoo",
        &tools,
        ToolChoice::Auto,
        |tool, _| {
            assert_eq!(tool, "zoo__count_zebras", "only the zoo's tool is called");
            json!({"zebras": 3}).to_string()
        },
    );
    assert_eq!(transcript.calls, [("zoo__count_zebras".into(), json!({}))]);
    // A question about a named object still goes to the graph when no other tool fits.
    let object = ask("Which team owns the product roadmap?");
    assert_eq!(object.calls[0].0, "kg__search_objects");
}
