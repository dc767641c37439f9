//! The native Anthropic path end to end: the scripted fake Messages API over real HTTP behind
//! `POST /chat/stream`, the model calling our own kg server's tools in parallel (one of them
//! unknown, so its result goes back with `is_error`), the results going back as one user
//! turn of `tool_result` blocks, and the stored history replayed in Anthropic's shape on the
//! next question.

use crate::support::chat::{ChatOptions, ChatServer, answer_text, of_type};
use serde_json::{Value, json};
use switchboard_test_support::fake_anthropic::{AnthropicReply, FakeAnthropic, ScriptedToolUse};

fn blocks(message: &Value) -> &Vec<Value> {
    message["content"].as_array().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_calls_kg_tools_in_parallel_and_answers_from_their_results() {
    let fake = FakeAnthropic::start().await;
    fake.enqueue(AnthropicReply::tool_use(
        Some("Checking. "),
        &[
            ScriptedToolUse::new("toolu_schema", "kg__schema_version", json!({})),
            ScriptedToolUse::new(
                "toolu_type",
                "kg__type_info",
                json!({"type_name": "Document"}),
            ),
            ScriptedToolUse::new("toolu_bad", "kg__no_such_tool", json!({})),
        ],
    ));
    fake.enqueue(AnthropicReply::text(&["Documents ", "have titles."]));
    fake.enqueue(AnthropicReply::text(&["Still true."]));
    let server = ChatServer::start(ChatOptions::anthropic(&fake.base_url())).await;

    let events = server
        .ask_and_wait(json!({"message": "What is a Document?"}))
        .await;
    assert_eq!(events[0]["provider"], "anthropic");
    assert_eq!(events[0]["model"], "claude-fake");
    assert!(of_type(&events, "error").is_empty(), "{events:#?}");
    assert_eq!(events.last().unwrap()["outcome"], "completed");
    assert_eq!(answer_text(&events), "Checking. Documents have titles.");
    let completed: Vec<&str> = of_type(&events, "mcp_tool")
        .into_iter()
        .filter(|event| event["status"] == "completed")
        .map(|event| event["tool"].as_str().unwrap())
        .collect();
    assert!(
        completed.contains(&"schema_version") && completed.contains(&"type_info"),
        "{events:#?}"
    );

    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert!(
        first.body["system"]
            .as_str()
            .is_some_and(|system| !system.is_empty())
    );
    assert_eq!(
        first.body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "What is a Document?",
                                            "cache_control": {"type": "ephemeral"}}]}])
    );
    let tools = first.body["tools"].as_array().unwrap();
    assert!(tools.iter().any(|tool| tool["name"] == "kg__type_info"));
    let cached: Vec<usize> = (0..tools.len())
        .filter(|&index| tools[index].get("cache_control").is_some())
        .collect();
    assert_eq!(
        cached,
        [tools.len() - 1],
        "only the last tool carries cache_control"
    );
    assert_eq!(first.body["tool_choice"], json!({"type": "auto"}));

    // Step two: the assistant's tool_use blocks, then all three results in one user turn.
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(messages[1]["role"], "assistant");
    let uses: Vec<&str> = blocks(&messages[1])
        .iter()
        .filter(|block| block["type"] == "tool_use")
        .map(|block| block["id"].as_str().unwrap())
        .collect();
    assert_eq!(uses, ["toolu_schema", "toolu_type", "toolu_bad"]);
    assert_eq!(messages[2]["role"], "user");
    let results = blocks(&messages[2]);
    assert_eq!(results.len(), 3, "{results:#?}");
    let result_ids: Vec<&str> = results
        .iter()
        .map(|block| block["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(result_ids, uses);
    assert!(results.iter().all(|block| block["type"] == "tool_result"));
    assert!(
        results[1]["content"].as_str().unwrap().contains("Document"),
        "{results:#?}"
    );
    assert!(results[0].get("is_error").is_none() && results[1].get("is_error").is_none());
    assert_eq!(results[2]["is_error"], true, "{results:#?}");
    assert_eq!(results[2]["cache_control"], json!({"type": "ephemeral"}));

    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let stored = server.stored_messages(conversation_id).await;
    let answer = stored.last().unwrap();
    assert_eq!(answer.content, "Documents have titles.");
    assert_eq!(answer.metadata["usage"]["prompt_tokens"], 25);
    assert_eq!(answer.metadata["usage"]["completion_tokens"], 5);

    // The next question replays the stored history in Anthropic's shape, is_error included.
    server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "Sure?"}))
        .await;
    let replayed = fake.requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let roles: Vec<&str> = replayed
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user", "assistant", "user"],
        "{replayed:#?}"
    );
    assert_eq!(blocks(&replayed[2])[2]["is_error"], true, "{replayed:#?}");
    assert!(blocks(&replayed[2])[2].get("cache_control").is_none());
    assert_eq!(
        blocks(&replayed[4]).last().unwrap(),
        &json!({"type": "text", "text": "Sure?", "cache_control": {"type": "ephemeral"}})
    );
}
