//! The OpenAPI description of the approvals, audit, buds, kg, policies, tokens and users areas,
//! checked two ways: every operation of these areas is tagged, summarised, secured and
//! documents the error body (here), and real answers match the schema the spec declares for
//! their route and status ([`Contract`], used by `openapi_admin_areas` and `openapi_chat_areas`).

use crate::support::approvals::{ApprovalServer, Person, start};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use switchboard_approvals::ApprovalConfig;
use switchboard_core::ServerId;

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
pub struct Contract {
    spec: Value,
}

impl Contract {
    pub fn new() -> Self {
        Self {
            spec: serde_json::to_value(switchboard_server::openapi_document()).unwrap(),
        }
    }

    /// Sends `method path` as `who`, then checks the answer against the operation at
    /// `template`: its status must be listed and its body must match the listed schema.
    pub async fn call(
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

    /// [`Self::call`], asserting the status; returns the body.
    pub async fn expect(
        &self,
        server: &ApprovalServer,
        who: &Person,
        method: Method,
        route: (&str, &str),
        body: Option<Value>,
        expected: u16,
    ) -> Value {
        let (status, answer) = self.call(server, who, method.clone(), route, body).await;
        assert_eq!(status, expected, "{method} {}: {answer}", route.1);
        answer
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
            // The bearer token, listing the scope the operation needs (`route_access`).
            let scope = &operation["x-authorization"]["scope"];
            let scopes = if scope.is_null() {
                json!([])
            } else {
                json!([scope])
            };
            assert_eq!(
                operation["security"],
                json!([{"bearer": scopes}]),
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
    assert_eq!(operations, 31, "operations of {AREAS:?}");
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

/// A server with `server-everything` registered, and the contract.
pub async fn server() -> (ApprovalServer, ServerId, Contract) {
    let (fake, server, everything) = start(ApprovalConfig::default()).await;
    drop(fake);
    (server, everything, Contract::new())
}

/// A route whose path is its template.
pub fn same(path: &str) -> (&str, &str) {
    (path, path)
}
