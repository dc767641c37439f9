//! What `Mentions::read` takes from a question: the six example questions, type names in any
//! case and number, quoted names, versions, dates, numbers, ids and free text. These pin the
//! reading rules one by one, so a change in one rule shows up here before it shows up as a
//! wrong argument in a planner snapshot.
use super::*;
use serde_json::json;

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
}

fn read(question: &str) -> Mentions {
    Mentions::read(question, &KnownValues::default(), today())
}

#[test]
fn the_six_example_questions() {
    let types_question = read("What types of objects are in my knowledge base?");
    assert!(types_question.types.is_empty(), "{types_question:?}");
    assert!(types_question.objects.is_empty());

    assert!(read("What's the schema version?").types.is_empty());

    let document = read("Tell me about the Document type");
    assert_eq!(document.types, ["Document"]);
    assert!(document.objects.is_empty());

    let between = read("What relationships can I create between Documents and Projects?");
    assert_eq!(between.types, ["Document", "Project"]);
    assert!(between.objects.is_empty(), "{between:?}");

    let related = read("Show me Projects related to the Product Roadmap document");
    assert_eq!(related.types, ["Project"]);
    assert_eq!(
        related.objects,
        [ObjectMention {
            name: "Product Roadmap".into(),
            type_hint: Some("Document".into())
        }]
    );
}

#[test]
fn known_types_are_matched_in_any_case_and_number() {
    let known = KnownValues::gather(
        &[],
        [&json!({"types": [{"name": "Person"}, {"name": "Team"}]})],
    );
    let mentions = Mentions::read("which team is each person on?", &known, today());
    assert_eq!(mentions.types, ["Team", "Person"]);
    let guessed = read("How many documents are there?");
    assert_eq!(guessed.guessed_types, ["Document"]);
}

#[test]
fn quoted_names_versions_dates_numbers_and_ids() {
    let quoted = read("Find the document 'Q3 Retro Notes'");
    assert_eq!(quoted.objects[0].name, "Q3 Retro Notes");
    assert_eq!(quoted.objects[0].type_hint.as_deref(), Some("Document"));
    assert_eq!(quoted.free_text.as_deref(), Some("Q3 Retro Notes"));

    let since = read("What changed since 57c52257693ae983? Show the last 5");
    assert_eq!(since.version.as_deref(), Some("57c52257693ae983"));
    assert_eq!(since.numbers, [5]);

    assert_eq!(
        read("changes since 2026-10-01").date.as_deref(),
        Some("2026-10-01")
    );
    assert_eq!(
        read("changes in the last 7 days").date.as_deref(),
        Some("2026-11-13")
    );
    assert_eq!(
        read("what changed last week").date.as_deref(),
        Some("2026-11-13")
    );
    assert_eq!(read("get doc-product-roadmap").ids, ["doc-product-roadmap"]);
    assert_eq!(
        read("count documents by status").group_by.as_deref(),
        Some("status")
    );
    assert_eq!(read("incoming links of x").direction, Some("in"));
}

#[test]
fn free_text_follows_its_trigger_words() {
    assert_eq!(
        read("Which types mention budget?").free_text.as_deref(),
        Some("budget")
    );
    assert_eq!(
        read("search the schema for status").free_text.as_deref(),
        Some("status")
    );
    let echo = read("echo hello world");
    assert_eq!(echo.leading_verb, "echo");
    assert_eq!(echo.rest_after_leading_verb, "hello world");
}
