//! Fitting a request to a context window: whole earlier turns dropped oldest first, the
//! current turn always kept, long tool results cut by tokens with a marker, the tool
//! definitions and the answer's room set aside, and the report saying all of it.

use super::*;
use serde_json::json;
use switchboard_core::{ChatRole, ToolCallRequest};

fn limits(window: u32) -> ContextLimits {
    ContextLimits {
        window,
        window_known: true,
        answer_reserve: window / 8,
        tool_result_max_tokens: 1_000,
        counter: TokenCounter::estimate(),
    }
}

/// A question, a call, its result and an answer; `size` bytes of result.
fn turn(question: &str, size: usize) -> Vec<ChatMessage> {
    let call = ToolCallRequest {
        id: format!("call-{question}"),
        name: "kg__search".to_owned(),
        arguments: "{}".to_owned(),
    };
    vec![
        ChatMessage::user(question),
        ChatMessage::assistant("", vec![call.clone()]),
        ChatMessage::tool_result(call.id, "r".repeat(size)),
        ChatMessage::assistant(format!("answer to {question}"), vec![]),
    ]
}

fn conversation(turns: usize, result_size: usize, question: &str) -> Vec<ChatMessage> {
    let mut messages = vec![ChatMessage::system("be brief")];
    for index in 0..turns {
        messages.extend(turn(&format!("q{index}"), result_size));
    }
    messages.push(ChatMessage::user(question));
    messages
}

fn total_tokens(messages: &[ChatMessage], tools: &[ToolSpec], limits: &ContextLimits) -> usize {
    messages
        .iter()
        .map(|message| limits.message_tokens(message))
        .sum::<usize>()
        + limits.tools_tokens(tools)
        + super::REPLY_PRIMING
}

#[test]
fn a_history_that_fits_is_sent_whole() {
    let messages = conversation(3, 400, "latest");
    let (fitted, report) = fit(messages.clone(), &[], &limits(100_000));
    assert_eq!(fitted, messages);
    assert!(!report.trimmed(), "{report:?}");
    assert_eq!(report.tokenizer, "estimate");
    assert_eq!(
        report.prompt_tokens as usize,
        total_tokens(&messages, &[], &limits(100_000))
    );
}

#[test]
fn earlier_turns_are_dropped_whole_oldest_first_and_the_question_is_kept() {
    // Each turn costs about 1 000 tokens (4 000 bytes of result); room for about three.
    let messages = conversation(10, 4_000, "latest");
    let limits = limits(4_600);
    let (fitted, report) = fit(messages, &[], &limits);
    assert_eq!(fitted[0].role, ChatRole::System);
    assert_eq!(fitted.last().unwrap().content, "latest");
    let questions: Vec<&str> = fitted
        .iter()
        .filter(|message| message.role == ChatRole::User)
        .map(|message| message.content.as_str())
        .collect();
    assert_eq!(questions, ["q7", "q8", "q9", "latest"], "{report:?}");
    assert_eq!(report.dropped_turns, 7);
    assert_eq!(report.dropped_messages, 28);
    assert!(report.dropped_tokens > 7 * 1_000, "{report:?}");
    assert_eq!(report.cut_tool_results, 0);
    let sent = total_tokens(&fitted, &[], &limits);
    assert_eq!(report.prompt_tokens as usize, sent);
    assert!(
        sent <= limits.prompt_budget(),
        "{sent} > {}",
        limits.prompt_budget()
    );
}

#[test]
fn tool_definitions_take_their_room_first() {
    let tools: Vec<ToolSpec> = (0..20)
        .map(|index| ToolSpec {
            name: format!("server__tool_{index}"),
            description: "d".repeat(400),
            parameters: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        })
        .collect();
    let messages = conversation(10, 4_000, "latest");
    let without = fit(messages.clone(), &[], &limits(8_000)).1;
    let with = fit(messages, &tools, &limits(8_000)).1;
    assert!(with.tool_tokens > 2_000, "{with:?}");
    assert!(
        with.dropped_turns > without.dropped_turns,
        "{with:?} {without:?}"
    );
    assert!(with.prompt_tokens as usize <= limits(8_000).prompt_budget());
}

