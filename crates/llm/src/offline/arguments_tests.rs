//! Filling a kg tool's arguments from a question: type names to their parameters, `since` and
//! `limit` from versions, dates and numbers, a named object turned into a lookup, and tools that
//! cannot be filled. Separate from the planner tests so a wrong argument is traced to binding
//! rather than to ranking.
use super::*;
use crate::offline::fixtures::kg_tools;
use crate::offline::known_values::KnownValues;
use chrono::NaiveDate;

fn bind(tool_name: &str, question: &str) -> BoundArguments {
    let tools = kg_tools();
    let tool = tools.iter().find(|tool| tool.name == tool_name).unwrap();
    let known = KnownValues::default();
    let mentions = Mentions::read(
        question,
        &known,
        NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
    );
    bind_arguments(tool, &mentions, true)
}

fn complete(bound: BoundArguments) -> Value {
    match bound.binding {
        Binding::Complete(arguments) => Value::Object(arguments),
        other => panic!("expected complete, got {other:?}"),
    }
}

#[test]
fn type_names_go_to_their_parameters() {
    assert_eq!(
        complete(bind("kg__type_info", "Tell me about the Document type")),
        json!({"type_name": "Document"})
    );
    assert_eq!(
        complete(bind(
            "kg__relationship_info",
            "What relationships can I create between Documents and Projects?"
        )),
        json!({"from_type": "Document", "to_type": "Project"})
    );
    assert_eq!(
        complete(bind(
            "kg__relationship_info",
            "Which relationships point to Projects?"
        )),
        json!({"to_type": "Project"})
    );
    assert_eq!(
        complete(bind("kg__count_objects", "How many documents by status?")),
        json!({"type": "Document", "group_by": "status"})
    );
}

#[test]
fn since_and_limit_come_from_versions_dates_and_numbers() {
    assert_eq!(
        complete(bind(
            "kg__schema_changelog",
            "Show the last 3 changes since 57c52257693ae983"
        )),
        json!({"since": "57c52257693ae983", "limit": 3})
    );
    assert_eq!(
        complete(bind(
            "kg__schema_changelog",
            "What changed in the last 30 days?"
        )),
        json!({"since": "2026-10-21"})
    );
    assert_eq!(
        complete(bind(
            "kg__schema_changelog",
            "Show me the recent changes to the schema"
        )),
        json!({})
    );
}

#[test]
fn a_named_object_becomes_a_lookup_for_the_id() {
    let bound = bind(
        "kg__traverse",
        "Show me Projects related to the Product Roadmap document",
    );
    assert_eq!(
        bound.binding,
        Binding::NeedsLookup {
            arguments: json!({"direction": "both", "target_type": "Project"})
                .as_object()
                .unwrap()
                .clone(),
            id_parameter: "start_id".into(),
            object: ObjectMention {
                name: "Product Roadmap".into(),
                type_hint: Some("Document".into())
            },
        }
    );
    assert_eq!(
        complete(bind("kg__get_object", "get doc-product-roadmap")),
        json!({"id": "doc-product-roadmap"})
    );
}

#[test]
fn missing_required_arguments_make_a_tool_unsatisfiable() {
    assert_eq!(
        bind("kg__search_types", "What's the schema version?").binding,
        Binding::Unsatisfiable {
            missing: vec!["query".into()]
        }
    );
    assert!(matches!(
        bind(
            "kg__find_objects",
            "What types of objects are in my knowledge base?"
        )
        .binding,
        Binding::Unsatisfiable { .. }
    ));
    assert_eq!(
        complete(bind("kg__search_types", "Which types mention budget?")),
        json!({"query": "budget"})
    );
}

#[test]
fn generic_tools_take_numbers_in_order_and_echo_takes_the_rest() {
    let add = ToolSpec {
        name: "everything__add".into(),
        description: "Adds two numbers".into(),
        parameters: json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
    };
    let echo = ToolSpec {
        name: "everything__echo".into(),
        description: "Echoes back the input".into(),
        parameters: json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
    };
    let known = KnownValues::default();
    let today = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    let mentions = Mentions::read("add 2 and 40", &known, today);
    assert_eq!(
        complete(bind_arguments(&add, &mentions, false)),
        json!({"a": 2, "b": 40})
    );
    let mentions = Mentions::read("echo hello world", &known, today);
    assert_eq!(
        complete(bind_arguments(&echo, &mentions, false)),
        json!({"message": "hello world"})
    );
}

#[test]
fn a_required_text_with_no_known_role_takes_the_text_the_question_gives() {
    let greet = ToolSpec {
        name: "greeter__greet".into(),
        description: "A simple greeting tool".into(),
        parameters: json!({"type": "object", "properties": {"name": {"type": "string", "description": "Name to greet"}}, "required": ["name"]}),
    };
    let known = KnownValues::default();
    let today = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    for (question, expected) in [
        ("Greet \"Ada Lovelace\"", "Ada Lovelace"),
        ("greet Grace Hopper", "Grace Hopper"),
        ("say hello to someone called Alan", "Alan"),
    ] {
        let mentions = Mentions::read(question, &known, today);
        assert_eq!(
            complete(bind_arguments(&greet, &mentions, false)),
            json!({"name": expected}),
            "{question}"
        );
    }
    // Nothing to give it: the tool cannot be filled, rather than filled with a guess.
    let mentions = Mentions::read("greet", &known, today);
    assert!(!matches!(
        bind_arguments(&greet, &mentions, false).binding,
        Binding::Complete(_)
    ));
}
