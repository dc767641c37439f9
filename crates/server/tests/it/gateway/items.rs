//! Resources, resource templates, prompts and completions through the gateway, and every
//! list paged: rmcp's client over the MCP wire against `server-everything` (stdio) registered
//! in the workspace. URIs come back as `switchboard://everything/<its own URI>` and read
//! back to the upstream's resource, templates keep their variables, prompts are
//! `everything__<prompt>`, completions reach the upstream for a prompt or a template, an
//! upstream's own JSON-RPC error is passed on, a bud without the server sees none of it, and
//! a cursor that is not ours is -32602; `/readyz` reports the gateway (check `gateway`).

use super::wire::{Client, connect, listed_names};
use crate::support::approvals::*;
use reqwest::Method;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ErrorCode, GetPromptRequestParams, PaginatedRequestParams,
    ReadResourceRequestParams, Reference,
};
use rmcp::service::ServiceError;
use serde_json::{Value, json};
use switchboard_approvals::ApprovalConfig;

const PAGE_SIZE: usize = 3;
const ARCHITECTURE: &str =
    "switchboard://everything/demo://resource/static/document/architecture.md";
const TEXT_TEMPLATE: &str = "switchboard://everything/demo://resource/dynamic/text/{resourceId}";

fn code_of(error: ServiceError) -> (ErrorCode, String) {
    match error {
        ServiceError::McpError(error) => (error.code, error.message.to_string()),
        other => panic!("not a JSON-RPC error: {other}"),
    }
}

async fn read(client: &Client, uri: &str) -> Result<Value, (ErrorCode, String)> {
    client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .map(|result| serde_json::to_value(result).unwrap())
        .map_err(code_of)
}

