//! Who may call each operation of the API, in one table, written into the OpenAPI document so
//! that clients and tests read it instead of parsing prose:
//!
//! - the operation's security requirement lists its scope (`"security": [{"bearer":
//!   ["chat:use"]}]`; OpenAPI 3.1 allows role names for non-OAuth schemes);
//! - `x-authorization` says the same as data: `{"scope": "chat:use" | null,
//!   "owner_or_admin": bool}` — `scope: null` means any valid token; `owner_or_admin` means
//!   the operation acts on something a person owns (a bud, a conversation's approval or form)
//!   and a member who is not its owner is refused even with the scope; `"public": true` (and
//!   `"security": []`) marks the sign-in routes, which take no token.
//!
//! The handlers enforce the scope through their `Scoped<scopes::X>` extractor; this table
//! describes it. The two are kept in agreement by the authorization-matrix test
//! (`tests/it/security/authorization_matrix.rs`), which drives every operation of the document
//! with every scope and expects exactly what the table says, and by the unit test below, which
//! refuses an operation without an entry (a new route must say who may call it).
//! Conditions that depend on the body (`admin` for a stdio server, for `force`, for
//! `all_users`) stay in the 403 response's description.

use switchboard_core::Scope;
use utoipa::openapi::OpenApi;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::security::SecurityRequirement;

/// The extension key holding [`Access`] on every operation.
pub const EXTENSION: &str = "x-authorization";

/// What an operation requires of its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The scope the token must hold (directly or through `admin`); `None`: any valid token.
    pub scope: Option<Scope>,
    /// Only the owner of the resource, or an admin, may act on it.
    pub owner_or_admin: bool,
    /// No token at all: the sign-in routes, whose credentials are the flow's `state` or the
    /// session cookie (`security: []`).
    pub public: bool,
}

const fn scope(scope: Scope) -> Access {
    Access {
        scope: Some(scope),
        owner_or_admin: false,
        public: false,
    }
}

const fn owned(scope: Scope) -> Access {
    Access {
        scope: Some(scope),
        owner_or_admin: true,
        public: false,
    }
}

const ANY_TOKEN: Access = Access {
    scope: None,
    owner_or_admin: false,
    public: false,
};

const PUBLIC: Access = Access {
    scope: None,
    owner_or_admin: false,
    public: true,
};

/// Every operation by its `operationId` (the handler's name).
pub const TABLE: &[(&str, Access)] = &[
    // me, health
    ("me", ANY_TOKEN),
    ("list_my_tokens", ANY_TOKEN),
    ("create_my_token", ANY_TOKEN),
    ("revoke_my_token", ANY_TOKEN),
    ("api_health", ANY_TOKEN),
    // tokens, users, audit
    ("list_tokens", scope(Scope::Admin)),
    ("create_token", scope(Scope::Admin)),
    ("revoke_token", scope(Scope::Admin)),
    ("list_users", scope(Scope::Admin)),
    ("list_people", scope(Scope::Admin)),
    ("update_person", scope(Scope::Admin)),
    ("delete_person", scope(Scope::Admin)),
    ("create_user", scope(Scope::Admin)),
    ("search_audit", scope(Scope::Admin)),
    // buds
    ("list_buds", scope(Scope::ChatUse)),
    ("create_bud", scope(Scope::ChatUse)),
    ("get_bud", scope(Scope::ChatUse)),
    ("update_bud", owned(Scope::ChatUse)),
    ("delete_bud", owned(Scope::ChatUse)),
    // LLM providers
    ("list_llm_providers", scope(Scope::ChatUse)),
    ("get_llm_provider", scope(Scope::ChatUse)),
    ("list_llm_provider_models", scope(Scope::ChatUse)),
    ("create_llm_provider", scope(Scope::Admin)),
    ("update_llm_provider", scope(Scope::Admin)),
    ("delete_llm_provider", scope(Scope::Admin)),
    // token usage (another person's totals: admins only, said in the 403's description)
    ("conversation_usage", scope(Scope::ChatUse)),
    ("user_usage", scope(Scope::ChatUse)),
    ("workspace_usage", scope(Scope::Admin)),
    // policies
    ("list_bud_policies", scope(Scope::ServersRead)),
    ("set_bud_policy", scope(Scope::ServersWrite)),
    ("delete_bud_policy", scope(Scope::ServersWrite)),
    ("list_policies", scope(Scope::ServersRead)),
    ("get_policy", scope(Scope::ServersRead)),
    ("set_policy", scope(Scope::ServersWrite)),
    ("delete_policy", scope(Scope::ServersWrite)),
    // knowledge graph
    ("get_schema", scope(Scope::SchemaRead)),
    ("list_versions", scope(Scope::SchemaRead)),
    ("schema_changelog", scope(Scope::SchemaRead)),
    ("replace_schema", scope(Scope::DataWrite)),
    ("edit_schema", scope(Scope::DataWrite)),
    ("export_graph", scope(Scope::DataWrite)),
    ("import_graph", scope(Scope::DataWrite)),
    ("delete_object", scope(Scope::DataWrite)),
    ("delete_relationship", scope(Scope::DataWrite)),
    // MCP servers
    ("list_servers", scope(Scope::ServersRead)),
    ("get_server", scope(Scope::ServersRead)),
    ("export_servers", scope(Scope::ServersRead)),
    ("capabilities", scope(Scope::ServersRead)),
    ("create_server", scope(Scope::ServersWrite)),
    ("import_servers", scope(Scope::ServersWrite)),
    ("search_registry", scope(Scope::ServersRead)),
    ("add_from_registry", scope(Scope::ServersWrite)),
    ("update_server", scope(Scope::ServersWrite)),
    ("delete_server", scope(Scope::ServersWrite)),
    ("sync_server", scope(Scope::ServersWrite)),
    ("test_server", scope(Scope::ServersWrite)),
    ("set_tool_enabled", scope(Scope::ServersWrite)),
    ("call_tool", scope(Scope::ServersWrite)),
    ("set_user_credentials", scope(Scope::ChatUse)),
    ("clear_user_credentials", scope(Scope::ChatUse)),
    ("authorize_server", scope(Scope::ChatUse)),
    ("disconnect_server", scope(Scope::ChatUse)),
    // chat
    ("list_conversations", scope(Scope::ChatUse)),
    ("create_conversation", scope(Scope::ChatUse)),
    ("get_conversation", scope(Scope::ChatUse)),
    ("update_conversation", scope(Scope::ChatUse)),
    ("delete_conversation", scope(Scope::ChatUse)),
    ("tool_result_page", scope(Scope::ChatUse)),
    ("cancel_tool_task", scope(Scope::ChatUse)),
    ("tool_call_app", scope(Scope::ChatUse)),
    ("app_preview", scope(Scope::ChatUse)),
    ("attachment_updates", scope(Scope::ChatUse)),
    ("app_tool_call", scope(Scope::ChatUse)),
    ("update_app_model_context", scope(Scope::ChatUse)),
    ("app_resource_read", scope(Scope::ChatUse)),
    ("start_answer", scope(Scope::ChatUse)),
    ("attach_to_answer", scope(Scope::ChatUse)),
    ("context_items", scope(Scope::ChatUse)),
    ("complete_argument", scope(Scope::ChatUse)),
    // approvals and elicitations
    ("list_approvals", scope(Scope::ChatUse)),
    ("decide", owned(Scope::ChatUse)),
    ("list_elicitations", scope(Scope::ChatUse)),
    ("answer_elicitation", owned(Scope::ChatUse)),
    // signing in (public)
    ("sign_in_options", PUBLIC),
    ("oidc_login", PUBLIC),
    ("oidc_callback", PUBLIC),
    ("logout", PUBLIC),
    ("backchannel_logout", PUBLIC),
];

