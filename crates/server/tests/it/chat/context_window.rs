//! The context window through the chat API: a conversation longer than the model's window
//! (listed in `[[llm.models]]`) with the scripted fake OpenAI server — the request the model
//! gets fits the window in its own tokens (o200k_base for `gpt-4o-mini`), the latest turns and
//! the question are kept, and `meta` and the stored answer say what was left out.

use crate::support::chat::{ChatOptions, ChatServer, answer_text};
use serde_json::{Value, json};
use switchboard_llm::{ModelInfo, TokenCounter};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply};

const WINDOW: u32 = 12_000;
const MAX_TOKENS: u32 = 1_000;

/// Tokens of what a request sends the model: every message's text and tool calls, and the
/// tool definitions as JSON (an over-count: the JSON syntax costs more than the definitions).
fn request_tokens(body: &Value, counter: &TokenCounter) -> usize {
    let messages: usize = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            4 + counter.count(message["content"].as_str().unwrap_or_default())
                + counter.count(&message["tool_calls"].to_string())
        })
        .sum();
    messages + counter.count(&body["tools"].to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_conversation_is_trimmed_to_the_models_window_and_meta_says_what_was_dropped() {
    let fake = FakeOpenAi::start().await;
    let mut options = ChatOptions::openai(&fake.base_url());
    options.llm.model = "gpt-4o-mini".to_owned();
    options.llm.max_tokens = MAX_TOKENS;
    options.llm.models = vec![ModelInfo {
        id: "gpt-4o-mini".to_owned(),
        context_window: Some(WINDOW),
        supports_images: false,
        supports_tools: true,
    }];
    let server = ChatServer::start(options).await;
    // Four answers of about 2 500 tokens each: together far more than the window.
    let long_answer = "the quick brown fox jumps over the lazy dog ".repeat(280);
    let mut conversation_id: Option<String> = None;
    let mut last_events = Vec::new();
    for index in 0..5 {
        let reply = if index < 4 {
            long_answer.as_str()
        } else {
            "short"
        };
        fake.enqueue(ScriptedReply::text(&[reply]));
        let mut body = json!({"message": format!("question {index}")});
        if let Some(id) = &conversation_id {
            body["conversation_id"] = json!(id);
        }
        last_events = server.ask_and_wait(body).await;
        conversation_id = last_events[0]["conversation_id"]
            .as_str()
            .map(str::to_owned);
    }
    assert_eq!(answer_text(&last_events), "short");

    let counter = TokenCounter::for_model("gpt-4o-mini");
    let request = &fake.requests()[4].body;
    let sent = request_tokens(request, &counter);
    assert!(
        sent <= (WINDOW - MAX_TOKENS) as usize,
        "the request ({sent} tokens) leaves the answer its {MAX_TOKENS} tokens of the {WINDOW}"
    );
    let questions: Vec<&str> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].as_str().unwrap())
        .collect();
    assert_eq!(questions.last(), Some(&"question 4"), "{questions:?}");
    assert!(!questions.contains(&"question 0"), "{questions:?}");

    let context = &last_events[0]["context"];
    assert_eq!(context["context_window"], WINDOW);
    assert_eq!(context["window_known"], true);
    assert_eq!(context["tokenizer"], "o200k_base");
    assert_eq!(context["answer_reserve_tokens"], MAX_TOKENS);
    let dropped_turns = context["dropped_turns"].as_u64().unwrap();
    assert_eq!(dropped_turns as usize, 5 - questions.len(), "{context}");
    assert_eq!(context["dropped_messages"], dropped_turns * 2, "{context}");
    assert!(
        context["dropped_tokens"].as_u64().unwrap() > dropped_turns * 2_000,
        "{context}"
    );
    assert!(
        context["tool_tokens"].as_u64().unwrap() > 0,
        "the kg tools are offered"
    );

    let stored = server
        .stored_messages(conversation_id.as_deref().unwrap())
        .await;
    let answer = stored.last().unwrap();
    assert_eq!(
        answer.metadata["context"], *context,
        "the stored answer says the same"
    );
}
