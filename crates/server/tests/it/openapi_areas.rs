//! The OpenAPI description of the approvals, audit, buds, kg, policies, tokens and users areas
//! holds for the real server: a flow through every one of their operations (successes and the
//! usual refusals) checks each answer against the schema the spec declares for its route and
//! status, and every operation of these areas is tagged, summarised, secured and documents the
//! error body. A view that changes shape, or a status the spec does not list, fails here.

use crate::approvals_support::{ApprovalServer, Person, echo_call, start, until_approval};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::fake_openai::ScriptedReply;

const AREAS: [&str; 7] = [
    "approvals",
    "audit",
    "buds",
    "kg",
    "policies",
    "tokens",
    "users",
];

/// The spec of the converted areas, and a checker of answers against it.
struct Contract {
    spec: Value,
}

impl Contract {
    fn new() -> Self {
        Self {
            spec: serde_json::to_value(switchboard_server::routes::openapi()).unwrap(),
        }
    }

    /// Sends `method path` as `who`, then checks the answer against the operation at
    /// `template`: its status must be listed and its body must match the listed schema.
    async fn call(
        &self,
        server: &ApprovalServer,
        who: &Person,
        method: Method,
        (template, path): (&str, &str),
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let (status, answer) = server.send(who, method.clone(), path, body).await;
        self.check(&method, template, status, &answer);
        (status, answer)
    }

    fn check(&self, method: &Method, template: &str, status: StatusCode, answer: &Value) {
        let what = format!("{method} {template} → {status}");
        let operation = &self.spec["paths"][template][method.as_str().to_lowercase()];
        assert!(operation.is_object(), "{what}: not in the spec");
        let response = &operation["responses"][status.as_str()];
        assert!(
            response.is_object(),
            "{what}: status not in the spec ({answer})"
        );
        let schema = &response["content"]["application/json"]["schema"];
        if schema.is_null() {
            assert_eq!(answer, &json!(""), "{what}: the spec lists no body");
            return;
        }
        let mut root = schema.clone();
        root["components"] = self.spec["components"].clone();
        let validator = jsonschema::validator_for(&root)
            .unwrap_or_else(|error| panic!("{what}: the spec's schema does not compile: {error}"));
        let problems: Vec<String> = validator
            .iter_errors(answer)
            .map(|error| format!("{} at '{}'", error, error.instance_path()))
            .collect();
        assert!(
            problems.is_empty(),
            "{what}: the answer does not match the spec: {problems:#?}\n{answer:#}"
        );
    }
}

#[test]
fn every_operation_of_these_areas_is_tagged_summarised_secured_and_documents_errors() {
    let spec = Contract::new().spec;
    let mut operations = 0;
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let what = format!("{method} {path}");
            let tag = operation["tags"][0].as_str().unwrap_or_default();
            if !AREAS.contains(&tag) {
                continue;
            }
            operations += 1;
            assert!(
                operation["summary"].as_str().is_some_and(|s| !s.is_empty()),
                "{what}: no summary"
            );
            assert_eq!(
                operation["security"],
                json!([{"bearer": []}]),
                "{what}: not secured by the bearer token"
            );
            let responses = operation["responses"].as_object().unwrap();
            assert!(
                responses.keys().any(|status| status.starts_with('2')),
                "{what}: no success answer"
            );
            for status in ["401", "403"] {
                assert_eq!(
                    responses[status]["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/ErrorBody",
                    "{what}: {status} does not document the error body"
                );
            }
        }
    }
    assert_eq!(operations, 30, "operations of {AREAS:?}");
    // Every reference points at a schema the document holds.
    let text = spec.to_string();
    for reference in text.split("\"$ref\":\"").skip(1) {
        let name = reference
            .split('"')
            .next()
            .unwrap()
            .trim_start_matches("#/components/schemas/");
        assert!(
            spec["components"]["schemas"][name].is_object(),
            "dangling reference to {name}"
        );
    }
}

