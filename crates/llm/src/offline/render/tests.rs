//! The renderer through its entry point (`answer`): results whose shape is not recognised,
//! plain text and empty results (the fallbacks any third-party server's results go through),
//! and two recognised shapes, counts and object lists, snapshot-tested.

use super::*;
use crate::offline::conversation::ToolOutcome;
use serde_json::json;

fn outcome(tool: &str, arguments: Value, json: Value) -> ToolOutcome {
    ToolOutcome {
        tool_name: tool.to_owned(),
        arguments,
        text: json.to_string(),
        json: Some(json),
        is_error: false,
    }
}

fn render(outcomes: &[ToolOutcome]) -> String {
    answer(
        outcomes,
        &RenderContext::default(),
        &OfflinePlannerConfig::default(),
    )
}

#[test]
fn unknown_shapes_render_generically() {
    let text = render(&[outcome(
        "weather__forecast",
        json!({}),
        json!({
            "city": "Lisbon",
            "temperature_c": 21.5,
            "sunny": true,
            "alerts": ["wind"],
            "days": [
                {"day": "Mon", "high": 22, "low": 15},
                {"day": "Tue", "high": 19, "low": 14, "note": "rain | showers"}
            ],
            "source": {"name": "met office", "updated": "2026-11-20"}
        }),
    )]);
    insta::assert_snapshot!("generic_json", text);
}

#[test]
fn plain_text_and_empty_results() {
    let text_outcome = ToolOutcome {
        tool_name: "everything__echo".into(),
        arguments: json!({"message": "hi"}),
        text: "Echo: hi".into(),
        json: None,
        is_error: false,
    };
    assert_eq!(render(&[text_outcome]), "Echo: hi\n");
    assert_eq!(
        render(&[outcome("x__list", json!({}), json!([]))]),
        "Here is what `x__list` returned:\n\n(none)\n"
    );
    assert!(is_empty_result(&json!({"relationships": []})));
    assert!(!is_empty_result(&json!({"relationships": [1]})));
}

#[test]
fn counts_and_object_lists() {
    let counted = render(&[outcome(
        "kg__count_objects",
        json!({"type": "Document", "group_by": "status"}),
        json!({"total": 12, "groups": [{"value": "published", "count": 7}, {"value": "draft", "count": 5}]}),
    )]);
    insta::assert_snapshot!("count_grouped", counted);
    let found = render(&[outcome(
        "kg__find_objects",
        json!({"type": "Document"}),
        crate::offline::fixtures::kg_result("find_documents"),
    )]);
    insta::assert_snapshot!("find_documents", found);
}