#[test]
fn long_results_are_cut_by_tokens_and_say_so() {
    let mut messages = conversation(0, 0, "q");
    messages.extend(turn("big", 40_000));
    let (fitted, report) = fit(messages, &[], &limits(100_000));
    let result = fitted
        .iter()
        .find(|message| message.role == ChatRole::Tool)
        .unwrap();
    let limits = limits(100_000);
    assert!(
        limits.counter.count(&result.content) <= 1_000,
        "{}",
        result.content.len()
    );
    assert!(
        result.content.contains(
            "of 10000 tokens of this result left out here to fit the model's context window"
        ),
        "{}",
        &result.content[600..900]
    );
    assert!(result.content.starts_with("rrr") && result.content.ends_with("rrr"));
    assert_eq!(report.cut_tool_results, 1);
    assert!(report.cut_tokens > 9_000, "{report:?}");
    assert_eq!(report.dropped_turns, 0);
}

#[test]
fn a_current_turn_too_large_alone_has_its_largest_results_cut_to_fit() {
    let mut messages = vec![ChatMessage::system("s"), ChatMessage::user("question")];
    for index in 0..4 {
        let call = ToolCallRequest {
            id: format!("c{index}"),
            name: "kg__search".to_owned(),
            arguments: "{}".to_owned(),
        };
        messages.push(ChatMessage::assistant("", vec![call.clone()]));
        messages.push(ChatMessage::tool_result(call.id, "x".repeat(3_600)));
    }
    let limits = limits(3_000);
    let (fitted, report) = fit(messages, &[], &limits);
    assert_eq!(fitted.len(), 10, "nothing of the current turn is dropped");
    let sent = total_tokens(&fitted, &[], &limits);
    assert!(
        sent <= limits.prompt_budget(),
        "{sent} > {}: {report:?}",
        limits.prompt_budget()
    );
    assert_eq!(report.cut_tool_results, 4, "{report:?}");
    assert_eq!(report.prompt_tokens as usize, sent);
}

#[test]
fn a_history_starting_mid_turn_does_not_start_with_a_result() {
    let messages = vec![
        ChatMessage::system("s"),
        ChatMessage::tool_result("orphan", "left over"),
        ChatMessage::user("q"),
    ];
    let (fitted, report) = fit(messages, &[], &limits(10_000));
    let roles: Vec<ChatRole> = fitted.iter().map(|message| message.role).collect();
    assert_eq!(roles, [ChatRole::System, ChatRole::User]);
    assert_eq!(report.dropped_messages, 1);
}

#[test]
fn the_window_comes_from_the_model_or_the_default() {
    let config = ChatConfig::default();
    let provider: std::sync::Arc<dyn switchboard_llm::LlmProvider> =
        std::sync::Arc::new(switchboard_llm::OfflineProvider::default());
    let mut model = ChosenModel {
        name: "default".to_owned(),
        provider,
        model: "gpt-4o-mini".to_owned(),
        context_window: Some(128_000),
        supports_images: false,
    };
    let known = ContextLimits::for_model(&model, &config, 4_096);
    assert_eq!((known.window, known.window_known), (128_000, true));
    assert_eq!(known.answer_reserve, 4_096);
    assert_eq!(
        known.counter.kind(),
        switchboard_llm::TokenizerKind::O200kBase
    );
    model.context_window = None;
    model.model = "claude-sonnet-4-5".to_owned();
    let assumed = ContextLimits::for_model(&model, &config, 100_000);
    assert_eq!(assumed.window, config.default_context_window);
    assert!(!assumed.window_known);
    assert_eq!(assumed.answer_reserve, config.default_context_window / 4);
    assert_eq!(
        assumed.counter.kind(),
        switchboard_llm::TokenizerKind::Estimate
    );
}