fn schema_v1() -> Value {
    json!({
        "object_types": [
            {"name": "Person", "description": "Someone", "properties": [{"name": "name", "type": "string", "required": true}]},
            {"name": "Team", "properties": [{"name": "name", "type": "string", "required": true},
                {"name": "kind", "type": "enum", "enum_values": ["product", "platform"]}]}
        ],
        "relationship_types": [{"name": "member_of", "from_types": ["Person"], "to_types": ["Team"]}]
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_tokens_audit_and_kg_answer_as_the_spec_says() {
    let (_fake, server, _) = start(ApprovalConfig::default()).await;
    let contract = Contract::new();
    let admin = &server.admin;
    let nobody = Person {
        id: admin.id.clone(),
        token: "not-a-token".to_owned(),
    };
    let users = ("/api/users", "/api/users");
    let (status, user) = contract
        .call(
            &server,
            admin,
            Method::POST,
            users,
            Some(json!({"name": "dana"})),
        )
        .await;
    assert_eq!(status, 201);
    for (body, expected) in [
        (json!({"name": "dana"}), 409),
        (json!({"role": "admin"}), 422),
        (json!({"name": "eve", "role": "owner"}), 422),
    ] {
        let (status, _) = contract
            .call(&server, admin, Method::POST, users, Some(body))
            .await;
        assert_eq!(status, expected);
    }
    assert_eq!(
        contract
            .call(&server, admin, Method::GET, users, None)
            .await
            .0,
        200
    );
    assert_eq!(
        contract
            .call(&server, &nobody, Method::GET, users, None)
            .await
            .0,
        401
    );
    assert_eq!(
        contract
            .call(&server, &server.alice, Method::GET, users, None)
            .await
            .0,
        403
    );

    let tokens = ("/api/tokens", "/api/tokens");
    let issue = json!({"name": "ci", "scopes": ["chat:use", "schema:read"], "user_id": user["id"],
        "expires_at": "2099-01-01T00:00:00Z"});
    let (status, issued) = contract
        .call(&server, admin, Method::POST, tokens, Some(issue))
        .await;
    assert_eq!(status, 201);
    for body in [
        json!({"name": "ci", "scopes": []}),
        json!({"name": "ci", "scopes": ["root"]}),
        json!({"name": "ci", "scopes": ["admin"], "user_id": user["id"]}),
    ] {
        let (status, _) = contract
            .call(&server, admin, Method::POST, tokens, Some(body))
            .await;
        assert_eq!(status, 422);
    }
    let (status, listed) = contract
        .call(&server, admin, Method::GET, tokens, None)
        .await;
    assert_eq!(
        (status, listed.as_array().unwrap().len() > 1),
        (StatusCode::OK, true)
    );
    let revoke = format!("/api/tokens/{}", issued["token"]["id"].as_str().unwrap());
    let template = "/api/tokens/{token_id}";
    let (status, revoked) = contract
        .call(&server, admin, Method::DELETE, (template, &revoke), None)
        .await;
    assert_eq!(status, 200);
    assert!(revoked["revoked_at"].is_string());
    let missing = (template, "/api/tokens/tok_missing");
    assert_eq!(
        contract
            .call(&server, admin, Method::DELETE, missing, None)
            .await
            .0,
        404
    );

    let audit = "/api/audit";
    let (status, page) = contract
        .call(
            &server,
            admin,
            Method::GET,
            (audit, "/api/audit?limit=2"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert!(page["next_cursor"].is_string(), "{page}");
    for (path, expected) in [
        ("/api/audit?action=token.&limit=500", 200),
        ("/api/audit?from=yesterday", 422),
        ("/api/audit?cursor=nope", 422),
        ("/api/audit?limit=0", 422),
        ("/api/audit?colour=blue", 400),
    ] {
        assert_eq!(
            contract
                .call(&server, admin, Method::GET, (audit, path), None)
                .await
                .0,
            expected,
            "{path}"
        );
    }

    let kg = |path: &'static str| (path, path);
    let (status, _) = contract
        .call(&server, admin, Method::GET, kg("/api/kg/schema"), None)
        .await;
    assert_eq!(status, 200);
    let replace = json!({"schema": schema_v1(), "message": "people"});
    let (status, changed) = contract
        .call(
            &server,
            admin,
            Method::PUT,
            kg("/api/kg/schema"),
            Some(replace),
        )
        .await;
    assert_eq!(
        (status, &changed["changed"]),
        (StatusCode::OK, &json!(true))
    );
    let inconsistent = json!({"schema": {"relationship_types": [{"name": "r", "from_types": ["Ghost"], "to_types": ["Ghost"]}]}});
    assert_eq!(
        contract
            .call(
                &server,
                admin,
                Method::PUT,
                kg("/api/kg/schema"),
                Some(inconsistent)
            )
            .await
            .0,
        422
    );
    let edit = json!({"edit": {"op": "upsert_object_type", "object_type": {"name": "Project"}}});
    assert_eq!(
        contract
            .call(
                &server,
                admin,
                Method::POST,
                kg("/api/kg/schema/edits"),
                Some(edit)
            )
            .await
            .0,
        200
    );
    let remove = json!({"edit": {"op": "remove_object_type", "name": "Ghost"}});
    assert_eq!(
        contract
            .call(
                &server,
                admin,
                Method::POST,
                kg("/api/kg/schema/edits"),
                Some(remove)
            )
            .await
            .0,
        404
    );
    let (status, versions) = contract
        .call(&server, admin, Method::GET, kg("/api/kg/versions"), None)
        .await;
    assert_eq!(
        (status, versions["versions"].as_array().unwrap().len()),
        (StatusCode::OK, 2)
    );
    let import = json!({
        "objects": [
            {"id": "ana", "type": "Person", "properties": {"name": "Ana"}},
            {"id": "core", "type": "Team", "properties": {"name": "Core", "kind": "platform"}}
        ],
        "relationships": [{"id": "ana-core", "type": "member_of", "from_id": "ana", "to_id": "core"}]
    });
    assert_eq!(
        contract
            .call(
                &server,
                admin,
                Method::POST,
                kg("/api/kg/import"),
                Some(import.clone())
            )
            .await
            .0,
        201
    );
    assert_eq!(
        contract
            .call(
                &server,
                admin,
                Method::POST,
                kg("/api/kg/import"),
                Some(import)
            )
            .await
            .0,
        409
    );
    let empty = json!({"objects": []});
    assert_eq!(
        contract
            .call(
                &server,
                admin,
                Method::POST,
                kg("/api/kg/import"),
                Some(empty)
            )
            .await
            .0,
        422
    );
    let (status, export) = contract
        .call(&server, admin, Method::GET, kg("/api/kg/export"), None)
        .await;
    assert_eq!(
        (status, export["objects"].as_array().unwrap().len()),
        (StatusCode::OK, 2)
    );
    let relationship = (
        "/api/kg/relationships/{relationship_id}",
        "/api/kg/relationships/ana-core",
    );
    assert_eq!(
        contract
            .call(&server, admin, Method::DELETE, relationship, None)
            .await
            .0,
        204
    );
    assert_eq!(
        contract
            .call(&server, admin, Method::DELETE, relationship, None)
            .await
            .0,
        404
    );
    let object = ("/api/kg/objects/{object_id}", "/api/kg/objects/ana");
    let (status, deleted) = contract
        .call(&server, admin, Method::DELETE, object, None)
        .await;
    assert_eq!(
        (status, &deleted["deleted_object"]),
        (StatusCode::OK, &json!("ana"))
    );
    assert_eq!(
        contract
            .call(&server, admin, Method::DELETE, object, None)
            .await
            .0,
        404
    );
    assert_eq!(
        contract
            .call(
                &server,
                &server.alice,
                Method::GET,
                kg("/api/kg/export"),
                None
            )
            .await
            .0,
        403
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policies_buds_and_approvals_answer_as_the_spec_says() {
    let (fake, server, everything) = start(ApprovalConfig::default()).await;
    let contract = Contract::new();
    let admin = &server.admin;
    let alice = &server.alice;

    let policy_template = "/api/mcp/servers/{id}/tools/{name}/policy";
    let policy = format!("/api/mcp/servers/{everything}/tools/echo/policy");
    let policy = (policy_template, policy.as_str());
    let allow = json!({"policy": "ALWAYS_ALLOW"});
    let (status, set) = contract
        .call(&server, admin, Method::PUT, policy, Some(allow.clone()))
        .await;
    assert_eq!(
        (status, &set["source"]),
        (StatusCode::OK, &json!("explicit"))
    );
    assert_eq!(
        contract
            .call(&server, admin, Method::GET, policy, None)
            .await
            .0,
        200
    );
    let unknown = json!({"policy": "SOMETIMES"});
    assert_eq!(
        contract
            .call(&server, admin, Method::PUT, policy, Some(unknown))
            .await
            .0,
        422
    );
    assert_eq!(
        contract
            .call(&server, alice, Method::PUT, policy, Some(allow.clone()))
            .await
            .0,
        403
    );
    let policies = ("/api/mcp/policies", "/api/mcp/policies");
    let (status, listed) = contract
        .call(&server, admin, Method::GET, policies, None)
        .await;
    assert_eq!(
        (status, listed["policies"].as_array().unwrap().len()),
        (StatusCode::OK, 1)
    );
    let (status, reset) = contract
        .call(&server, admin, Method::DELETE, policy, None)
        .await;
    assert_eq!(
        (status, &reset["source"]),
        (StatusCode::OK, &json!("default"))
    );
    let foreign = (
        policy_template,
        "/api/mcp/servers/srv_missing/tools/echo/policy",
    );
    assert_eq!(
        contract
            .call(&server, admin, Method::GET, foreign, None)
            .await
            .0,
        404
    );

    let buds = ("/api/buds", "/api/buds");
    let create = json!({"name": "helper", "system_prompt": "Be brief.", "mcp_config": {"servers": ["everything"]}});
    let (status, bud) = contract
        .call(&server, alice, Method::POST, buds, Some(create))
        .await;
    assert_eq!(status, 201, "{bud}");
    let (status, bare) = contract
        .call(
            &server,
            alice,
            Method::POST,
            buds,
            Some(json!({"name": "bare"})),
        )
        .await;
    assert_eq!(status, 201, "{bare}");
    let refused = json!({"name": "b", "mcp_config": {"servers": ["nope"]}});
    assert_eq!(
        contract
            .call(&server, alice, Method::POST, buds, Some(refused))
            .await
            .0,
        422
    );
    let (status, listed) = contract.call(&server, alice, Method::GET, buds, None).await;
    assert_eq!(
        (status, listed["buds"].as_array().unwrap().len()),
        (StatusCode::OK, 2)
    );
    let bud_id = bud["id"].as_str().unwrap();
    let one = format!("/api/buds/{bud_id}");
    let one = ("/api/buds/{bud_id}", one.as_str());
    assert_eq!(
        contract
            .call(&server, alice, Method::GET, one, None)
            .await
            .0,
        200
    );
    let patch = json!({"model": "other-model", "provider": null});
    let (status, patched) = contract
        .call(&server, alice, Method::PATCH, one, Some(patch.clone()))
        .await;
    assert_eq!(
        (status, &patched["model"]),
        (StatusCode::OK, &json!("other-model"))
    );
    assert_eq!(
        contract
            .call(&server, &server.bob, Method::PATCH, one, Some(patch))
            .await
            .0,
        403
    );

    let bud_policies = format!("/api/buds/{bud_id}/policies");
    let bud_policies = ("/api/buds/{bud_id}/policies", bud_policies.as_str());
    let bud_policy = format!("/api/buds/{bud_id}/policies/{everything}/echo");
    let bud_policy = (
        "/api/buds/{bud_id}/policies/{server_id}/{tool_name}",
        bud_policy.as_str(),
    );
    assert_eq!(
        contract
            .call(&server, admin, Method::PUT, bud_policy, Some(allow))
            .await
            .0,
        200
    );
    let (status, listed) = contract
        .call(&server, admin, Method::GET, bud_policies, None)
        .await;
    assert_eq!(
        (status, listed["policies"].as_array().unwrap().len()),
        (StatusCode::OK, 1)
    );
    assert_eq!(
        contract
            .call(&server, admin, Method::DELETE, bud_policy, None)
            .await
            .0,
        204
    );
    assert_eq!(
        contract
            .call(&server, alice, Method::DELETE, one, None)
            .await
            .0,
        204
    );
    assert_eq!(
        contract
            .call(&server, alice, Method::GET, one, None)
            .await
            .0,
        404
    );

    // An approval: asked, listed, decided, decided again, listed with its history.
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call("call_1", "hello")]));
    fake.enqueue(ScriptedReply::text(&["It said hello."]));
    let mut stream = server.ask(alice, "echo hello").await;
    let (asked, before) = until_approval(&mut stream).await;
    let approvals = ("/chat/approvals", "/chat/approvals");
    let (status, pending) = contract
        .call(&server, alice, Method::GET, approvals, None)
        .await;
    assert_eq!(
        (status, &pending["approvals"][0]["approval_id"]),
        (StatusCode::OK, &asked["approval_id"])
    );
    let everyone = ("/chat/approvals", "/chat/approvals?all_users=true");
    assert_eq!(
        contract
            .call(&server, alice, Method::GET, everyone, None)
            .await
            .0,
        403
    );
    let decide = format!("/chat/approvals/{}", asked["approval_id"].as_str().unwrap());
    let decide = ("/chat/approvals/{approval_id}", decide.as_str());
    let approve = json!({"decision": "approve", "remember": "once"});
    assert_eq!(
        contract
            .call(
                &server,
                &server.bob,
                Method::POST,
                decide,
                Some(approve.clone())
            )
            .await
            .0,
        403
    );
    let (status, decided) = contract
        .call(&server, alice, Method::POST, decide, Some(approve.clone()))
        .await;
    assert_eq!(
        (status, &decided["decision"]),
        (StatusCode::OK, &json!("approved"))
    );
    stream.until_done().await;
    assert_eq!(
        contract
            .call(&server, alice, Method::POST, decide, Some(approve))
            .await
            .0,
        409
    );
    let maybe = json!({"decision": "maybe"});
    assert_eq!(
        contract
            .call(&server, alice, Method::POST, decide, Some(maybe))
            .await
            .0,
        422
    );
    let conversation = before[0]["conversationId"].as_str().unwrap();
    let history = format!("/chat/approvals?conversation_id={conversation}&state=all");
    let (status, history) = contract
        .call(
            &server,
            alice,
            Method::GET,
            ("/chat/approvals", &history),
            None,
        )
        .await;
    assert_eq!(
        (status, &history["approvals"][0]["status"]),
        (StatusCode::OK, &json!("approved"))
    );
    let unknown = (
        "/chat/approvals/{approval_id}",
        "/chat/approvals/apr_missing",
    );
    let deny = json!({"decision": "deny"});
    assert_eq!(
        contract
            .call(&server, alice, Method::POST, unknown, Some(deny))
            .await
            .0,
        404
    );

    let elicitations = ("/chat/elicitations", "/chat/elicitations");
    assert_eq!(
        contract
            .call(&server, alice, Method::GET, elicitations, None)
            .await
            .0,
        200
    );
    let answer = (
        "/chat/elicitations/{elicitation_id}",
        "/chat/elicitations/eli_missing",
    );
    let decline = json!({"action": "decline"});
    assert_eq!(
        contract
            .call(&server, alice, Method::POST, answer, Some(decline))
            .await
            .0,
        404
    );

    // What all this did is in the audit log, in the audit log's shape.
    let audit = ("/api/audit", "/api/audit?limit=500");
    let (status, page) = contract
        .call(&server, admin, Method::GET, audit, None)
        .await;
    assert_eq!(status, 200);
    let actions: Vec<&str> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["action"].as_str().unwrap())
        .collect();
    for action in [
        "bud.created",
        "bud.updated",
        "bud.deleted",
        "approval.approved",
        "tool_call.completed",
    ] {
        assert!(actions.contains(&action), "{action} not in {actions:?}");
    }
}
