//! Offline planner latency per turn: deciding the first tool call for each example question,
//! and rendering the answer once results are back. The design's budget for tool detection is
//! 10 ms per turn; the planner should be far below it.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use switchboard_core::{ChatMessage, ToolCallRequest, ToolSpec};
use switchboard_llm::{LlmRequest, OfflineProvider};

const QUESTIONS: [&str; 6] = [
    "What types of objects are in my knowledge base?",
    "What's the schema version?",
    "Show me the recent changes to the schema",
    "Tell me about the Document type",
    "What relationships can I create between Documents and Projects?",
    "Show me Projects related to the Product Roadmap document",
];

fn tools() -> Vec<ToolSpec> {
    serde_json::from_str(include_str!("../tests/fixtures/kg_tools.json")).unwrap()
}

fn result(name: &str) -> String {
    let all: Value =
        serde_json::from_str(include_str!("../tests/fixtures/kg_results.json")).unwrap();
    all[name].to_string()
}

/// A turn whose tool call already came back: the planner now renders the answer.
fn answered_turn(
    question: &str,
    tool: &str,
    arguments: &str,
    result_name: &str,
) -> Vec<ChatMessage> {
    vec![
        ChatMessage::user(question),
        ChatMessage::assistant(
            "",
            vec![ToolCallRequest {
                id: "call_1".into(),
                name: tool.into(),
                arguments: arguments.into(),
            }],
        ),
        ChatMessage::tool_result("call_1", result(result_name)),
    ]
}

fn planner_benchmarks(criterion: &mut Criterion) {
    let provider = OfflineProvider::default();
    let tools = tools();
    let first_steps: Vec<LlmRequest> = QUESTIONS
        .iter()
        .map(|question| {
            LlmRequest::new("", vec![ChatMessage::user(*question)]).with_tools(tools.clone())
        })
        .collect();
    criterion.bench_function(
        "offline planner: choose the first call, six questions",
        |bencher| {
            bencher.iter(|| {
                for request in &first_steps {
                    std::hint::black_box(provider.plan_events(request).unwrap());
                }
            })
        },
    );
    let single = &first_steps[4];
    criterion.bench_function(
        "offline planner: choose the first call, one question",
        |bencher| bencher.iter(|| std::hint::black_box(provider.plan_events(single).unwrap())),
    );
    let render_changelog = LlmRequest::new(
        "",
        answered_turn(
            QUESTIONS[2],
            "kg__schema_changelog",
            "{}",
            "schema_changelog",
        ),
    )
    .with_tools(tools.clone());
    criterion.bench_function("offline planner: render a changelog answer", |bencher| {
        bencher.iter(|| std::hint::black_box(provider.plan_events(&render_changelog).unwrap()))
    });
    let render_type = LlmRequest::new(
        "",
        answered_turn(
            QUESTIONS[3],
            "kg__type_info",
            r#"{"type_name":"Document"}"#,
            "type_info_document",
        ),
    )
    .with_tools(tools);
    criterion.bench_function("offline planner: render a type answer", |bencher| {
        bencher.iter(|| std::hint::black_box(provider.plan_events(&render_type).unwrap()))
    });
}

criterion_group!(benches, planner_benchmarks);
criterion_main!(benches);
