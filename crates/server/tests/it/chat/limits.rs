//! The knobs and edges of a turn: tools switched off, the step limit, results too large for
//! the model (cut for it, readable in full through the API), and ephemeral servers brought by
//! the request (used, cached, refused when the URL policy says no).

use crate::support::chat::{ChatOptions, ChatServer, Peer, answer_text, everything_stdio, of_type};
use crate::support::metric_lines;
use serde_json::{Value, json};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_mcp_tools_off_the_model_is_offered_nothing() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text(&["no tools here"]));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.chat.enable_mcp_tools = false;
    let server = ChatServer::start(options).await;

    let events = server
        .ask_and_wait(json!({"message": "what types exist?"}))
        .await;
    assert_eq!(events[0]["tools"], json!([]));
    let request = &fake.requests()[0].body;
    assert!(request.get("tools").is_none(), "{request}");
    assert!(request.get("tool_choice").is_none(), "{request}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_last_step_the_model_must_answer_without_tools() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "c1",
        "everything__echo",
        json!({"message": "one"}),
    )]));
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "c2",
        "everything__echo",
        json!({"message": "two"}),
    )]));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.chat.max_tool_steps = 1;
    let server = ChatServer::start(options).await;
    server.register_server(everything_stdio("everything")).await;

    let events = server.ask_and_wait(json!({"message": "echo twice"})).await;
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body["tool_choice"], "auto");
    assert_eq!(requests[1].body["tool_choice"], "none");
    assert_eq!(
        of_type(&events, "mcp_tool").len(),
        2,
        "only the first step's call ran: {events:#?}"
    );
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["code"], "max_steps_reached");
    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let stored = server.stored_messages(conversation_id).await;
    assert!(
        stored.last().unwrap().tool_calls.is_empty(),
        "calls that were not made are not stored as made"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_result_reaches_the_model_cut_and_is_readable_in_full_in_pages() {
    let message: String = (0..30_000)
        .map(|index| char::from(b'a' + (index % 26) as u8))
        .collect();
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "c1",
        "everything__echo",
        json!({"message": message}),
    )]));
    fake.enqueue(ScriptedReply::text(&["that was long"]));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.chat.tool_result_max_chars = 1_000;
    let server = ChatServer::start(options).await;
    server.register_server(everything_stdio("everything")).await;

    let events = server.ask_and_wait(json!({"message": "echo a lot"})).await;
    let full = format!("Echo: {message}");
    let sent = fake.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(sent.chars().count() <= 1_000, "{}", sent.len());
    assert!(
        sent.starts_with("Echo: abc") && sent.contains("characters omitted"),
        "{sent}"
    );
    assert!(
        full.ends_with(&sent[sent.len() - 100..]),
        "the tail is kept"
    );

    let completed = of_type(&events, "mcp_tool")
        .into_iter()
        .find(|event| event["status"] == "completed")
        .unwrap()
        .clone();
    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let tool_call_id = completed["tool_call_id"].as_str().unwrap();
    let mut offset = 0;
    let mut read = String::new();
    loop {
        let path = format!(
            "/chat/conversations/{conversation_id}/tool-calls/{tool_call_id}/result?offset={offset}&limit=12000"
        );
        let response = server.send(reqwest::Method::GET, &path, None).await;
        assert_eq!(response.status(), 200);
        let page: Value = response.json().await.unwrap();
        assert_eq!(page["total_chars"], full.chars().count());
        read.push_str(page["text"].as_str().unwrap());
        match page["next_offset"].as_u64() {
            Some(next) => offset = next as usize,
            None => break,
        }
    }
    assert_eq!(read, full);
    let stored_tool_message = server
        .stored_messages(conversation_id)
        .await
        .into_iter()
        .find(|message| message.role.as_str() == "tool")
        .unwrap();
    assert_eq!(stored_tool_message.metadata["truncated"], true);
    assert_eq!(
        stored_tool_message.metadata["result_chars"],
        full.chars().count()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ephemeral_servers_are_used_for_the_request_only_and_the_url_policy_applies() {
    let peer = Peer::everything_http();
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "c1",
        "browser__echo",
        json!({"message": "from the browser"}),
    )]));
    fake.enqueue(ScriptedReply::text(&["done"]));
    fake.enqueue(ScriptedReply::text(&["no browser tools now"]));
    // The peer listens on loopback, which servers sent with a request reach only when allowed.
    let mut options = ChatOptions::openai(&fake.base_url());
    options.mcp.request_url_policy.allow_loopback = true;
    let server = ChatServer::start(options).await;

    let events = server
        .ask_and_wait(json!({"message": "echo via the browser's server", "mcp_servers": [{"name": "browser", "url": peer.url()}]}))
        .await;
    let offered: Vec<&str> = events[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(offered.contains(&"browser__echo"), "{offered:?}");
    let completed: Vec<&Value> = of_type(&events, "mcp_tool")
        .into_iter()
        .filter(|event| event["status"] == "completed")
        .collect();
    assert_eq!(completed.len(), 1, "{events:#?}");
    assert_eq!(completed[0]["server"], "browser");
    assert_eq!(answer_text(&events), "done");
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    let records = server.stored_tool_calls(&conversation_id).await;
    assert_eq!(records[0].server_id, None);
    assert_eq!(records[0].server_name, "browser");

    // The next request without mcp_servers does not see them.
    let events = server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "again"}))
        .await;
    assert!(
        !events[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["server"] == "browser")
    );

    // Refused before anything starts, naming the field.
    for (entry, field) in [
        (
            json!({"name": "meta", "url": "http://169.254.169.254/latest"}),
            "mcp_servers[0].url",
        ),
        (
            json!({"name": "bad name", "url": peer.url()}),
            "mcp_servers[0].name",
        ),
        (
            json!({"name": "kg", "url": peer.url()}),
            "mcp_servers[0].name",
        ),
    ] {
        let response = server
            .send(
                reqwest::Method::POST,
                "/chat/stream",
                Some(json!({"message": "hi", "mcp_servers": [entry]})),
            )
            .await;
        assert_eq!(response.status(), 422);
        let body: Value = response.json().await.unwrap();
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with(field),
            "{body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ephemeral_session_is_closed_after_its_turn_and_counted_under_one_label() {
    let peer = Peer::everything_http();
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "c1",
        "browser_7f3a__echo",
        json!({"message": "from the browser"}),
    )]));
    fake.enqueue(ScriptedReply::text(&["done"]));
    // The peer listens on loopback, which request servers may reach only when an admin allows it.
    let mut options = ChatOptions::openai(&fake.base_url());
    options.mcp.request_url_policy.allow_loopback = true;
    let server = ChatServer::start(options).await;

    let events = server
        .ask_and_wait(json!({"message": "echo via the browser's server", "mcp_servers": [{"name": "browser_7f3a", "url": peer.url()}]}))
        .await;
    assert_eq!(answer_text(&events), "done");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let closed = loop {
        let closed = metric_lines(
            &server,
            "mcp_sessions_closed_total",
            &[r#"server="ephemeral""#, r#"reason="closed""#],
        )
        .await;
        if !closed.is_empty() || std::time::Instant::now() > deadline {
            break closed;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(
        closed.len(),
        1,
        "the turn's ephemeral session must be closed when the turn ends"
    );
    let active = metric_lines(&server, "mcp_sessions_active", &[r#"server="ephemeral""#]).await;
    assert_eq!(active.len(), 1, "{active:?}");
    assert!(active[0].ends_with(" 0"), "{active:?}");
    let calls = metric_lines(&server, "mcp_tool_calls_total", &[r#"server="ephemeral""#]).await;
    assert_eq!(calls.len(), 1, "{calls:?}");
    for metric in [
        "mcp_sessions_started_total",
        "mcp_sessions_active",
        "mcp_tool_calls_total",
        "mcp_tool_call_duration_seconds",
        "approvals_requested_total",
    ] {
        let named = metric_lines(&server, metric, &["browser_7f3a"]).await;
        assert!(
            named.is_empty(),
            "a per-request name became a label: {named:?}"
        );
    }
}
