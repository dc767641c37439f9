//! The authorization matrix (issue 18, target 5), driven by the OpenAPI document the server
//! serves: every operation of `GET /api/openapi.json` × every kind of token, over the real HTTP
//! interface, so that a new route is covered as soon as it is documented.
//!
//! Each operation says who may call it in `x-authorization` (`{"scope", "owner_or_admin"}`,
//! written by `route_access`). For each operation the test builds a concrete request — path
//! parameters are real ids of workspace A (a bud, a server, a conversation, a kg object and
//! relationship, a token), made fresh for operations that change state, so that a DELETE
//! cannot take another case's fixture; a minimal valid body from [`body_for`] — and sends it
//! with:
//!
//! - no token, an unknown token, an expired token and a revoked one (both of an owner holding
//!   every scope) → 401;
//! - the owner's, an admin-role user's and a member's token with each single scope (a member
//!   may not hold `admin`) → allowed (not 401/403) exactly when the scope is held (directly or
//!   through `admin`), else 403; someone without `admin` acting on the owner's resource where the
//!   operation is `owner_or_admin` → refused (403, or 404);
//! - a token of workspace B holding every scope, on workspace A's ids in paths and bodies → 404
//!   (or 422 for an id in a body), never 2xx, and no answer names any of A's ids. Operations
//!   without ids act on B's own workspace (B's token may replace B's schema): only the answer
//!   is checked there.
//!
//! A token of a deactivated person (an admin holding every scope) → 401 everywhere; the
//! `admin` token of an admin since demoted to member → allowed only where any token is.
//!
//! Ids that need an answer with a tool call to exist (approvals, elicitations, a tool call's
//! result) are well-formed ids that match nothing: the scope check runs before the lookup, so
//! the matrix still tells allowed (404) from refused (403) there.

use crate::support::chat::{ChatOptions, ChatServer};
use crate::support::other_workspace;
use chrono::Utc;
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;
use switchboard_core::{Scope, ScopeSet, TokenId, UserId, WorkspaceId};
use switchboard_store::{NewToken, UserAccessChange, UserRole};

/// Who may call an operation, as the document says.
#[derive(Clone, Debug)]
struct Access {
    scope: Option<Scope>,
    owner_or_admin: bool,
}

/// One documented operation.
#[derive(Clone, Debug)]
struct Operation {
    method: Method,
    template: String,
    operation_id: String,
    access: Access,
    path_parameters: Vec<String>,
    body_schema: Option<String>,
}

/// What a token is, and what the matrix expects of it.
#[derive(Clone, Debug)]
enum Holder {
    /// No token, unknown, expired, revoked: 401 everywhere.
    Invalid,
    /// A token of workspace A with `scopes`: the owner's (who made every fixture), or an
    /// admin-role or member user's.
    WorkspaceA {
        owns_fixtures: bool,
        scopes: ScopeSet,
    },
    /// A token of workspace B holding every scope, sent with A's ids.
    OtherWorkspace,
}

#[derive(Clone, Debug)]
struct TokenKind {
    label: String,
    token: Option<String>,
    holder: Holder,
}

/// What the server answered that the matrix did not expect.
#[derive(Debug, Default)]
struct Findings {
    cases: usize,
    unexpected_allows: Vec<String>,
    unexpected_denies: Vec<String>,
    other: Vec<String>,
    /// The statuses of the cases let through, to see that they reached their handlers.
    allowed_statuses: BTreeMap<u16, usize>,
    /// The operation and status of each allowed case, for looking into a figure.
    allowed: Vec<String>,
}

/// Workspace A's ids that path parameters take.
#[derive(Clone, Debug)]
struct Fixtures {
    bud_id: String,
    server_id: String,
    conversation_id: String,
    object_id: String,
    relationship_id: String,
    token_id: String,
    /// An object type of A's graph (workspace B's graph does not have it).
    type_name: String,
    owner_user_id: String,
    /// A member made for the fixtures (people operations change or remove them).
    person_id: String,
    workspace_id: String,
}

impl Fixtures {
    /// Every id of workspace A that workspace B must never see.
    fn all(&self) -> [&str; 9] {
        [
            &self.person_id,
            &self.bud_id,
            &self.server_id,
            &self.conversation_id,
            &self.object_id,
            &self.relationship_id,
            &self.token_id,
            &self.owner_user_id,
            &self.workspace_id,
        ]
    }

