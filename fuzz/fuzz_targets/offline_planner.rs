//! The offline planner (tokenizer, mention reader, argument filling) on any question, with the
//! knowledge-graph tools on offer: no panic, and every planned call names an offered tool with
//! object arguments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;
use switchboard_core::{ChatMessage, ToolSpec};
use switchboard_llm::offline::OfflineProvider;
use switchboard_llm::provider::{LlmEvent, LlmRequest};

static TOOLS: LazyLock<Vec<ToolSpec>> = LazyLock::new(|| {
    serde_json::from_str(include_str!(
        "../../crates/llm/tests/fixtures/kg_tools.json"
    ))
    .expect("the kg tools fixture")
});

fuzz_target!(|question: &str| {
    let mut request = LlmRequest::new("", vec![ChatMessage::user(question)]);
    request.tools = TOOLS.clone();
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 25).expect("a date");
    let provider = OfflineProvider::default().with_today(today);
    let Ok(events) = provider.plan_events(&request) else {
        return;
    };
    for event in events {
        if let LlmEvent::ToolCall(call) = event {
            assert!(
                TOOLS.iter().any(|tool| tool.name == call.call.name),
                "{call:?}"
            );
            let arguments: serde_json::Value =
                serde_json::from_str(&call.call.arguments).expect("arguments are JSON");
            assert!(arguments.is_object(), "{call:?}");
        }
    }
});
