//! The offline planner (no key) against `server-everything`, a server we did not write: it
//! picks a tool from names and descriptions alone, fills its arguments from the question, and
//! answers from the result; with nothing fitting it says what it can do.

use crate::support::chat::{ChatOptions, ChatServer, answer_text, everything_stdio, of_type};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offline_planner_uses_server_everything_tools() {
    let server = ChatServer::start(ChatOptions::default()).await;
    server.register_server(everything_stdio("everything")).await;

    let events = server
        .ask_and_wait(json!({"message": "What is the sum of 2 and 3?"}))
        .await;
    let completed: Vec<_> = of_type(&events, "mcp_tool")
        .into_iter()
        .filter(|event| event["status"] == "completed")
        .collect();
    assert_eq!(completed.len(), 1, "{events:#?}");
    assert_eq!(completed[0]["server"], "everything");
    assert_eq!(completed[0]["tool"], "get-sum");
    let answer = answer_text(&events);
    assert!(answer.contains('5'), "{answer}");

    let events = server
        .ask_and_wait(json!({"message": "Echo the message hello world"}))
        .await;
    let tools: Vec<_> = of_type(&events, "mcp_tool")
        .iter()
        .map(|event| event["tool"].clone())
        .collect();
    assert!(tools.contains(&json!("echo")), "{events:#?}");
    assert!(answer_text(&events).contains("hello world"), "{events:#?}");
}
