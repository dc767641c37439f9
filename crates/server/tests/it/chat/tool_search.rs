//! Large tool catalogs through the chat API: a registered server with 500 tools (the Python
//! SDK's low-level server) beside the kg server, and a scripted model that finds its tool with
//! `search_tools` and calls it. The first request carries only `chat.tool_budget` tools and
//! `search_tools`; the found tool is offered from the next step on and really runs.

use crate::support::chat::{ChatOptions, ChatServer, answer_text, of_type};
use serde_json::{Value, json};
use std::path::PathBuf;
use switchboard_core::TransportKind;
use switchboard_store::{NewServer, ServerConnectionConfig, ServerSecrets};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::interop::interop;

const TARGET: &str = "many__convert_currency";

fn many_tools_server() -> NewServer {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/many_tools_server.py");
    NewServer {
        name: "many".to_owned(),
        transport: TransportKind::Stdio,
        url: None,
        command: Some(interop(".venv/bin/python").to_string_lossy().into_owned()),
        args: vec![script.to_string_lossy().into_owned()],
        connection: ServerConnectionConfig::default(),
        secrets: ServerSecrets::default(),
        is_active: true,
    }
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_tool_catalog_is_searched_and_the_found_tool_called() {
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server
        .store
        .create_server(&server.workspace_id, many_tools_server())
        .await
        .unwrap();
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "search-1",
        "search_tools",
        json!({"query": "convert money to another currency"}),
    )]));
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "convert-1",
        TARGET,
        json!({"amount": 10, "from_currency": "EUR", "to_currency": "USD"}),
    )]));
    fake.enqueue(ScriptedReply::text(&["10 EUR is 20 USD."]));

    let events = server
        .ask_and_wait(json!({"message": "What is 10 EUR in USD?"}))
        .await;
    assert_eq!(answer_text(&events), "10 EUR is 20 USD.", "{events:#?}");
    let offered = events[0]["tools"].as_array().unwrap().len();
    assert!(offered >= 500, "the whole catalog is the turn's: {offered}");

    let requests = fake.requests();
    let first = tool_names(&requests[0].body);
    assert_eq!(
        first.len(),
        41,
        "40 budgeted tools and search_tools: {first:?}"
    );
    assert!(first.contains(&"search_tools".to_owned()));
    assert!(!first.contains(&TARGET.to_owned()), "{first:?}");
    let second = tool_names(&requests[1].body);
    assert!(second.contains(&TARGET.to_owned()), "{second:?}");
    assert!(second.len() <= 41 + 8, "{}", second.len());

    let tools = of_type(&events, "mcp_tool");
    let search = tools
        .iter()
        .find(|event| event["tool"] == "search_tools" && event["status"] == "completed")
        .expect("the search is shown like any call");
    assert_eq!(search["server"], "switchboard");
    let found: Value =
        serde_json::from_str(search["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(found["tools"][0]["name"], TARGET, "{found}");
    assert_eq!(found["catalog_size"].as_u64().unwrap() as usize, offered);
    let converted = tools
        .iter()
        .find(|event| event["tool"] == "convert_currency" && event["status"] == "completed")
        .expect("the found tool ran");
    assert!(
        converted["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("= 20 USD"),
        "{converted}"
    );
}