    /// Whether `body` names an id of workspace A that `request` did not send.
    fn leaked_into(&self, body: &str, request: &str) -> bool {
        self.all()
            .iter()
            .any(|id| body.contains(id) && !request.contains(id))
    }
}

struct Matrix {
    server: ChatServer,
    workspace_id: WorkspaceId,
    owner_id: UserId,
    /// Makes fixture names unique.
    counter: usize,
    /// The current schema, for no-op schema bodies.
    schema: Value,
    /// An object of the graph (type and properties), for import bodies.
    object_template: Value,
}

/// Routes outside the document (our kg server's REST reads, described with `/mcp` in the
/// README), each with the scope of the kg tool it answers like.
const UNDOCUMENTED: [(&str, &str, Scope); 3] = [
    (
        "/mcp/schema/version",
        "rest_schema_version",
        Scope::SchemaRead,
    ),
    (
        "/mcp/schema/changelog",
        "rest_schema_changelog",
        Scope::SchemaRead,
    ),
    (
        "/mcp/types/{type_name}/schema",
        "rest_type_schema",
        Scope::SchemaRead,
    ),
];

fn undocumented_operations() -> Vec<Operation> {
    UNDOCUMENTED
        .into_iter()
        .map(|(template, operation_id, scope)| Operation {
            method: Method::GET,
            template: template.to_owned(),
            operation_id: operation_id.to_owned(),
            access: Access {
                scope: Some(scope),
                owner_or_admin: false,
            },
            path_parameters: template
                .contains("{type_name}")
                .then(|| "type_name".to_owned())
                .into_iter()
                .collect(),
            body_schema: None,
        })
        .collect()
}

fn operations(document: &Value) -> Vec<Operation> {
    let mut operations = Vec::new();
    for (template, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().unwrap() {
            let Ok(method) = method.to_uppercase().parse::<Method>() else {
                continue;
            };
            let operation_id = operation["operationId"].as_str().unwrap().to_owned();
            let access = &operation["x-authorization"];
            assert!(
                access.is_object(),
                "{method} {template} does not say who may call it (x-authorization)"
            );
            if access["public"] == true {
                // The sign-in routes take no token (tests/it/oidc covers them).
                continue;
            }
            let scope = access["scope"]
                .as_str()
                .map(|name| name.parse::<Scope>().expect("a known scope"));
            let path_parameters = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|parameter| parameter["in"] == "path")
                .map(|parameter| parameter["name"].as_str().unwrap().to_owned())
                .collect();
            let body_schema =
                operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                    .as_str()
                    .map(|reference| reference.rsplit('/').next().unwrap().to_owned());
            operations.push(Operation {
                method,
                template: template.clone(),
                operation_id,
                access: Access {
                    scope,
                    owner_or_admin: access["owner_or_admin"] == true,
                },
                path_parameters,
                body_schema,
            });
        }
    }
    operations
}

impl Matrix {
    async fn start() -> Self {
        let server = ChatServer::start(ChatOptions::default()).await;
        let workspace_id = server.workspace_id.clone();
        let owner_id = server.store.list_users(&workspace_id).await.unwrap()[0]
            .id
            .clone();
        let mut matrix = Self {
            server,
            workspace_id,
            owner_id,
            counter: 0,
            schema: Value::Null,
            object_template: Value::Null,
        };
        let (status, schema) = matrix.owner(Method::GET, "/api/kg/schema", None).await;
        assert_eq!(status, 200, "{schema}");
        matrix.schema = schema["schema"].clone();
        let (status, export) = matrix.owner(Method::GET, "/api/kg/export", None).await;
        assert_eq!(status, 200, "{export}");
        matrix.object_template = export["objects"][0].clone();
        matrix
    }

