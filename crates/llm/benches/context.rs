//! The context-window work on a turn's path: counting a 2,000-message history in a model's
//! tokens (the chat engine counts every message of every request it fits), and `search_tools`
//! over a 500-tool catalog (index built and searched per call, as the chat engine does).

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use switchboard_core::ToolSpec;
use switchboard_llm::{TokenCounter, ToolSearch};

fn history() -> Vec<String> {
    (0..2_000)
        .map(|index| {
            format!(
                "message {index}: the quarterly report for project {} lists {} open tasks, \
                 {{\"id\": \"obj-{index}\", \"status\": \"open\", \"owner\": \"person {}\"}}",
                index % 37,
                index % 11,
                index % 23
            )
        })
        .collect()
}

fn catalog() -> Vec<ToolSpec> {
    let actions = [
        "list", "get", "create", "update", "delete", "archive", "restore", "export", "import",
        "count",
    ];
    (0..50)
        .flat_map(|domain| {
            actions.iter().map(move |action| ToolSpec {
                name: format!("server{}__{action}_domain{domain}", domain % 5),
                description: format!("{action} the records of domain {domain} with filters"),
                parameters: json!({"type": "object", "properties": {format!("domain{domain}_id"): {"type": "string"}}}),
            })
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let history = history();
    for model in ["gpt-4o-mini", "claude-sonnet-4-5"] {
        let counter = TokenCounter::for_model(model);
        c.bench_function(
            &format!("count a 2000-message history ({})", counter.kind().as_str()),
            |b| {
                b.iter(|| {
                    history
                        .iter()
                        .map(|text| counter.count(text))
                        .sum::<usize>()
                })
            },
        );
    }
    let tools = catalog();
    c.bench_function("search_tools over 500 tools (index + search)", |b| {
        b.iter(|| {
            ToolSearch::new(&tools)
                .search("export the records of domain 42", 8)
                .len()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
