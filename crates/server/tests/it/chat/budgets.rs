//! Monthly token budgets: past a person's budget their new question is refused with 429 and a
//! typed body (budget, use, reset time, `Retry-After`) while other people go on; past the
//! workspace's, everyone is refused. The answer that crosses a budget finishes.

use crate::support::chat::member_token;
use crate::support::chat::{ChatOptions, ChatServer, SseReader, of_type};
use serde_json::{Value, json};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply};

/// Asks in a new conversation as `token`: the response, unread.
async fn ask_as(server: &ChatServer, token: &str) -> reqwest::Response {
    server
        .client
        .post(server.url("/chat/stream"))
        .bearer_auth(token)
        .json(&json!({"message": "hello"}))
        .send()
        .await
        .unwrap()
}

/// Asks and reads the answer to its end; returns `done`.
async fn answered(server: &ChatServer, token: &str) -> Value {
    let response = ask_as(server, token).await;
    assert_eq!(response.status(), 200);
    let events = SseReader::new(response).until_done().await;
    of_type(&events, "done").pop().unwrap().clone()
}

async fn refused(server: &ChatServer, token: &str) -> (Value, u64) {
    let response = ask_as(server, token).await;
    assert_eq!(response.status(), 429);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    (response.json().await.unwrap(), retry_after)
}

fn with_budgets(fake: &FakeOpenAi, workspace: u64, user: u64) -> ChatOptions {
    let mut options = ChatOptions::openai(&fake.base_url());
    options.chat.monthly_token_budget_workspace = workspace;
    options.chat.monthly_token_budget_user = user;
    options
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_past_their_monthly_budget_is_refused_and_others_are_not() {
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(with_budgets(&fake, 0, 30)).await;
    let member = member_token(&server, "member", "chat:use").await;
    // Each answer: 11 input tokens + 2 output tokens = 13.
    for _ in 0..4 {
        fake.enqueue(ScriptedReply::text(&["a", "b"]));
    }
    answered(&server, &member).await;
    answered(&server, &member).await;
    // 26 < 30: accepted, and it finishes even though it ends past the budget.
    let done = answered(&server, &member).await;
    assert_eq!(done["outcome"], "completed");

    let (body, retry_after) = refused(&server, &member).await;
    assert_eq!(body["error"]["code"], "token_budget_exceeded");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("your monthly token budget of 30 tokens is used up (39 used"),
        "{message}"
    );
    assert_eq!(body["budget"]["scope"], "user");
    assert_eq!(body["budget"]["limit_tokens"], 30);
    assert_eq!(body["budget"]["used_tokens"], 39);
    let resets_at: chrono::DateTime<chrono::Utc> = body["budget"]["resets_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let period_start: chrono::DateTime<chrono::Utc> = body["budget"]["period_start"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(period_start <= chrono::Utc::now() && chrono::Utc::now() < resets_at);
    assert!((1..=31 * 24 * 3600).contains(&retry_after), "{retry_after}");
    assert_eq!(
        fake.requests().len(),
        3,
        "the refused question reached no model"
    );

    // Another person is not affected.
    let done = answered(&server, &server.token).await;
    assert_eq!(done["outcome"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_workspace_budget_everyone_is_refused() {
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(with_budgets(&fake, 20, 0)).await;
    let member = member_token(&server, "member", "chat:use").await;
    fake.enqueue(ScriptedReply::text(&["a", "b"]));
    fake.enqueue(ScriptedReply::text(&["a", "b"]));
    answered(&server, &member).await;
    answered(&server, &server.token).await;
    for token in [member.as_str(), server.token.as_str()] {
        let (body, _) = refused(&server, token).await;
        assert_eq!(body["budget"]["scope"], "workspace");
        assert_eq!(body["budget"]["used_tokens"], 26);
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("the workspace's monthly token budget of 20 tokens"),
            "{message}"
        );
    }
}