    async fn send(
        &self,
        token: Option<&str>,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, String) {
        let mut request = self.server.client.request(method, self.server.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let streamed = response
            .headers()
            .get("content-type")
            .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"));
        // An answer's event stream is not read to its end: its status is what matters here.
        let text = if streamed {
            String::new()
        } else {
            response.text().await.unwrap_or_default()
        };
        (status, text)
    }

    /// A request as workspace A's owner (every scope), for fixtures.
    async fn owner(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let (status, text) = self
            .send(Some(&self.server.token), method, path, body.as_ref())
            .await;
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn created(&self, path: &str, body: Value) -> Value {
        let (status, created) = self.owner(Method::POST, path, Some(body)).await;
        assert!(
            (200..300).contains(&status),
            "POST {path}: {status} {created}"
        );
        created
    }

    /// Fresh ids of every kind in workspace A.
    async fn fixtures(&mut self) -> Fixtures {
        self.counter += 1;
        let n = self.counter;
        let bud = self
            .created("/api/buds", json!({"name": format!("matrix bud {n}")}))
            .await;
        let server = self
            .created(
                "/api/mcp/servers",
                json!({"name": format!("matrix{n}"), "transport": "streamable_http",
                       "url": "http://127.0.0.1:9/mcp"}),
            )
            .await;
        let conversation = self
            .created(
                "/chat/conversations",
                json!({"title": format!("matrix {n}")}),
            )
            .await;
        let (object_id, relationship_id) = self.kg_fixtures(n).await;
        let token = self
            .created(
                "/api/tokens",
                json!({"name": format!("matrix victim {n}"), "scopes": ["chat:use"]}),
            )
            .await;
        let person = self
            .created("/api/users", json!({"name": format!("matrix person {n}")}))
            .await;
        Fixtures {
            person_id: id_of(&person, &["id"]),
            bud_id: id_of(&bud, &["id"]),
            server_id: id_of(&server, &["id"]),
            conversation_id: id_of(&conversation, &["id"]),
            object_id,
            relationship_id,
            token_id: id_of(&token, &["token", "id"]),
            type_name: self.object_template["type"].as_str().unwrap().to_owned(),
            owner_user_id: self.owner_id.to_string(),
            workspace_id: self.workspace_id.to_string(),
        }
    }

    /// A new object and a new relationship from it, copied from the graph's first relationship.
    async fn kg_fixtures(&self, n: usize) -> (String, String) {
        let (status, export) = self.owner(Method::GET, "/api/kg/export", None).await;
        assert_eq!(status, 200, "{export}");
        let relationship = &export["relationships"][0];
        let from = export["objects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|object| object["id"] == relationship["from_id"])
            .expect("the relationship's source");
        let object_id = format!("matrix-object-{n}");
        let relationship_id = format!("matrix-relationship-{n}");
        self.created(
            "/api/kg/import",
            json!({
                "objects": [{"id": object_id, "type": from["type"], "properties": from["properties"]}],
                "relationships": [{"id": relationship_id, "type": relationship["type"],
                                   "from_id": object_id, "to_id": relationship["to_id"]}],
            }),
        )
        .await;
        (object_id, relationship_id)
    }

    /// A minimal valid body of `schema`, as the operation's documented request body. Where a
    /// body refers to something of the workspace, it names one of `fixtures` (so that workspace
    /// B's token also tries A's ids through bodies).
    fn body_for(&mut self, schema: &str, fixtures: &Fixtures) -> Value {
        self.counter += 1;
        let n = self.counter;
        match schema {
            "CreateBudBody" => json!({"name": format!("matrix created bud {n}")}),
            "UpdateBudBody" => json!({"name": format!("matrix renamed bud {n}")}),
            "CreateLlmProviderBody" => {
                json!({"name": format!("matrix-provider-{n}"), "kind": "offline"})
            }
            "UpdateLlmProviderBody" => json!({"default_model": format!("matrix-model-{n}")}),
            "PolicyRequest" => json!({"policy": "ASK_USER"}),
            "ImportRequest" => json!({"objects": [{"id": format!("matrix-imported-{n}"),
                "type": self.object_template["type"], "properties": self.object_template["properties"]}]}),
            "ReplaceSchemaRequest" => json!({"schema": self.schema}),
            "EditSchemaRequest" => {
                json!({"edit": {"op": "upsert_object_type", "object_type": self.schema["object_types"][0]}})
            }
            "CreateServerBody" => json!({"name": format!("matrixnew{n}"),
                "transport": "streamable_http", "url": "http://127.0.0.1:9/mcp"}),
            "ImportServersBody" => json!({"content": "{\"mcpServers\": {}}", "dry_run": true}),
            "AddFromRegistryBody" => json!({"server": "io.example/matrix", "dry_run": true}),
            "CreatePersonalTokenRequest" => {
                json!({"name": format!("matrix personal {n}"), "scopes": ["chat:use"]})
            }
            "UpdateServerBody" => json!({"version": 1, "name": format!("matrixrenamed{n}")}),
            "ToolSwitchBody" => json!({"is_enabled": false}),
            "CallBody" => json!({"arguments": {}}),
            "AppToolCallRequest" => json!({"name": "echo", "arguments": {}}),
            "AppModelContextRequest" => json!({"content": []}),
            "AppResourceReadRequest" => json!({"uri": "ui://none"}),
            "UserCredentialsBody" => json!({"values": {}}),
            "CreateTokenRequest" => json!({"name": format!("matrix {n}"), "scopes": ["chat:use"],
                "user_id": fixtures.owner_user_id}),
            "CreateUserRequest" => json!({"name": format!("matrix user {n}")}),
            "UpdatePersonBody" => json!({"active": true}),
            "DecisionRequest" => json!({"decision": "deny"}),
            "ElicitationAnswerRequest" => json!({"action": "decline"}),
            "CreateConversationBody" => {
                json!({"title": format!("matrix created {n}"), "bud_id": fixtures.bud_id})
            }
            "UpdateConversationBody" => json!({"title": format!("matrix renamed {n}")}),
            "CompleteBody" => json!({"conversation_id": fixtures.conversation_id,
                "server": "kg", "reference": {"type": "prompt", "name": "matrix"},
                "argument": {"name": "a", "value": ""}}),
            "StreamBody" => {
                json!({"message": "hello", "conversation_id": fixtures.conversation_id})
            }
            other => panic!("add a minimal body for {other} to the authorization matrix"),
        }
    }

    /// Workspace A's tokens: the owner, an admin-role user and a member with each scope they
    /// may hold; expired and revoked owner tokens.
    async fn token_kinds(&self) -> Vec<TokenKind> {
        let mut kinds = vec![
            TokenKind {
                label: "no token".into(),
                token: None,
                holder: Holder::Invalid,
            },
            TokenKind {
                label: "unknown token".into(),
                token: Some("sb_not_a_real_token".into()),
                holder: Holder::Invalid,
            },
        ];
        let store = &self.server.store;
        let expiring = self
            .issue(
                &self.owner_id,
                ScopeSet::all(),
                Some(Duration::from_secs(1)),
            )
            .await;
        let revoked = self.issue(&self.owner_id, ScopeSet::all(), None).await;
        store
            .revoke_token(&self.workspace_id, &revoked.0)
            .await
            .unwrap();
        kinds.push(TokenKind {
            label: "revoked".into(),
            token: Some(revoked.1),
            holder: Holder::Invalid,
        });
        let member = store
            .create_user(&self.workspace_id, "matrix member", UserRole::Member)
            .await
            .unwrap();
        let admin = store
            .create_user(&self.workspace_id, "matrix admin", UserRole::Admin)
            .await
            .unwrap();
        // No token holds no scope (the store refuses an empty set); a member never holds `admin`.
        let people = [
            ("owner", &self.owner_id, true),
            ("admin", &admin.id, false),
            ("member", &member.id, false),
        ];
        for (role, user, owns_fixtures) in people {
            for scope in Scope::ALL {
                if role == "member" && scope == Scope::Admin {
                    continue;
                }
                let scopes: ScopeSet = [scope].into_iter().collect();
                let (_, token) = self.issue(user, scopes.clone(), None).await;
                kinds.push(TokenKind {
                    label: format!("{role} [{scopes}]"),
                    token: Some(token),
                    holder: Holder::WorkspaceA {
                        owns_fixtures,
                        scopes,
                    },
                });
            }
        }
        kinds.extend(self.changed_people_kinds().await);
        let (_, other) = other_workspace(store, "matrix-b", ScopeSet::all()).await;
        kinds.push(TokenKind {
            label: "workspace B [admin …]".into(),
            token: Some(other),
            holder: Holder::OtherWorkspace,
        });
        // By now the expiring token has expired.
        tokio::time::sleep(Duration::from_millis(1100)).await;
        kinds.push(TokenKind {
            label: "expired".into(),
            token: Some(expiring.1),
            holder: Holder::Invalid,
        });
        kinds
    }

    /// A deactivated admin's token with every scope (401 everywhere), and the `admin` token
    /// of an admin demoted to member (it grants nothing now).
    async fn changed_people_kinds(&self) -> Vec<TokenKind> {
        let store = &self.server.store;
        let mut kinds = Vec::new();
        for (name, change, scopes) in [
            (
                "matrix deactivated",
                UserAccessChange {
                    role: None,
                    active: Some(false),
                },
                ScopeSet::all(),
            ),
            (
                "matrix demoted",
                UserAccessChange {
                    role: Some(UserRole::Member),
                    active: None,
                },
                [Scope::Admin].into_iter().collect(),
            ),
        ] {
            let user = store
                .create_user(&self.workspace_id, name, UserRole::Admin)
                .await
                .unwrap();
            let (_, token) = self.issue(&user.id, scopes, None).await;
            store
                .update_user_access(&self.workspace_id, &user.id, change)
                .await
                .unwrap();
            let holder = if change.active == Some(false) {
                Holder::Invalid
            } else {
                Holder::WorkspaceA {
                    owns_fixtures: false,
                    scopes: ScopeSet::empty(),
                }
            };
            kinds.push(TokenKind {
                label: name.into(),
                token: Some(token),
                holder,
            });
        }
        kinds
    }

    async fn issue(
        &self,
        user: &UserId,
        scopes: ScopeSet,
        lifetime: Option<Duration>,
    ) -> (TokenId, String) {
        let issued = self
            .server
            .store
            .create_token(
                &self.workspace_id,
                NewToken {
                    user_id: user.clone(),
                    name: "matrix".into(),
                    scopes,
                    expires_at: lifetime
                        .map(|lifetime| Utc::now() + chrono::Duration::from_std(lifetime).unwrap()),
                },
            )
            .await
            .unwrap();
        (issued.record.id, issued.plaintext.expose().to_owned())
    }
}

fn id_of(value: &Value, path: &[&str]) -> String {
    let mut value = value;
    for key in path {
        value = &value[key];
    }
    value
        .as_str()
        .unwrap_or_else(|| panic!("{path:?}"))
        .to_owned()
}

/// The concrete path of `operation` with `fixtures`' ids.
fn concrete_path(operation: &Operation, fixtures: &Fixtures) -> String {
    let mut path = operation.template.clone();
    for parameter in &operation.path_parameters {
        let value = match parameter.as_str() {
            "bud_id" => fixtures.bud_id.clone(),
            "server_id" => fixtures.server_id.clone(),
            "id" => fixtures.server_id.clone(),
            "conversation_id" => fixtures.conversation_id.clone(),
            "object_id" => fixtures.object_id.clone(),
            "relationship_id" => fixtures.relationship_id.clone(),
            "token_id" => fixtures.token_id.clone(),
            "user_id" => fixtures.person_id.clone(),
            "type_name" => fixtures.type_name.clone(),
            "tool_name" | "name" => "echo".to_owned(),
            "tool_call_id" | "approval_id" | "elicitation_id" => {
                format!("matrix-no-such-{parameter}")
            }
            other => panic!(
                "{} {}: add path parameter {other} to the authorization matrix",
                operation.method, operation.template
            ),
        };
        path = path.replace(&format!("{{{parameter}}}"), &value);
    }
    path
}

/// An `owner_or_admin` operation on the owner's fixture, by someone else without `admin`.
fn refused_as_not_the_owner(access: &Access, owns_fixtures: bool, scopes: &ScopeSet) -> bool {
    access.owner_or_admin && !owns_fixtures && !scopes.allows(Scope::Admin)
}

/// Whether a token of workspace A should be let through (`None` for the other holders).
fn expected_allow(access: &Access, holder: &Holder) -> Option<bool> {
    match holder {
        Holder::WorkspaceA {
            owns_fixtures,
            scopes,
        } => Some(
            access.scope.is_none_or(|scope| scopes.allows(scope))
                && !refused_as_not_the_owner(access, *owns_fixtures, scopes),
        ),
        _ => None,
    }
}

fn judge(
    findings: &mut Findings,
    case: &str,
    operation: &Operation,
    kind: &TokenKind,
    (request_body, status, body): (&str, u16, &str),
    fixtures: &Fixtures,
) {
    findings.cases += 1;
    let allowed = !matches!(status, 401 | 403);
    if allowed && matches!(kind.holder, Holder::WorkspaceA { .. }) {
        *findings.allowed_statuses.entry(status).or_default() += 1;
        findings.allowed.push(format!("{status} {case}"));
    }
    let line = format!("{case} with {}: {status} {}", kind.label, truncate(body));
    match &kind.holder {
        Holder::Invalid if status != 401 => {
            if (200..300).contains(&status) {
                findings.unexpected_allows.push(line);
            } else {
                findings.other.push(line);
            }
        }
        Holder::Invalid => {}
        Holder::OtherWorkspace => {
            let sent = format!("{case} {request_body}");
            let names_a = fixtures.all().iter().any(|id| sent.contains(id));
            // A type name is not an id: B's graph may have a type of that name too.
            let by_id = operation
                .path_parameters
                .iter()
                .any(|parameter| parameter != "type_name");
            let succeeded = (200..300).contains(&status);
            if fixtures.leaked_into(body, &sent) || ((names_a || by_id) && succeeded) {
                findings.unexpected_allows.push(line);
            } else if (by_id && status != 404) || (names_a && !matches!(status, 404 | 422)) {
                findings.other.push(line);
            }
        }
        Holder::WorkspaceA {
            owns_fixtures,
            scopes,
        } => {
            let expected = expected_allow(&operation.access, &kind.holder).unwrap();
            let owner_refusal = refused_as_not_the_owner(&operation.access, *owns_fixtures, scopes);
            if expected && !allowed {
                findings.unexpected_denies.push(line);
            } else if !expected && (200..300).contains(&status) {
                findings.unexpected_allows.push(line);
            } else if (!expected && status != 403 && !(owner_refusal && status == 404))
                || (status >= 500 && status != 502)
            {
                findings.other.push(line);
            }
        }
    }
}

fn truncate(body: &str) -> String {
    body.chars().take(160).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_operation_refuses_every_token_it_should_and_only_those() {
    let mut matrix = Matrix::start().await;
    let (status, text) = matrix
        .send(None, Method::GET, "/api/openapi.json", None)
        .await;
    assert_eq!(status, 200);
    let document: Value = serde_json::from_str(&text).unwrap();
    let mut operations = operations(&document);
    assert!(operations.len() >= 50, "{} operations", operations.len());
    operations.extend(undocumented_operations());
    let kinds = matrix.token_kinds().await;
    let shared = matrix.fixtures().await;
    let mut findings = Findings::default();
    for operation in &operations {
        let mutates = operation.method != Method::GET;
        let fixtures = if mutates {
            matrix.fixtures().await
        } else {
            shared.clone()
        };
        let path = concrete_path(operation, &fixtures);
        let case = format!("{} {path} ({})", operation.method, operation.operation_id);
        // Refusals first, B next, allowed last: an allowed DELETE may remove the fixture.
        let mut ordered: Vec<&TokenKind> = kinds.iter().collect();
        ordered.sort_by_key(
            |kind| match expected_allow(&operation.access, &kind.holder) {
                Some(true) => 3,
                Some(false) => 1,
                None => match kind.holder {
                    Holder::OtherWorkspace => 2,
                    _ => 0,
                },
            },
        );
        for kind in ordered {
            let body = operation
                .body_schema
                .as_deref()
                .map(|schema| matrix.body_for(schema, &fixtures));
            let answer = matrix
                .send(
                    kind.token.as_deref(),
                    operation.method.clone(),
                    &path,
                    body.as_ref(),
                )
                .await;
            judge(
                &mut findings,
                &case,
                operation,
                kind,
                (
                    &body.map(|body| body.to_string()).unwrap_or_default(),
                    answer.0,
                    &answer.1,
                ),
                &fixtures,
            );
        }
    }
    println!(
        "authorization matrix: {} operations × {} token kinds = {} cases; {} unexpected allows, {} unexpected denies, {} other",
        operations.len(),
        kinds.len(),
        findings.cases,
        findings.unexpected_allows.len(),
        findings.unexpected_denies.len(),
        findings.other.len()
    );
    println!(
        "statuses of the allowed cases: {:?}",
        findings.allowed_statuses
    );
    if std::env::var_os("MATRIX_VERBOSE").is_some() {
        println!("{}", findings.allowed.join("\n"));
    }
    assert_eq!(findings.cases, operations.len() * kinds.len());
    assert!(
        findings.unexpected_allows.is_empty()
            && findings.unexpected_denies.is_empty()
            && findings.other.is_empty(),
        "unexpected allows:\n{}\nunexpected denies:\n{}\nother:\n{}",
        findings.unexpected_allows.join("\n"),
        findings.unexpected_denies.join("\n"),
        findings.other.join("\n")
    );
}