/// [`Access`] as written in the document under [`EXTENSION`].
#[derive(serde::Serialize)]
struct AccessExtension {
    scope: Option<&'static str>,
    owner_or_admin: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    public: bool,
}

/// The entry of `operation_id`, if the table has one.
pub fn access_of(operation_id: &str) -> Option<Access> {
    TABLE
        .iter()
        .find(|(id, _)| *id == operation_id)
        .map(|(_, access)| *access)
}

/// Writes each operation's [`Access`] into `document` (security scopes and [`EXTENSION`]).
pub fn describe(document: &mut OpenApi) {
    for item in document.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            let Some(access) = operation.operation_id.as_deref().and_then(access_of) else {
                continue;
            };
            let scopes: Vec<&str> = access.scope.map(Scope::as_str).into_iter().collect();
            operation.security = Some(if access.public {
                Vec::new()
            } else {
                vec![SecurityRequirement::new("bearer", scopes)]
            });
            let value = serde_json::to_value(AccessExtension {
                scope: access.scope.map(Scope::as_str),
                owner_or_admin: access.owner_or_admin,
                public: access.public,
            })
            .unwrap_or_default();
            operation
                .extensions
                .get_or_insert_with(Extensions::default)
                .insert(EXTENSION.to_owned(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operation_ids() -> Vec<String> {
        let document = crate::openapi_document();
        let mut ids = Vec::new();
        for item in document.paths.paths.values() {
            let operations = [&item.get, &item.put, &item.post, &item.delete, &item.patch];
            for operation in operations.into_iter().flatten() {
                ids.push(operation.operation_id.clone().expect("an operationId"));
            }
        }
        ids
    }

    #[test]
    fn every_operation_says_who_may_call_it_and_every_entry_is_an_operation() {
        let ids = operation_ids();
        let missing: Vec<&String> = ids.iter().filter(|id| access_of(id).is_none()).collect();
        assert!(
            missing.is_empty(),
            "add these operations to route_access::TABLE: {missing:?}"
        );
        let stale: Vec<&str> = TABLE
            .iter()
            .map(|(id, _)| *id)
            .filter(|id| !ids.iter().any(|known| known == id))
            .collect();
        assert!(stale.is_empty(), "no such operations: {stale:?}");
        assert_eq!(TABLE.len(), ids.len(), "one entry per operation");
    }
}
