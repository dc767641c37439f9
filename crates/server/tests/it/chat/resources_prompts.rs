//! Resources and prompts in the chat (issue 12), through the chat API against
//! `server-everything` (software we did not write) and the scripted fake OpenAI model: the
//! composer's listing and completions, a resource attached to a question reaching the model
//! (and the next turn, from the stored message), a prompt's messages inserted before the answer
//! with their roles, and the refusals (a server the conversation cannot use, an unreadable
//! resource, an empty question without a prompt).

use crate::support::chat::{ChatOptions, ChatServer, everything_stdio};
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_core::{ChatRole, MessageContext};
use switchboard_store::NewServer;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply};

async fn started() -> (FakeOpenAi, ChatServer) {
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server.register_server(everything_stdio("everything")).await;
    (fake, server)
}

async fn json_of(
    server: &ChatServer,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let response = server.send(method, path, body).await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The messages of a recorded request as (role, content text).
fn messages(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            let content = match &message["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|part| part["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                _ => String::new(),
            };
            (message["role"].as_str().unwrap().to_owned(), content)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_composer_lists_resources_templates_and_prompts_and_completes_arguments() {
    let (_fake, server) = started().await;
    let (status, items) = json_of(&server, Method::GET, "/chat/context-items", None).await;
    assert_eq!(status, 200, "{items}");
    let everything = items["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|server| server["server"] == "everything")
        .expect("everything is listed");
    let resources = everything["resources"].as_array().unwrap();
    assert!(resources.iter().any(|resource| resource["uri"]
        == "demo://resource/static/document/architecture.md"
        && resource["mime_type"] == "text/markdown"));
    assert!(everything["resource_templates"].as_array().unwrap().iter().any(
        |template| template["uri_template"] == "demo://resource/dynamic/text/{resourceId}"
    ));
    let prompt = everything["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|prompt| prompt["name"] == "completable-prompt")
        .expect("the completable prompt is listed");
    assert_eq!(prompt["arguments"][0]["name"], "department");
    assert_eq!(prompt["arguments"][0]["required"], true);

    let complete = |body: Value| {
        json_of(
            &server,
            Method::POST,
            "/chat/context-items/complete",
            Some(body),
        )
    };
    let (status, departments) = complete(json!({
        "server": "everything",
        "reference": {"type": "prompt", "name": "completable-prompt"},
        "argument": {"name": "department", "value": "Eng"},
    }))
    .await;
    assert_eq!(status, 200, "{departments}");
    assert_eq!(departments["values"], json!(["Engineering"]));
    let (_, names) = complete(json!({
        "server": "everything",
        "reference": {"type": "prompt", "name": "completable-prompt"},
        "argument": {"name": "name", "value": ""},
        "context_arguments": {"department": "Sales"},
    }))
    .await;
    assert_eq!(names["values"], json!(["David", "Eve", "Frank"]));
    let (_, ids) = complete(json!({
        "server": "everything",
        "reference": {"type": "resource", "uri": "demo://resource/dynamic/text/{resourceId}"},
        "argument": {"name": "resourceId", "value": "7"},
    }))
    .await;
    assert_eq!(ids["values"], json!(["7"]));

    let (status, refused) = complete(json!({
        "server": "nowhere",
        "reference": {"type": "prompt", "name": "x"},
        "argument": {"name": "a", "value": ""},
    }))
    .await;
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'nowhere'")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_resources_reach_the_model_and_later_turns_from_the_stored_question() {
    let (fake, server) = started().await;
    fake.enqueue(ScriptedReply::text(&["Read them."]));
    let events = server
        .ask_and_wait(json!({
            "message": "Summarise these",
            "attachments": [
                {"server": "everything", "uri": "demo://resource/static/document/architecture.md"},
                {"server": "everything", "uri": "demo://resource/dynamic/text/7"},
            ],
        }))
        .await;
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    let first = messages(&fake.requests()[0].body);
    let (role, question) = first.last().unwrap();
    assert_eq!(role, "user");
    assert!(question.starts_with("Summarise these\n\n<resource uri=\"demo://resource/static/document/architecture.md\" mime_type=\"text/markdown\">"), "{question}");
    assert!(
        question.contains("Resource 7: This is a plaintext resource"),
        "{question}"
    );

    let stored = server.stored_messages(&conversation_id).await;
    let user = stored
        .iter()
        .find(|message| message.role == ChatRole::User)
        .unwrap();
    assert_eq!(
        user.content, "Summarise these",
        "the person's text is kept apart"
    );
    let context = MessageContext::from_metadata(&user.metadata).unwrap();
    assert_eq!(context.attachments.len(), 2);
    assert_eq!(context.attachments[1].uri, "demo://resource/dynamic/text/7");

    // The next turn gives the model the same content, from the store.
    fake.enqueue(ScriptedReply::text(&["Still there."]));
    server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "And the second?"}))
        .await;
    let second = messages(&fake.requests()[1].body);
    assert!(
        second.iter().any(|(role, text)| role == "user"
            && text.contains("Resource 7: This is a plaintext resource"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_inserts_its_messages_before_the_answer() {
    let (fake, server) = started().await;
    fake.enqueue(ScriptedReply::text(&["Done."]));
    let events = server
        .ask_and_wait(json!({
            "prompt": {
                "server": "everything",
                "name": "completable-prompt",
                "arguments": {"department": "Engineering", "name": "Alice"},
            },
        }))
        .await;
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    let first = messages(&fake.requests()[0].body);
    assert_eq!(
        first.last().unwrap(),
        &(
            "user".to_owned(),
            "Please promote Alice to the head of the Engineering team.".to_owned()
        )
    );
    let detail = server.conversation(&conversation_id).await;
    assert_eq!(
        detail["conversation"]["title"],
        "/everything:completable-prompt"
    );
    assert_eq!(
        detail["messages"][0]["metadata"]["context"]["prompt"]["name"],
        "completable-prompt"
    );

    // A prompt with an embedded resource, then the person's own question after it.
    fake.enqueue(ScriptedReply::text(&["It says hello."]));
    server
        .ask_and_wait(json!({
            "conversation_id": conversation_id,
            "message": "What is in it?",
            "prompt": {
                "server": "everything",
                "name": "resource-prompt",
                "arguments": {"resourceType": "Text", "resourceId": "3"},
            },
        }))
        .await;
    let second = messages(&fake.requests()[1].body);
    let tail: Vec<&(String, String)> = second.iter().rev().take(3).collect();
    assert_eq!(tail[0], &("user".to_owned(), "What is in it?".to_owned()));
    assert!(
        tail[1]
            .1
            .contains("<resource uri=\"demo://resource/dynamic/text/3\""),
        "{:?}",
        tail[1]
    );
    assert!(
        tail[1]
            .1
            .contains("Resource 3: This is a plaintext resource")
    );
    assert!(
        tail[2].1.contains("Please analyze the following resource"),
        "{:?}",
        tail[2]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_prompts_only_come_from_usable_servers() {
    let (fake, server) = started().await;
    server
        .register_server(NewServer {
            is_active: false,
            ..everything_stdio("switched_off")
        })
        .await;
    let ask = |body: Value| json_of(&server, Method::POST, "/chat/stream", Some(body));
    let (status, refused) = ask(json!({
        "message": "read it",
        "attachments": [{"server": "switched_off", "uri": "demo://resource/static/document/architecture.md"}],
    }))
    .await;
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("attachments[0]")
    );

    let (status, refused) = ask(json!({
        "prompt": {"server": "switched_off", "name": "simple-prompt"},
    }))
    .await;
    assert_eq!(status, 422, "{refused}");

    let (status, unreadable) = ask(json!({
        "message": "read it",
        "attachments": [{"server": "everything", "uri": "demo://resource/dynamic/text/0"}],
    }))
    .await;
    assert_eq!(status, 502, "{unreadable}");

    let (status, empty) = ask(json!({"message": "  "})).await;
    assert_eq!(status, 422, "{empty}");
    assert!(
        fake.requests().is_empty(),
        "no refused question reached the model"
    );

    let (_, items) = json_of(&server, Method::GET, "/chat/context-items", None).await;
    let listed: Vec<&str> = items["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| server["server"].as_str().unwrap())
        .collect();
    assert!(listed.contains(&"everything"), "{listed:?}");
    assert!(!listed.contains(&"switched_off"), "{listed:?}");
}
