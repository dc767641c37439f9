//! One conversation across wire formats (issue 13): its history is stored in our own shape,
//! so a conversation that called tools in parallel through an OpenAI-compatible model goes on
//! with Claude over Anthropic's native Messages API (the calls replayed as `tool_use` and
//! `tool_result` blocks), and back (Claude's calls replayed as OpenAI `tool_calls` and `tool`
//! messages). And a bud whose Anthropic primary is overloaded (529 `overloaded_error`) is
//! answered by its OpenAI-compatible fallback, saying so. Both against the scripted fakes of
//! each provider's documented stream, with our own kg server's real tools.

use crate::support::call;
use crate::support::chat::{ChatOptions, ChatServer, SseReader, answer_text, of_type};
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_test_support::fake_anthropic::{AnthropicReply, FakeAnthropic, ScriptedToolUse};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

/// Adds the stored Anthropic provider `claude` at `fake`.
async fn add_claude(server: &ChatServer, fake: &FakeAnthropic) {
    let response = call(
        server,
        &server.token,
        Method::POST,
        "/api/llm/providers",
        Some(
            json!({"name": "claude", "kind": "anthropic", "base_url": fake.base_url(),
            "api_key": "sk-ant-stored", "default_model": "claude-fake"}),
        ),
    )
    .await;
    assert_eq!(response.status(), 201, "{}", response.text().await.unwrap());
}

/// Sets the conversation's own provider (`null`: back to its bud's).
async fn choose_provider(server: &ChatServer, conversation_id: &str, provider: Value) {
    let response = call(
        server,
        &server.token,
        Method::PATCH,
        &format!("/chat/conversations/{conversation_id}"),
        Some(json!({"provider": provider})),
    )
    .await;
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
}

async fn ask(server: &ChatServer, body: Value) -> Vec<Value> {
    let response = server
        .client
        .post(server.url("/chat/stream"))
        .bearer_auth(&server.token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let events = SseReader::new(response).until_done().await;
    assert!(of_type(&events, "error").is_empty(), "{events:#?}");
    events
}

fn blocks_of<'a>(message: &'a Value, kind: &str) -> Vec<&'a Value> {
    message["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter(|block| block["type"] == kind)
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_goes_on_across_openai_and_anthropic_with_its_tool_history() {
    let openai = FakeOpenAi::start().await;
    let anthropic = FakeAnthropic::start().await;
    let server = ChatServer::start(ChatOptions::openai(&openai.base_url())).await;
    add_claude(&server, &anthropic).await;

    // On the OpenAI-compatible default: two kg tools in parallel, then an answer.
    openai.enqueue(ScriptedReply::tool_calls(&[
        ScriptedToolCall::new("call_version", "kg__schema_version", json!({})),
        ScriptedToolCall::new(
            "call_type",
            "kg__type_info",
            json!({"type_name": "Document"}),
        ),
    ]));
    openai.enqueue(ScriptedReply::text(&["Documents have titles."]));
    let events = ask(&server, json!({"message": "What is a Document?"})).await;
    assert_eq!(answer_text(&events), "Documents have titles.");
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();

    // Switched to Claude: the whole history arrives in Anthropic's shape; Claude calls a tool.
    choose_provider(&server, &conversation_id, json!("claude")).await;
    anthropic.enqueue(AnthropicReply::tool_use(
        None,
        &[ScriptedToolUse::new(
            "toolu_rel",
            "kg__relationship_info",
            json!({"from_type": "Document", "to_type": "Project"}),
        )],
    ));
    anthropic.enqueue(AnthropicReply::text(&["Documents reference Projects."]));
    let events = ask(
        &server,
        json!({"conversation_id": conversation_id, "message": "And Projects?"}),
    )
    .await;
    assert_eq!(answer_text(&events), "Documents reference Projects.");
    assert_eq!(of_type(&events, "done")[0]["provider_name"], "claude");
    let messages = anthropic.requests()[0].body["messages"].clone();
    let messages = messages.as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    let uses: Vec<&str> = blocks_of(&messages[1], "tool_use")
        .iter()
        .map(|block| block["id"].as_str().unwrap())
        .collect();
    assert_eq!(uses, ["call_version", "call_type"]);
    let results = blocks_of(&messages[2], "tool_result");
    let answered: Vec<&str> = results
        .iter()
        .map(|block| block["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(answered, uses, "each OpenAI call answered by its result");
    assert!(
        results[1]["content"].to_string().contains("Document"),
        "{results:#?}"
    );
    assert_eq!(
        blocks_of(&messages[3], "text")[0]["text"],
        "Documents have titles."
    );

    // Back on the default: Claude's call comes back as OpenAI tool_calls and a tool message.
    choose_provider(&server, &conversation_id, Value::Null).await;
    openai.enqueue(ScriptedReply::text(&["Still so."]));
    ask(
        &server,
        json!({"conversation_id": conversation_id, "message": "Sure?"}),
    )
    .await;
    let replayed = openai.requests().last().unwrap().body["messages"].clone();
    let replayed = replayed.as_array().unwrap();
    let claude_call = replayed
        .iter()
        .find(|message| message["tool_calls"][0]["id"] == "toolu_rel")
        .expect("Claude's call replayed as an OpenAI tool call");
    assert_eq!(
        claude_call["tool_calls"][0]["function"]["name"],
        "kg__relationship_info"
    );
    let result = replayed
        .iter()
        .find(|message| message["role"] == "tool" && message["tool_call_id"] == "toolu_rel")
        .expect("its result as a tool message");
    assert!(!result["content"].as_str().unwrap().is_empty());
    assert_eq!(replayed.last().unwrap()["content"], "Sure?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overloaded_anthropic_primary_is_answered_by_the_openai_fallback() {
    let openai = FakeOpenAi::start().await;
    let anthropic = FakeAnthropic::start().await;
    let server = ChatServer::start(ChatOptions::openai(&openai.base_url())).await;
    add_claude(&server, &anthropic).await;
    let bud = call(
        &server,
        &server.token,
        Method::POST,
        "/api/buds",
        Some(json!({"name": "Claude first", "provider": "claude",
            "fallbacks": [{"provider": "default", "model": "steady-model"}]})),
    )
    .await;
    assert_eq!(bud.status(), 201);
    let bud: Value = bud.json().await.unwrap();

    // 529 overloaded_error to the first try and every retry.
    for _ in 0..4 {
        anthropic.enqueue(AnthropicReply::overloaded());
    }
    openai.enqueue(ScriptedReply::text(&["from the fallback"]));
    let conversation = call(
        &server,
        &server.token,
        Method::POST,
        "/chat/conversations",
        Some(json!({"bud_id": bud["id"]})),
    )
    .await;
    assert_eq!(conversation.status(), 201);
    let conversation: Value = conversation.json().await.unwrap();
    let events = ask(
        &server,
        json!({"conversation_id": conversation["id"], "message": "hello"}),
    )
    .await;
    assert_eq!(answer_text(&events), "from the fallback");
    assert_eq!(anthropic.requests().len(), 4, "one try and three retries");
    let done = of_type(&events, "done").pop().unwrap();
    assert_eq!(done["outcome"], "completed");
    assert_eq!(done["provider_name"], "default");
    assert_eq!(done["model"], "steady-model");
    assert_eq!(done["fallback_from"][0]["provider_name"], "claude");
    assert_eq!(done["fallback_from"][0]["model"], "claude-fake");
}
