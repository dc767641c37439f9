//! Named LLM providers through the API: listed for every member without keys, managed by
//! admins (409 for the configuration file's and for taken names, 422 naming the field), their
//! models merged with the provider's own `GET /models`, and a stored provider answering a bud's
//! turn — Anthropic natively, and Azure OpenAI at a deployment then at the v1 endpoint (exact
//! path, query and `api-key` header checked on the fake).

use crate::support::call;
use crate::support::chat::member_token;
use crate::support::chat::{ChatOptions, ChatServer, answer_text};
use crate::support::error_of;
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_llm::{ModelInfo, NamedProviderConfig, ProviderKind};
use switchboard_test_support::fake_anthropic::{AnthropicReply, FakeAnthropic};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply};

async fn json_of(response: reqwest::Response, status: u16) -> Value {
    let actual = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(actual, status, "{text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

fn with_configured_local(mut options: ChatOptions) -> ChatOptions {
    options.llm.providers.push(NamedProviderConfig {
        name: "local".to_owned(),
        kind: ProviderKind::Offline,
        base_url: String::new(),
        api_key: None,
        model: String::new(),
        api_version: String::new(),
        models: vec![ModelInfo {
            id: "offline-planner".to_owned(),
            context_window: None,
            supports_images: false,
            supports_tools: true,
        }],
    });
    options
}

async fn ask_with_bud(server: &ChatServer, token: &str, bud: Value) -> Vec<Value> {
    let bud = json_of(
        call(server, token, Method::POST, "/api/buds", Some(bud)).await,
        201,
    )
    .await;
    let conversation = json_of(
        call(
            server,
            token,
            Method::POST,
            "/chat/conversations",
            Some(json!({"bud_id": bud["id"]})),
        )
        .await,
        201,
    )
    .await;
    server
        .ask_and_wait(json!({"conversation_id": conversation["id"], "message": "hello"}))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn providers_are_listed_without_keys_and_changed_only_by_admins() {
    let fake = FakeOpenAi::start().await;
    let anthropic = FakeAnthropic::start().await;
    let server =
        ChatServer::start(with_configured_local(ChatOptions::openai(&fake.base_url()))).await;
    let admin = server.token.clone();
    let member = member_token(&server, "member", "chat:use").await;

    let listed = json_of(
        call(&server, &member, Method::GET, "/api/llm/providers", None).await,
        200,
    )
    .await;
    let names: Vec<&str> = listed["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["default", "local"]);
    assert_eq!(listed["providers"][0]["kind"], "openai");
    assert_eq!(listed["providers"][0]["has_api_key"], true);
    assert_eq!(listed["providers"][0]["source"], "config");
    assert!(!listed.to_string().contains("sk-test"), "{listed}");

    let claude = json!({"name": "claude", "kind": "anthropic", "base_url": anthropic.base_url(),
        "api_key": "sk-ant-very-secret", "default_model": "claude-fake",
        "models": [{"id": "claude-fake", "context_window": 200000, "supports_images": true}]});
    let refused = call(
        &server,
        &member,
        Method::POST,
        "/api/llm/providers",
        Some(claude.clone()),
    )
    .await;
    assert_eq!(refused.status(), 403);
    let created = json_of(
        call(
            &server,
            &admin,
            Method::POST,
            "/api/llm/providers",
            Some(claude.clone()),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(created["has_api_key"], true);
    assert_eq!(created["source"], "api");
    assert_eq!(created["models"][0]["supports_tools"], true);
    assert!(
        !created.to_string().contains("sk-ant-very-secret"),
        "{created}"
    );
    let seen = json_of(
        call(
            &server,
            &member,
            Method::GET,
            "/api/llm/providers/claude",
            None,
        )
        .await,
        200,
    )
    .await;
    assert!(!seen.to_string().contains("sk-ant-very-secret"), "{seen}");

    let bad = [
        (claude.clone(), 409, "already exists"),
        (
            json!({"name": "default", "kind": "offline"}),
            409,
            "configuration file",
        ),
        (
            json!({"name": "local", "kind": "offline"}),
            409,
            "configuration file",
        ),
        (
            json!({"name": "Bad Name", "kind": "offline"}),
            422,
            "name: 'Bad Name' is not a provider name",
        ),
        (
            json!({"name": "nokey", "kind": "anthropic", "default_model": "m"}),
            422,
            "api_key: required",
        ),
        (
            json!({"name": "nomodel", "kind": "openai"}),
            422,
            "model: required",
        ),
        (
            json!({"name": "az", "kind": "azure_openai", "api_key": "k", "default_model": "d"}),
            422,
            "base_url: required",
        ),
    ];
    for (body, status, needle) in bad {
        let response = call(
            &server,
            &admin,
            Method::POST,
            "/api/llm/providers",
            Some(body.clone()),
        )
        .await;
        assert_eq!(response.status(), status, "{body}");
        let (_, message) = error_of(response).await;
        assert!(message.contains(needle), "{body}: {message}");
    }
    let read_only = call(
        &server,
        &admin,
        Method::PATCH,
        "/api/llm/providers/default",
        Some(json!({"default_model": "x"})),
    )
    .await;
    assert_eq!(read_only.status(), 409);
    let missing = call(
        &server,
        &admin,
        Method::PATCH,
        "/api/llm/providers/nope",
        Some(json!({"default_model": "x"})),
    )
    .await;
    assert_eq!(missing.status(), 404);
    let member_patch = call(
        &server,
        &member,
        Method::PATCH,
        "/api/llm/providers/claude",
        Some(json!({"default_model": "x"})),
    )
    .await;
    assert_eq!(member_patch.status(), 403);
    let patched = json_of(
        call(
            &server,
            &admin,
            Method::PATCH,
            "/api/llm/providers/claude",
            Some(json!({"default_model": "claude-fake-2"})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(patched["default_model"], "claude-fake-2");
    assert_eq!(
        patched["has_api_key"], true,
        "a patch without api_key keeps the key"
    );

    // A bud answering with the stored provider: Anthropic's wire, the sealed key sent.
    anthropic.enqueue(AnthropicReply::text(&["from claude"]));
    let events = ask_with_bud(
        &server,
        &member,
        json!({"name": "Claude bud", "provider": "claude"}),
    )
    .await;
    assert_eq!(answer_text(&events), "from claude");
    let request = &anthropic.requests()[0];
    assert_eq!(request.header("x-api-key"), Some("sk-ant-very-secret"));
    assert_eq!(request.body["model"], "claude-fake-2");
    let in_use = call(
        &server,
        &admin,
        Method::DELETE,
        "/api/llm/providers/claude",
        None,
    )
    .await;
    assert_eq!(in_use.status(), 409);
    let (_, message) = error_of(in_use).await;
    assert!(message.contains("Claude bud"), "{message}");
    let buds = json_of(
        call(&server, &admin, Method::GET, "/api/buds", None).await,
        200,
    )
    .await;
    let bud_id = buds["buds"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        call(
            &server,
            &admin,
            Method::DELETE,
            &format!("/api/buds/{bud_id}"),
            None
        )
        .await
        .status(),
        204
    );
    assert_eq!(
        call(
            &server,
            &admin,
            Method::DELETE,
            "/api/llm/providers/claude",
            None
        )
        .await
        .status(),
        204
    );
    assert_eq!(
        call(
            &server,
            &member,
            Method::GET,
            "/api/llm/providers/claude",
            None
        )
        .await
        .status(),
        404
    );
    assert_eq!(
        call(
            &server,
            &admin,
            Method::DELETE,
            "/api/llm/providers/local",
            None
        )
        .await
        .status(),
        409
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_models_merge_the_configuration_with_the_providers_listing() {
    let fake = FakeOpenAi::start().await;
    let server =
        ChatServer::start(with_configured_local(ChatOptions::openai(&fake.base_url()))).await;
    let admin = server.token.clone();
    let member = member_token(&server, "member", "chat:use").await;
    json_of(
        call(
            &server,
            &admin,
            Method::POST,
            "/api/llm/providers",
            Some(json!({
            "name": "lab", "kind": "openai", "base_url": fake.base_url(), "api_key": "sk-lab",
            "default_model": "fake-model",
            "models": [{"id": "fake-model", "context_window": 8192}]})),
        )
        .await,
        201,
    )
    .await;
    fake.serve_models(&["zeta-model", "fake-model"]);
    let listing = json_of(
        call(
            &server,
            &member,
            Method::GET,
            "/api/llm/providers/lab/models",
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(listing["remote_status"], "listed");
    assert_eq!(listing["models"][0]["id"], "fake-model");
    assert_eq!(listing["models"][0]["context_window"], 8192);
    assert_eq!(listing["models"][0]["configured"], true);
    assert_eq!(listing["models"][0]["listed"], true);
    assert_eq!(listing["models"][1]["id"], "zeta-model");
    assert_eq!(listing["models"][1]["configured"], false);
    let request = &fake.model_requests()[0];
    assert_eq!(request.path, "/v1/models");
    assert_eq!(request.header("authorization"), Some("Bearer sk-lab"));

    fake.serve_models_error(401, r#"{"error":{"message":"invalid api key"}}"#);
    let failed = json_of(
        call(
            &server,
            &member,
            Method::GET,
            "/api/llm/providers/lab/models",
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(failed["remote_status"], "failed");
    let error = failed["remote_error"].as_str().unwrap();
    assert!(
        error.contains("HTTP 401") && error.contains("invalid api key"),
        "{error}"
    );
    assert_eq!(failed["models"].as_array().unwrap().len(), 1);

    let offline = json_of(
        call(
            &server,
            &member,
            Method::GET,
            "/api/llm/providers/local/models",
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(offline["remote_status"], "unsupported");
    assert_eq!(offline["models"][0]["id"], "offline-planner");
    assert_eq!(
        call(
            &server,
            &member,
            Method::GET,
            "/api/llm/providers/nope/models",
            None
        )
        .await
        .status(),
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_openai_answers_at_its_deployment_and_at_the_v1_endpoint() {
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(ChatOptions::default()).await;
    let admin = server.token.clone();
    let endpoint = format!("http://{}", fake.address());
    json_of(
        call(
            &server,
            &admin,
            Method::POST,
            "/api/llm/providers",
            Some(json!({
            "name": "azure", "kind": "azure_openai", "base_url": endpoint, "api_key": "azure-key-1",
            "default_model": "my-gpt-deployment", "api_version": "2024-10-21"})),
        )
        .await,
        201,
    )
    .await;
    fake.enqueue(ScriptedReply::text(&["from the deployment"]));
    let events = ask_with_bud(
        &server,
        &admin,
        json!({"name": "Azure bud", "provider": "azure"}),
    )
    .await;
    assert_eq!(answer_text(&events), "from the deployment");
    let request = &fake.requests()[0];
    assert_eq!(
        request.path,
        "/openai/deployments/my-gpt-deployment/chat/completions"
    );
    assert_eq!(request.query.as_deref(), Some("api-version=2024-10-21"));
    assert_eq!(request.header("api-key"), Some("azure-key-1"));
    assert_eq!(request.header("authorization"), None);

    // The same provider switched to the v1 endpoint: rebuilt after the change.
    json_of(
        call(
            &server,
            &admin,
            Method::PATCH,
            "/api/llm/providers/azure",
            Some(json!({"api_version": ""})),
        )
        .await,
        200,
    )
    .await;
    fake.enqueue(ScriptedReply::text(&["from v1"]));
    let events = ask_with_bud(
        &server,
        &admin,
        json!({"name": "Azure v1 bud", "provider": "azure"}),
    )
    .await;
    assert_eq!(answer_text(&events), "from v1");
    let request = &fake.requests()[1];
    assert_eq!(request.path, "/openai/v1/chat/completions");
    assert_eq!(request.query, None);
    assert_eq!(request.body["model"], "my-gpt-deployment");
    assert_eq!(request.header("api-key"), Some("azure-key-1"));
}

/// Sends `body` to `POST /api/llm/providers` (or `PATCH …/{name}` with `name`) and returns the
/// refusal's status and message.
async fn refusal(server: &ChatServer, name: Option<&str>, body: Value) -> (u16, String) {
    let (method, path) = match name {
        Some(name) => (Method::PATCH, format!("/api/llm/providers/{name}")),
        None => (Method::POST, "/api/llm/providers".to_owned()),
    };
    let response = call(server, &server.token, method, &path, Some(body)).await;
    let status = response.status().as_u16();
    let (code, message) = error_of(response).await;
    assert_eq!(code, "invalid_request", "{message}");
    (status, message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_providers_base_url_obeys_the_url_policy_and_the_configuration_files_does_not() {
    let fake = FakeOpenAi::start().await;
    let mut options = ChatOptions::openai(&fake.base_url());
    // Loopback closed for registered servers: the configuration file's provider (the fake on
    // 127.0.0.1) is the admin's own and keeps working.
    options.mcp.url_policy.allow_loopback = false;
    let server = ChatServer::start(options).await;
    let provider = |base_url: &str| json!({"name": "lab", "kind": "openai", "base_url": base_url, "default_model": "m"});

    let loopback = fake.base_url();
    let refused = [
        ("http://169.254.169.254/v1", "cloud metadata"),
        ("http://metadata.google.internal/v1", "cloud metadata"),
        ("http://[::ffff:169.254.169.254]/v1", "cloud metadata"),
        ("http://10.0.0.8:8000/v1", "private"),
        (loopback.as_str(), "loopback"),
        ("http://localhost:11434/v1", "loopback"),
    ];
    for (base_url, reason) in refused {
        let (status, message) = refusal(&server, None, provider(base_url)).await;
        assert_eq!(status, 422, "{base_url}: {message}");
        assert!(
            message.contains("base_url") && message.contains("mcp.url_policy"),
            "{base_url}: {message}"
        );
        assert!(message.contains(reason), "{base_url}: {message}");
    }
    let listed = json_of(
        call(
            &server,
            &server.token,
            Method::GET,
            "/api/llm/providers",
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(listed["providers"].as_array().unwrap().len(), 1, "{listed}");

    // A public address passes; changing it to a refused one is refused and changes nothing.
    json_of(
        call(
            &server,
            &server.token,
            Method::POST,
            "/api/llm/providers",
            Some(provider("https://models.example.com/v1")),
        )
        .await,
        201,
    )
    .await;
    let (status, message) = refusal(
        &server,
        Some("lab"),
        json!({"base_url": "http://169.254.169.254/latest"}),
    )
    .await;
    assert_eq!(status, 422);
    assert!(message.contains("cloud metadata"), "{message}");
    let lab = json_of(
        call(
            &server,
            &server.token,
            Method::GET,
            "/api/llm/providers/lab",
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(lab["base_url"], "https://models.example.com/v1");

    // The configuration file's provider on loopback still answers.
    fake.enqueue(ScriptedReply::text(&["still here"]));
    let events = server.ask_and_wait(json!({"message": "hello"})).await;
    assert_eq!(answer_text(&events), "still here");
}