async fn complete(client: &Client, reference: Reference, name: &str, value: &str) -> Value {
    let params = CompleteRequestParams::new(reference, ArgumentInfo::new(name, value));
    serde_json::to_value(client.complete(params).await.unwrap()).unwrap()["completion"]["values"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_prompts_of_the_callers_servers_come_through_named_per_server() {
    let (_fake, server, _) = start_paged(ApprovalConfig::default(), PAGE_SIZE).await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    let client = connect(&server, "/gateway/mcp", &carol.token).await;
    let capabilities = serde_json::to_value(&client.peer_info().unwrap().capabilities).unwrap();
    assert_eq!(
        capabilities["resources"],
        json!({"subscribe": true, "listChanged": true}),
        "{capabilities}"
    );
    assert_eq!(capabilities["logging"], json!({}), "{capabilities}");
    assert_eq!(
        capabilities["prompts"],
        json!({"listChanged": true}),
        "{capabilities}"
    );
    assert_eq!(capabilities["completions"], json!({}), "{capabilities}");

    let resources = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources
        .iter()
        .map(|resource| resource.uri.as_str())
        .collect();
    assert!(uris.len() > PAGE_SIZE, "several pages: {uris:?}");
    assert!(uris.contains(&ARCHITECTURE), "{uris:?}");
    let document = read(&client, ARCHITECTURE).await.unwrap();
    assert_eq!(document["contents"][0]["uri"], ARCHITECTURE);
    assert!(
        document["contents"][0]["text"].as_str().unwrap().len() > 100,
        "{document}"
    );

    let templates = client.list_all_resource_templates().await.unwrap();
    let templates: Vec<&str> = templates
        .iter()
        .map(|template| template.uri_template.as_str())
        .collect();
    assert!(templates.contains(&TEXT_TEMPLATE), "{templates:?}");
    let expanded = TEXT_TEMPLATE.replace("{resourceId}", "7");
    let dynamic = read(&client, &expanded).await.unwrap();
    assert_eq!(dynamic["contents"][0]["uri"], expanded.as_str());
    assert!(
        dynamic["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Resource 7:"),
        "{dynamic}"
    );
    // The upstream's own refusal comes back as its JSON-RPC error.
    let (_, message) = read(&client, &TEXT_TEMPLATE.replace("{resourceId}", "x"))
        .await
        .unwrap_err();
    assert!(message.contains("Unknown resource"), "{message}");
    for unknown in [
        "demo://resource/static/document/architecture.md",
        "switchboard://nope/demo://resource/static/document/architecture.md",
    ] {
        let (code, _) = read(&client, unknown).await.unwrap_err();
        assert_eq!(code, ErrorCode::RESOURCE_NOT_FOUND, "{unknown}");
    }

    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
    assert!(names.contains(&"everything__simple-prompt"), "{names:?}");
    let simple = client
        .get_prompt(GetPromptRequestParams::new("everything__simple-prompt"))
        .await
        .unwrap();
    let simple = serde_json::to_value(simple).unwrap();
    assert_eq!(
        simple["messages"][0]["content"]["text"],
        "This is a simple prompt without arguments."
    );
    // An embedded resource names a URI the client can read through the gateway.
    let arguments = json!({"resourceType": "Text", "resourceId": "2"});
    let embedding = client
        .get_prompt(
            GetPromptRequestParams::new("everything__resource-prompt")
                .with_arguments(arguments.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let embedded =
        serde_json::to_value(embedding).unwrap()["messages"][1]["content"]["resource"]["uri"]
            .clone();
    assert_eq!(
        embedded,
        TEXT_TEMPLATE.replace("{resourceId}", "2").as_str()
    );
    let unknown = client
        .get_prompt(GetPromptRequestParams::new("simple-prompt"))
        .await
        .unwrap_err();
    assert_eq!(code_of(unknown).0, ErrorCode::INVALID_PARAMS);

    let departments = complete(
        &client,
        Reference::for_prompt("everything__completable-prompt"),
        "department",
        "Eng",
    )
    .await;
    assert_eq!(departments, json!(["Engineering"]));
    let ids = complete(
        &client,
        Reference::for_resource(TEXT_TEMPLATE),
        "resourceId",
        "5",
    )
    .await;
    assert_eq!(ids, json!(["5"]));
    let refused = client
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("completable-prompt"),
            ArgumentInfo::new("department", "E"),
        ))
        .await
        .unwrap_err();
    assert_eq!(code_of(refused).0, ErrorCode::INVALID_PARAMS);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_list_is_paged_and_a_foreign_cursor_is_invalid_params() {
    let (_fake, server, _) = start_paged(ApprovalConfig::default(), PAGE_SIZE).await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    let client = connect(&server, "/gateway/mcp", &carol.token).await;

    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), PAGE_SIZE);
    let cursor = first.next_cursor.clone().expect("more than one page");
    let second = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor.clone())),
        ))
        .await
        .unwrap();
    let all = listed_names(&client).await;
    assert!(all.len() > 2 * PAGE_SIZE, "{all:?}");
    let paged: Vec<String> = first
        .tools
        .iter()
        .chain(&second.tools)
        .map(|tool| tool.name.to_string())
        .collect();
    assert_eq!(paged, all[..2 * PAGE_SIZE], "pages follow each other");

    for bad in ["bogus", "tools:x", ""] {
        let refused = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(Some(bad.to_owned())),
            ))
            .await
            .unwrap_err();
        assert_eq!(code_of(refused).0, ErrorCode::INVALID_PARAMS, "{bad:?}");
    }
    // Another list's cursor is not this one's.
    let refused = client
        .list_prompts(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap_err();
    assert_eq!(code_of(refused).0, ErrorCode::INVALID_PARAMS);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bud_without_the_server_sees_none_of_its_resources() {
    let (_fake, server, _) = start_paged(ApprovalConfig::default(), PAGE_SIZE).await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    let (status, bud) = server
        .send(
            &server.admin,
            Method::POST,
            "/api/buds",
            Some(json!({"name": "serverless", "system_prompt": "No tools.", "mcp_config": {"servers": []}})),
        )
        .await;
    assert_eq!(status, 201, "{bud}");
    let client = connect(&server, "/gateway/buds/serverless/mcp", &carol.token).await;
    assert!(client.list_all_resources().await.unwrap().is_empty());
    assert!(client.list_all_prompts().await.unwrap().is_empty());
    let (code, _) = read(&client, ARCHITECTURE).await.unwrap_err();
    assert_eq!(code, ErrorCode::RESOURCE_NOT_FOUND);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_reports_the_gateways_own_health() {
    let (_fake, server, _) = start_paged(ApprovalConfig::default(), PAGE_SIZE).await;
    let readyz = || async {
        let answer = server
            .client
            .get(server.url("/readyz"))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        answer.json::<Value>().await.unwrap()["checks"]["gateway"].clone()
    };
    let before = readyz().await;
    assert_eq!(before["status"], "UP", "{before}");
    assert_eq!(before["detail"]["offers_built"], 0, "{before}");

    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    let client = connect(&server, "/gateway/mcp", &carol.token).await;
    assert!(!listed_names(&client).await.is_empty());
    let after = readyz().await;
    assert_eq!(after["status"], "UP", "{after}");
    assert_eq!(after["detail"]["cached_offers"], 1, "{after}");
    assert!(after["detail"].get("last_failure").is_none(), "{after}");
    client.cancel().await.unwrap();
}
