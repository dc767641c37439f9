//! Which model answers, through the API: a conversation's own provider and model over its
//! bud's (checked: an unknown provider is a 422 naming the field), a bud's fallback chain
//! asked when its provider fails before answering (503 after retries; a 400 is not retried
//! elsewhere), the answer's stored metadata and final `done` event naming who answered; and the
//! token totals per conversation, person and workspace, with the Prometheus counters.

use crate::support::chat::member_token;
use crate::support::chat::{ChatOptions, ChatServer, SseReader, answer_text, of_type};
use crate::support::{call, error_of, metric_lines};
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply};

async fn json_of(response: reqwest::Response, status: u16) -> Value {
    let actual = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(actual, status, "{text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

async fn post(server: &ChatServer, token: &str, path: &str, body: Value) -> Value {
    json_of(
        call(server, token, Method::POST, path, Some(body)).await,
        201,
    )
    .await
}

async fn get(server: &ChatServer, token: &str, path: &str) -> Value {
    json_of(call(server, token, Method::GET, path, None).await, 200).await
}

async fn ask_as(server: &ChatServer, token: &str, conversation_id: &Value) -> Vec<Value> {
    let response = server
        .client
        .post(server.url("/chat/stream"))
        .bearer_auth(token)
        .json(&json!({"conversation_id": conversation_id, "message": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    SseReader::new(response).until_done().await
}

/// A stored OpenAI-compatible provider `name` at `fake`.
async fn add_provider(server: &ChatServer, name: &str, fake: &FakeOpenAi, model: &str) {
    post(
        server,
        &server.token,
        "/api/llm/providers",
        json!({"name": name, "kind": "openai", "base_url": fake.base_url(),
            "api_key": format!("sk-{name}"), "default_model": model}),
    )
    .await;
}

/// The last `done` event, and the assistant message it names as stored.
async fn done_and_answer(server: &ChatServer, events: &[Value]) -> (Value, Value) {
    let done = of_type(events, "done").pop().expect("a done event").clone();
    let detail = server
        .conversation(done["conversation_id"].as_str().unwrap())
        .await;
    let message = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["id"] == done["message_id"])
        .cloned()
        .expect("the answer is stored");
    (done, message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_answers_with_its_own_provider_and_model_over_its_buds() {
    let default_fake = FakeOpenAi::start().await;
    let lab_fake = FakeOpenAi::start().await;
    let server = ChatServer::start(ChatOptions::openai(&default_fake.base_url())).await;
    let admin = server.token.clone();
    add_provider(&server, "lab", &lab_fake, "lab-default").await;
    let bud = post(
        &server,
        &admin,
        "/api/buds",
        json!({"name": "Plain", "model": "bud-model"}),
    )
    .await;

    // Unknown provider: refused with the field and the way to find the names.
    let response = call(
        &server,
        &admin,
        Method::POST,
        "/chat/conversations",
        Some(json!({"bud_id": bud["id"], "provider": "nope"})),
    )
    .await;
    assert_eq!(response.status(), 422);
    let (_, message) = error_of(response).await;
    assert!(
        message.starts_with("provider: unknown provider 'nope'")
            && message.contains("GET /api/llm/providers"),
        "{message}"
    );

    let conversation = post(
        &server,
        &admin,
        "/chat/conversations",
        json!({"bud_id": bud["id"], "provider": "lab", "model": "lab-large"}),
    )
    .await;
    assert_eq!(conversation["provider"], "lab");
    assert_eq!(conversation["model"], "lab-large");
    let path = format!(
        "/chat/conversations/{}",
        conversation["id"].as_str().unwrap()
    );

    lab_fake.enqueue(ScriptedReply::text(&["from the lab"]));
    let events = ask_as(&server, &admin, &conversation["id"]).await;
    assert_eq!(answer_text(&events), "from the lab");
    assert_eq!(lab_fake.requests()[0].body["model"], "lab-large");
    assert_eq!(events[0]["provider_name"], "lab");
    let (done, message) = done_and_answer(&server, &events).await;
    assert_eq!(done["provider_name"], "lab");
    assert_eq!(done["provider"], "openai");
    assert_eq!(done["model"], "lab-large");
    assert!(done.get("fallback_from").is_none(), "{done}");
    assert_eq!(message["metadata"]["provider_name"], "lab");
    assert_eq!(message["metadata"]["model"], "lab-large");

    // An unknown provider in a change is refused and changes nothing.
    let refused = call(
        &server,
        &admin,
        Method::PATCH,
        &path,
        Some(json!({"provider": "nope"})),
    )
    .await;
    assert_eq!(refused.status(), 422);
    let (_, message) = error_of(refused).await;
    assert!(
        message.starts_with("provider: unknown provider 'nope'"),
        "{message}"
    );

    // Back to the bud's provider (`default`) with a model of the conversation's own.
    let changed = json_of(
        call(
            &server,
            &admin,
            Method::PATCH,
            &path,
            Some(json!({"provider": null, "model": "chosen-here"})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(changed["provider"], Value::Null);
    assert_eq!(changed["model"], "chosen-here");
    default_fake.enqueue(ScriptedReply::text(&["from default"]));
    let events = ask_as(&server, &admin, &conversation["id"]).await;
    assert_eq!(answer_text(&events), "from default");
    assert_eq!(default_fake.requests()[0].body["model"], "chosen-here");
    let (done, _) = done_and_answer(&server, &events).await;
    assert_eq!(done["provider_name"], "default");
    assert_eq!(done["model"], "chosen-here");

    // Without a choice of its own, the bud's model answers.
    json_of(
        call(
            &server,
            &admin,
            Method::PATCH,
            &path,
            Some(json!({"model": null})),
        )
        .await,
        200,
    )
    .await;
    default_fake.enqueue(ScriptedReply::text(&["bud again"]));
    let events = ask_as(&server, &admin, &conversation["id"]).await;
    assert_eq!(answer_text(&events), "bud again");
    assert_eq!(default_fake.requests()[1].body["model"], "bud-model");
    assert_eq!(lab_fake.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bud_falls_back_to_the_next_provider_when_its_own_fails_before_answering() {
    let default_fake = FakeOpenAi::start().await;
    let flaky_fake = FakeOpenAi::start().await;
    let server = ChatServer::start(ChatOptions::openai(&default_fake.base_url())).await;
    let admin = server.token.clone();
    add_provider(&server, "flaky", &flaky_fake, "flaky-model").await;

    let refused = call(
        &server,
        &admin,
        Method::POST,
        "/api/buds",
        Some(json!({"name": "Bad chain", "provider": "flaky",
            "fallbacks": [{"provider": "default"}, {"provider": "ghost"}]})),
    )
    .await;
    assert_eq!(refused.status(), 422);
    let (_, message) = error_of(refused).await;
    assert!(
        message.starts_with("fallbacks[1].provider: unknown provider 'ghost'"),
        "{message}"
    );

    let bud = post(
        &server,
        &admin,
        "/api/buds",
        json!({"name": "Resilient", "provider": "flaky",
            "fallbacks": [{"provider": "default", "model": "steady-model"}]}),
    )
    .await;
    assert_eq!(
        bud["fallbacks"],
        json!([{"provider": "default", "model": "steady-model"}])
    );
    let conversation = post(
        &server,
        &admin,
        "/chat/conversations",
        json!({"bud_id": bud["id"]}),
    )
    .await;

    // The primary answers 503 to the first try and every retry.
    for _ in 0..4 {
        flaky_fake.enqueue(ScriptedReply::error_status(503, "upstream unavailable"));
    }
    default_fake.enqueue(ScriptedReply::text(&["steady ", "answer"]));
    let events = ask_as(&server, &admin, &conversation["id"]).await;
    assert_eq!(answer_text(&events), "steady answer");
    assert!(of_type(&events, "error").is_empty(), "{events:?}");
    assert_eq!(flaky_fake.requests().len(), 4, "one try and three retries");
    assert_eq!(default_fake.requests()[0].body["model"], "steady-model");
    let (done, message) = done_and_answer(&server, &events).await;
    assert_eq!(done["outcome"], "completed");
    assert_eq!(done["provider_name"], "default");
    assert_eq!(done["model"], "steady-model");
    assert_eq!(done["fallback_from"][0]["provider_name"], "flaky");
    assert_eq!(done["fallback_from"][0]["model"], "flaky-model");
    assert_eq!(
        done["fallback_from"][0]["error_code"],
        "llm_upstream_status"
    );
    assert_eq!(message["metadata"]["provider_name"], "default");
    assert_eq!(
        message["metadata"]["fallback_from"][0]["provider_name"],
        "flaky"
    );
    // The replay of the finished answer says the same.
    let replayed = server
        .attach(conversation["id"].as_str().unwrap())
        .await
        .until_done()
        .await;
    let replayed_done = of_type(&replayed, "done").pop().unwrap();
    assert_eq!(replayed_done["provider_name"], "default");
    assert_eq!(replayed_done["fallback_from"][0]["provider_name"], "flaky");
    assert_eq!(
        metric_lines(&server, "chat_llm_fallbacks_total", &["provider=\"flaky\""])
            .await
            .len(),
        1
    );

    // A request the provider refuses (400) is not sent elsewhere: the answer fails.
    flaky_fake.enqueue(ScriptedReply::error_status(400, "bad request"));
    let events = ask_as(&server, &admin, &conversation["id"]).await;
    let errors = of_type(&events, "error");
    assert_eq!(errors[0]["code"], "llm_upstream_status", "{events:?}");
    let done = of_type(&events, "done").pop().unwrap();
    assert_eq!(done["outcome"], "failed");
    assert_eq!(done["provider_name"], "flaky");
    assert_eq!(default_fake.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_is_totalled_per_conversation_person_and_workspace() {
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    let admin = server.token.clone();
    let member = member_token(&server, "member", "chat:use").await;
    let member_id = get(&server, &member, "/api/me").await["user_id"].clone();

    // `ScriptedReply::text` reports 11 prompt tokens and one completion token per part.
    let mine = post(&server, &member, "/chat/conversations", json!({})).await;
    fake.enqueue(ScriptedReply::text(&["a", "b"]));
    ask_as(&server, &member, &mine["id"]).await;
    fake.enqueue(ScriptedReply::text(&["c"]));
    ask_as(&server, &member, &mine["id"]).await;
    let admins = post(&server, &admin, "/chat/conversations", json!({})).await;
    fake.enqueue(ScriptedReply::text(&["d", "e", "f"]));
    ask_as(&server, &admin, &admins["id"]).await;

    let path = format!("/chat/conversations/{}/usage", mine["id"].as_str().unwrap());
    let conversation = get(&server, &member, &path).await;
    assert_eq!(conversation["total"]["steps"], 2);
    assert_eq!(conversation["total"]["input_tokens"], 22);
    assert_eq!(conversation["total"]["output_tokens"], 3);
    assert_eq!(conversation["total"]["cache_read_tokens"], 0);
    assert_eq!(conversation["by_model"][0]["provider"], "default");
    assert_eq!(conversation["by_model"][0]["model"], "fake-model");
    assert_eq!(conversation["by_model"][0]["output_tokens"], 3);
    // Another member's conversation is not found; an admin sees it.
    let other = member_token(&server, "other", "chat:use").await;
    assert_eq!(
        call(&server, &other, Method::GET, &path, None)
            .await
            .status(),
        404
    );
    assert_eq!(
        get(&server, &admin, &path).await["total"]["input_tokens"],
        22
    );

    let own = get(&server, &member, "/api/usage").await;
    assert_eq!(own["total"]["input_tokens"], 22);
    assert_eq!(own["total"]["output_tokens"], 3);
    let admin_own = get(&server, &admin, "/api/usage").await;
    assert_eq!(admin_own["total"]["output_tokens"], 3);
    assert_eq!(admin_own["total"]["input_tokens"], 11);
    let someone_else = format!(
        "/api/usage?user_id={}",
        get(&server, &admin, "/api/me").await["user_id"]
            .as_str()
            .unwrap()
    );
    let refused = call(&server, &member, Method::GET, &someone_else, None).await;
    assert_eq!(refused.status(), 403);
    let (_, message) = error_of(refused).await;
    assert!(message.contains("only an admin"), "{message}");
    let by_admin = get(
        &server,
        &admin,
        &format!("/api/usage?user_id={}", member_id.as_str().unwrap()),
    )
    .await;
    assert_eq!(by_admin["total"]["input_tokens"], 22);

    assert_eq!(
        call(&server, &member, Method::GET, "/api/usage/workspace", None)
            .await
            .status(),
        403
    );
    let workspace = get(&server, &admin, "/api/usage/workspace").await;
    assert_eq!(workspace["total"]["steps"], 3);
    assert_eq!(workspace["total"]["input_tokens"], 33);
    assert_eq!(workspace["total"]["output_tokens"], 6);
    let later = get(
        &server,
        &admin,
        "/api/usage/workspace?since=2999-01-01T00:00:00Z",
    )
    .await;
    assert_eq!(later["total"]["steps"], 0);
    assert_eq!(later["since"], "2999-01-01T00:00:00Z");

    let counted = |direction: &'static str| {
        let server = &server;
        async move {
            metric_lines(
                server,
                "chat_llm_tokens_total",
                &[
                    "provider=\"default\"",
                    "model=\"fake-model\"",
                    &format!("direction=\"{direction}\""),
                ],
            )
            .await
        }
    };
    assert!(
        counted("input").await[0].ends_with(" 33"),
        "{:?}",
        counted("input").await
    );
    assert!(
        counted("output").await[0].ends_with(" 6"),
        "{:?}",
        counted("output").await
    );
}
