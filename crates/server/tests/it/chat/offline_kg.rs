//! The embedded default, end to end: the offline planner (no key) answering the six example
//! questions, and questions about objects named without their type, through `POST /chat/stream` with our own knowledge-graph server at `/mcp`,
//! reached through the MCP client like any upstream, with the user's token forwarded.

use crate::support::chat::{ChatOptions, ChatServer, answer_text, of_type};
use serde_json::{Value, json};

/// Asks in a new conversation; checks the stream's shape and that the kg server answered.
async fn ask(server: &ChatServer, question: &str, expected_tools: &[&str]) -> (Vec<Value>, String) {
    let events = server.ask_and_wait(json!({"message": question})).await;
    assert_eq!(events[0]["type"], "meta", "{events:#?}");
    assert_eq!(events[0]["provider"], "offline");
    assert!(events.last().unwrap()["type"] == "done");
    assert_eq!(
        events.last().unwrap()["outcome"],
        "completed",
        "{events:#?}"
    );
    assert!(
        of_type(&events, "error").is_empty(),
        "{question}: {events:#?}"
    );
    let completed: Vec<&str> = of_type(&events, "mcp_tool")
        .iter()
        .filter(|event| event["status"] == "completed")
        .map(|event| {
            assert_eq!(event["server"], "kg");
            event["tool"].as_str().unwrap()
        })
        .collect();
    for tool in expected_tools {
        assert!(
            completed.contains(tool),
            "{question}: expected a completed {tool} call, got {completed:?}\n{events:#?}"
        );
    }
    let answer = answer_text(&events);
    assert!(!answer.trim().is_empty(), "{question}: empty answer");
    (events, answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_six_example_questions_are_answered_from_a_fresh_start_without_a_key() {
    let server = ChatServer::start(ChatOptions::default()).await;

    let (events, answer) = ask(
        &server,
        "What types of objects are in my knowledge base?",
        &["type_info"],
    )
    .await;
    let offered: Vec<&str> = events[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(offered.contains(&"kg__schema_version"), "{offered:?}");
    let mut sorted = offered.clone();
    sorted.sort();
    assert_eq!(
        offered, sorted,
        "tools are offered in a deterministic (sorted) order"
    );
    for type_name in ["Document", "Project"] {
        assert!(answer.contains(type_name), "{answer}");
    }

    let (_, answer) = ask(&server, "What's the schema version?", &["schema_version"]).await;
    assert!(answer.to_lowercase().contains("version"), "{answer}");

    let (_, answer) = ask(
        &server,
        "Show me the recent changes to the schema",
        &["schema_changelog"],
    )
    .await;
    assert!(!answer.contains("could not"), "{answer}");

    let (_, answer) = ask(&server, "Tell me about the Document type", &["type_info"]).await;
    assert!(answer.contains("Document"), "{answer}");

    let (_, answer) = ask(
        &server,
        "What relationships can I create between Documents and Projects?",
        &["relationship_info"],
    )
    .await;
    assert!(
        answer.contains("Document") && answer.contains("Project"),
        "{answer}"
    );

    let (events, answer) = ask(
        &server,
        "Show me Projects related to the Product Roadmap document",
        &["traverse"],
    )
    .await;
    assert!(
        answer.contains("Product Roadmap") && answer.to_lowercase().contains("project"),
        "{answer}"
    );

    // Everything the stream showed was stored, in order, and replays the same way.
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    let detail = server.conversation(&conversation_id).await;
    let roles: Vec<&str> = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles.first(), Some(&"user"));
    assert_eq!(roles.last(), Some(&"assistant"));
    assert!(roles.contains(&"tool"), "{roles:?}");
    for call in detail["tool_calls"].as_array().unwrap() {
        assert_eq!(call["state"], "completed", "{call}");
    }
    let replay = server.attach(&conversation_id).await.until_done().await;
    assert_eq!(replay[0]["replay"], true);
    assert_eq!(answer_text(&replay), answer);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_about_an_object_named_without_its_type_is_answered_from_the_sample_graph() {
    let server = ChatServer::start(ChatOptions::default()).await;

    // The sample graph: the Product Roadmap belongs to the Q4 Planning project, which the
    // Platform team owns (its author, Ana Silva, is also in Platform).
    let (events, answer) = ask(
        &server,
        "Which team owns the product roadmap?",
        &["search_objects", "traverse"],
    )
    .await;
    let calls: Vec<(&str, &Value)> = of_type(&events, "mcp_tool")
        .iter()
        .filter(|event| event["status"] == "completed")
        .map(|event| (event["tool"].as_str().unwrap(), &event["arguments"]))
        .collect();
    assert_eq!(
        calls[0],
        ("search_objects", &json!({"query": "product roadmap"})),
        "{calls:?}"
    );
    let (_, last_traverse) = calls.last().unwrap();
    assert_eq!(
        last_traverse["start_id"], "doc-product-roadmap",
        "{calls:?}"
    );
    assert_eq!(last_traverse["target_type"], "Team", "{calls:?}");
    assert_eq!(
        answer,
        "The **Product Roadmap** document is related to 1 team:\n\n- **Platform** (2 relationships away, the last `owned_by`)\n"
    );

    let (_, answer) = ask(
        &server,
        "How is Ana Silva related to the platform team?",
        &["search_objects", "find_path"],
    )
    .await;
    assert_eq!(
        answer,
        "**Ana Silva** and **Platform** are connected by 1 relationship: Ana Silva -member_of-> Platform\n"
    );
}
