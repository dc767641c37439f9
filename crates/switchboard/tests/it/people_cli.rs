//! `switchboard users …` and `switchboard registry …` through the real binary: people added,
//! promoted, deactivated, reactivated and removed on the store while the service runs (their
//! tokens follow at once over HTTP; a removed person's conversation kept by the owner), and
//! the registry searched and a server added through a running instance configured with a
//! local MCP registry. Each change made on the command line is audited with the actor `cli`.

use crate::process::{ADMIN_TOKEN, Service, command, json_of, run_cli, stdout_of};
use axum::Json;
use axum::extract::{Path as UrlPath, Query};
use axum::routing::get;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;

fn users(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut full = vec!["users"];
    full.extend_from_slice(args);
    run_cli(dir, &full)
}

fn failure_of(output: &std::process::Output) -> String {
    assert!(!output.status.success(), "expected a failure");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

async fn status_of(service: &Service, token: &str) -> StatusCode {
    switchboard_test_support::http_client::http_client()
        .get(format!("{}/api/me", service.base_url))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_are_managed_on_the_command_line_and_their_tokens_follow() {
    let data_dir = tempfile::tempdir().unwrap();
    let dir = data_dir.path();
    let service = Service::start(dir);
    let added = json_of(&users(dir, &["--json", "add", "lena", "--role", "member"]));
    assert_eq!(
        (added["role"].clone(), added["active"].clone()),
        (json!("member"), json!(true))
    );
    let issued = json_of(&run_cli(
        dir,
        &[
            "--json", "token", "create", "--name", "laptop", "--scopes", "chat:use", "--user",
            "lena",
        ],
    ));
    let lena_token = issued["token"].as_str().unwrap().to_owned();
    let client = switchboard_test_support::http_client::http_client();
    let created: Value = client
        .post(format!("{}/chat/conversations", service.base_url))
        .bearer_auth(&lena_token)
        .json(&json!({"title": "lena's research"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let conversation = created["id"].as_str().unwrap().to_owned();

    let promoted = stdout_of(&users(dir, &["set-role", "lena", "admin"]));
    assert_eq!(promoted.trim(), "lena: admin, active");
    let deactivated = stdout_of(&users(dir, &["deactivate", "lena"]));
    assert_eq!(deactivated.trim(), "lena: admin, deactivated");
    assert_eq!(
        status_of(&service, &lena_token).await,
        StatusCode::UNAUTHORIZED
    );
    let listed = stdout_of(&users(dir, &["list"]));
    let row = listed.lines().find(|line| line.contains(" lena ")).unwrap();
    assert!(row.contains("deactivated"), "{listed}");
    stdout_of(&users(dir, &["reactivate", "lena"]));
    assert_eq!(status_of(&service, &lena_token).await, StatusCode::OK);

    // The workspace keeps an active owner or admin; the service user is not a person.
    stdout_of(&users(dir, &["set-role", "lena", "member"]));
    let refused = failure_of(&users(dir, &["deactivate", "owner"]));
    assert!(
        refused.contains("'owner' is the workspace's last active owner or admin"),
        "{refused}"
    );
    let refused = failure_of(&users(
        dir,
        &[
            "delete",
            "switchboard-capability-sync",
            "--conversations",
            "delete",
        ],
    ));
    assert!(
        refused.contains("Switchboard's own service user, not a person"),
        "{refused}"
    );
    let refused = failure_of(&users(dir, &["delete", "lena"]));
    assert!(
        refused.contains("--conversations <CONVERSATIONS>"),
        "{refused}"
    );
    let refused = failure_of(&users(
        dir,
        &[
            "delete",
            "lena",
            "--conversations",
            "delete",
            "--to",
            "owner",
        ],
    ));
    assert!(
        refused.contains("--to names who receives kept conversations"),
        "{refused}"
    );
    let refused = failure_of(&users(
        dir,
        &["delete", "nobody", "--conversations", "keep"],
    ));
    assert!(refused.contains("no user named 'nobody'"), "{refused}");

    let removed = stdout_of(&users(dir, &["delete", "lena", "--conversations", "keep"]));
    assert_eq!(
        removed.trim(),
        "lena removed; 1 conversation(s) now belong to owner"
    );
    assert_eq!(
        status_of(&service, &lena_token).await,
        StatusCode::UNAUTHORIZED
    );
    let read = client
        .get(format!(
            "{}/chat/conversations/{conversation}",
            service.base_url
        ))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(
        read.status(),
        StatusCode::OK,
        "the owner reads the kept conversation"
    );

    // Every change made on the command line is in the audit log, as the API writes it.
    let audit = service.get_json(&client, "/api/audit?limit=100").await;
    let by_cli: Vec<&Value> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["actor"] == "cli")
        .collect();
    let actions: Vec<&str> = by_cli
        .iter()
        .map(|entry| entry["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "user.deleted",
            "user.updated",
            "user.updated",
            "user.updated",
            "user.updated",
            "token.created",
            "user.created",
        ],
        "{audit}"
    );
    let removal = &by_cli[0]["details"];
    assert_eq!(
        (
            &removal["name"],
            &removal["conversations"],
            &removal["transferred_conversations"],
            &removal["origin"]
        ),
        (&json!("lena"), &json!("keep"), &json!(1), &json!("cli")),
        "{removal}"
    );
    let deactivation = &by_cli[3]["details"];
    assert_eq!(
        (&deactivation["role"], &deactivation["active"]),
        (&json!("admin"), &json!(false)),
        "{deactivation}"
    );
    assert_eq!(by_cli[5]["target"], issued["id"], "{}", by_cli[5]);
}

/// A local MCP registry speaking the official API (`/v0.1/servers`, `…/versions/{version}`)
/// with one remote server: `url`.
async fn start_registry(url: String) -> String {
    let document = json!({
        "name": "io.github.switchboard-tests/kg",
        "description": "A Switchboard knowledge graph",
        "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": url}],
    });
    let entry = json!({"server": document, "_meta": {"io.modelcontextprotocol.registry/official":
        {"status": "active", "isLatest": true, "publishedAt": "2026-11-01T10:00:00Z"}}});
    let listed = entry.clone();
    let app = axum::Router::new()
        .route(
            "/v0.1/servers",
            get(move |Query(query): Query<HashMap<String, String>>| {
                let listed = listed.clone();
                async move {
                    let wanted = query.get("search").cloned().unwrap_or_default();
                    let servers: Vec<Value> = [listed]
                        .into_iter()
                        .filter(|entry| entry["server"]["name"].as_str().unwrap().contains(&wanted))
                        .collect();
                    Json(json!({"servers": servers, "metadata": {"count": servers.len()}}))
                }
            }),
        )
        .route(
            "/v0.1/servers/{name}/versions/{version}",
            get(move |UrlPath((_, _)): UrlPath<(String, String)>| {
                let entry = entry.clone();
                async move { Json(entry) }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}/v0.1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_is_searched_and_a_server_added_from_the_command_line() {
    let data_dir = tempfile::tempdir().unwrap();
    let dir = data_dir.path();
    let registry_url = start_registry("https://kg.example.com/mcp".into()).await;
    let mut serve = command(dir);
    serve
        .env("SWITCHBOARD_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("SWITCHBOARD_REGISTRY_URL", &registry_url);
    let service = Service::start_command(serve);
    let registry = |args: &[&str]| {
        let mut full = vec![
            "registry",
            "--api-url",
            &service.base_url,
            "--token",
            ADMIN_TOKEN,
        ];
        full.extend_from_slice(args);
        run_cli(dir, &full)
    };

    let found = stdout_of(&registry(&["search", "kg"]));
    let header = found.lines().next().unwrap();
    assert!(
        header.starts_with("NAME") && header.contains("VERSION"),
        "{found}"
    );
    assert!(
        found.contains("io.github.switchboard-tests/kg") && found.contains("1.0.0"),
        "{found}"
    );
    let nothing = stdout_of(&registry(&["search", "weather"]));
    assert_eq!(nothing.lines().count(), 1, "only the header: {nothing}");

    let previewed = stdout_of(&registry(&[
        "add",
        "io.github.switchboard-tests/kg",
        "--dry-run",
    ]));
    assert_eq!(
        previewed.trim(),
        "would register io.github.switchboard-tests/kg 1.0.0 as 'kg': streamable_http https://kg.example.com/mcp"
    );
    let added = json_of(&registry(&[
        "--json",
        "add",
        "io.github.switchboard-tests/kg",
        "--name",
        "team-kg",
        "--inactive",
    ]));
    assert_eq!(added["name"], "team-kg");
    assert_eq!(added["dry_run"], false);
    let servers = stdout_of(&run_cli(
        dir,
        &[
            "servers",
            "--api-url",
            &service.base_url,
            "--token",
            ADMIN_TOKEN,
            "list",
        ],
    ));
    assert!(servers.contains("team-kg"), "{servers}");

    let refused = failure_of(&registry(&[
        "add",
        "io.github.switchboard-tests/kg",
        "--value",
        "oops",
    ]));
    assert!(
        refused.contains("--value oops: expected KEY=VALUE"),
        "{refused}"
    );
}
