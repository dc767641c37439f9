//! Switchboard's persistence: one logical schema on SQLite (the embedded default) or PostgreSQL,
//! behind one cheap-to-clone [`Store`].
//!
//! # Invariants
//! - Every row belongs to a workspace and every area method takes the `WorkspaceId` it works
//!   in: a call never returns, changes or deletes another workspace's rows (a row of another
//!   workspace looks exactly like a missing one: `StoreError::NotFound`). Child tables
//!   reference parents by `(workspace_id, id)`, so the database refuses cross-workspace links.
//!   `list_workspaces`/`find_workspace_by_name`, `authenticate` and `take_oauth_state` are the
//!   only unscoped reads;
//!   `recover_interrupted_tool_calls`, `expire_pending_approval_requests`,
//!   `expire_pending_elicitation_requests` and `recover_orphaned_work` are the only unscoped
//!   writes (recovery), and they touch only rows of dead instances ([`instances`]): never the
//!   work in flight of a replica still running, nor this process's own.
//! - Secrets (server headers, API keys, env, OAuth tokens and clients, people's credentials) are
//!   stored only AES-256-GCM encrypted
//!   ([`secrets`]); token plaintexts are never stored (SHA-256 only).
//! - Writes are durable when acknowledged: SQLite runs WAL with `synchronous=FULL`, PostgreSQL
//!   sessions force `synchronous_commit=on`.
//! - Both backends store the same text: U+0000, which PostgreSQL refuses in TEXT and JSONB, is
//!   replaced by U+FFFD in content (messages, tool calls, approvals, audit, titles, buds'
//!   prompts — `storable.rs`) and refused in names.
//!
//! # Public API (by module)
//! - [`Store`]: `open(&DatabaseConfig, data_dir, SecretCipher)` (connect + migrate), `connect`,
//!   `migrate`, `ping`, `close`, `backend_kind`, `known_migration_versions`, `cipher`,
//!   `durability_settings` (what the database reports: WAL/`synchronous=full`, or
//!   `synchronous_commit=on`).
//! - [`config`]: [`DatabaseConfig`] (`[database]`: `url`, `max_connections`, `busy_timeout_ms`,
//!   `acquire_timeout_ms`, `sqlite_synchronous`; `validate()`), [`BackendKind`], `redact_url`.
//! - [`secrets`]: [`SecretCipher`] (`resolve(env_key, data_dir)`, `from_key_text`, `generate`,
//!   `encrypt`/`decrypt` with associated data), `ENCRYPTION_KEY_ENV`, `KEY_FILE_NAME`.
//! - [`workspaces`]: `create_workspace`, `get_workspace`, `find_workspace_by_name`,
//!   `list_workspaces`.
//! - [`users`]: `create_user`, `get_user`, `find_user_by_name`, `list_users`,
//!   `check_token_holder` (a member may not hold `admin`, a deactivated user no new token);
//!   [`UserRole`], `UserRecord::active`.
//! - [`user_access`]: `update_user_access(ws, id, UserAccessChange {role, active})`,
//!   `delete_user(ws, id, RemovedConversations::{Delete, TransferTo(heir)})` → [`RemovedUser`]
//!   (both refuse to leave no active owner or admin: `Conflict`; both move the
//!   revocation epoch).
//! - [`tokens`]: `create_token` → [`IssuedToken`] (plaintext once), `import_token`, `get_token`,
//!   `list_tokens`, `revoke_token`; `hash_token`.
//! - [`authentication`]: `authenticate(plaintext)` / `authenticate_at(plaintext, now)` →
//!   `Option<Principal>`, `check_token` → [`TokenCheck`] (a deactivated holder told apart);
//!   scopes bounded by the holder's current role.
//! - [`revocations`]: `revocation_epoch` (moves at every revocation, cheap to read),
//!   `follow_revocations` (other processes' revocations: NOTIFY on PostgreSQL, a poll on SQLite).
//! - [`bootstrap`]: `bootstrap_default(admin_token)` → `Option<Bootstrapped>`.
//! - [`kg`]: `kg_load` → [`StoredKnowledgeGraph`], `kg_generation`, `kg_save_new_graph`,
//!   `kg_save_schema_update`, `kg_insert_records`, `kg_delete_records` (the knowledge graph;
//!   validated by `switchboard-kg`; each change names the generation it was planned on and is
//!   refused with `Conflict` when another writer moved it first).
//! - [`servers`]: `create_server`, `get_server`, `find_server_by_name`, `list_servers`,
//!   `update_server(ws, id, expected_version, ServerPatch)` (→ `VersionConflict` when stale),
//!   `delete_server`, `server_secrets` (decrypted, for connecting only), `record_server_status`,
//!   `record_server_sync`.
//! - [`tools`]: `replace_server_tools(ws, server, &[ToolDefinition])` (after a sync; keeps
//!   enable switches), `list_server_tools`, `list_workspace_tools`, `get_tool`,
//!   `set_tool_enabled`; [`definition_hash`].
//! - [`buds`]: `create_bud`, `get_bud`, `list_buds`, `update_bud(BudPatch)`, `delete_bud`.
//! - [`conversations`]: `create_conversation`, `get_conversation`,
//!   `list_conversations(ws, Option<owner>)`, `update_conversation`, `delete_conversation`.
//! - [`conversation_pages`] (chat): `list_conversations_page(ws, owner, limit, after)` with a
//!   [`ConversationCursor`] (keyset paging, most recently active first).
//! - [`messages`]: `append_message` (gap-free `seq`), `update_message` (complete a `partial`
//!   message), `edit_message_metadata` (read-modify-write with the row locked, so concurrent
//!   editors of one message all keep their change), `get_message`, `list_messages`;
//!   `MessageRecord::to_chat_message`.
//! - [`tool_calls`]: `create_tool_call` (→ `proposed`), `transition_tool_call(ws, id, next,
//!   ToolCallOutcome)` (state machine + compare-and-set; `Conflict` otherwise),
//!   `advance_tool_call` (several steps with an audit row, one commit),
//!   `finish_tool_call_with_message` (final state, audit row and tool message, one commit),
//!   `get_tool_call`, `list_tool_calls`, `recover_interrupted_tool_calls` (dead instances').
//! - [`policies`]: `set_tool_policy`, `get_tool_policy`, `list_tool_policies`,
//!   `delete_tool_policy`.
//! - [`audit`]: `append_audit` (details redacted), `list_audit(AuditQuery)` (newest first).
//! - [`audit_events`]: `append_audit_event(NewAuditEvent)` (structured columns: user,
//!   conversation, server, tool, status, duration; details redacted), `search_audit(AuditSearch)`
//!   (time range, server, tool, user, status, action; newest first, paged by id).
//! - [`tool_rules`]: per-bud policies and a user's remembered decisions ([`ToolRuleScope`]):
//!   `set_tool_rule`, `get_tool_rule`, `list_tool_rules`, `list_server_tool_rules`,
//!   `delete_tool_rule`.
//! - [`tool_pins`]: `save_tool_pin_snapshot`, `get_tool_pin_snapshot` (what a pin hash stood
//!   for), `record_server_instructions`, `get_server_instructions`.
//! - [`gate_inputs`]: `get_gate_inputs` (a call's bud, server instructions, bud rule,
//!   workspace policy and the owner's remembered decision, in one query: what the gate reads).
//! - [`mcp_observations`] (mcp client): `record_mcp_observation`, `get_mcp_observation`,
//!   `list_mcp_observations` (negotiated protocol version, server identity, last error code).
//! - [`approval_requests`]: `create_approval_request`, `get_approval_request`,
//!   `resolve_approval_request` (once, compare-and-set on pending), `list_approval_requests`,
//!   `expire_pending_approval_requests` (dead instances').
//! - [`elicitation_requests`]: `create_elicitation_request`, `get_elicitation_request`,
//!   `resolve_elicitation_request`, `list_pending_elicitation_requests`,
//!   `expire_pending_elicitation_requests` (dead instances').
//! - [`decision_notices`] (replicas, PostgreSQL only): resolving an approval or elicitation
//!   request sends a [`DecisionNotice`] on [`DECISIONS_CHANNEL`] in the same statement;
//!   `listen_for_decisions` → `Option<DecisionListener>` (`None` on SQLite).
//! - [`instances`] (replicas): `register_instance(heartbeat_every)` → [`InstanceId`] (rows of
//!   this process's answers carry it from then on), `instance_id`, `heartbeat_instance`,
//!   `deregister_instance`, `recover_orphaned_work` (sweep of dead instances' rows) →
//!   [`OrphansRecovered`], `keep_instance_alive` → [`InstanceHeartbeat`] (`stop`, `abandon`).
//! - [`conversation_answers`] (one answer in flight per conversation, across replicas):
//!   `claim_conversation_answer` → `Option<AnswerClaim>` (`None`: a live replica answers
//!   there), `release_conversation_answer`, `list_answers_in_flight`.
//! - [`oauth`] (OAuth connections to remote servers; payloads sealed, bound to their row):
//!   `save_oauth_credentials`, `load_oauth_credentials` → [`OAuthCredentialsRecord`],
//!   `oauth_connection_summary` (nothing decrypted), `delete_oauth_credentials`,
//!   `list_oauth_connected_users`, `try_acquire_oauth_refresh_lease` /
//!   `release_oauth_refresh_lease` (one refresh at a time across replicas);
//!   `save_oauth_state`, `take_oauth_state` → [`OAuthStateTake`] (single use, one statement;
//!   unscoped: the state is the credential); `save_oauth_client`, `load_oauth_client`,
//!   `delete_oauth_client`.
//! - [`app_resources`] (MCP Apps' `ui://` HTML per server, replaced by every sync):
//!   `replace_server_app_resources`, `get_app_resource`.
//! - [`user_credentials`] (a person's values for a server's user fields, sealed):
//!   `set_user_credentials`, `clear_user_credentials`, `user_credentials` (decrypted, for
//!   connecting only), `user_credential_names`.
//! - [`llm_providers`] (named LLM providers added through the API, key sealed):
//!   `create_llm_provider`, `replace_llm_provider`, `get_llm_provider`, `list_llm_providers`,
//!   `llm_provider_api_key` (decrypted, for building the provider only), `delete_llm_provider`.
//! - [`usage`] (token totals summed from the assistant messages' stored usage, by provider and
//!   model, per conversation, person or workspace): `usage_totals`.
//!
//! # Adding an area (the pattern)
//! 1. Add `migrations/sqlite/NNNN_area.sql` and `migrations/postgres/NNNN_area.sql` with your
//!    number (0002 knowledge graph, 0003 mcp client, 0004 chat, 0005 approvals/audit,
//!    0006 instances, 0007 bud owners, 0008 server auth, 0009 LLM providers, 0010 MCP apps,
//!    0011 people, 0012 model choice). Ids `TEXT`; timestamps `TEXT` (SQLite) / `TIMESTAMPTZ`
//!    (PostgreSQL); JSON `TEXT` / `JSONB`;
//!    booleans `INTEGER` / `BOOLEAN`; bytes `BLOB` / `BYTEA`; SQLite tables `STRICT`. Give every
//!    table a `workspace_id` and reference parents by `(workspace_id, id)`.
//! 2. Add `src/<area>.rs` with its records and an `impl Store { … }` block. Write each query
//!    once with `$1…$N` placeholders inside `on_backend!(self, |pool| …)` (or
//!    `write_transaction!(self, |tx| …)` with `&mut *tx` as executor); read rows with
//!    `#[derive(sqlx::FromRow)]` structs of portable types (`String`, `i64`, `bool`,
//!    `Option<_>`, `DateTime<Utc>`, `Json<T>`, `Vec<u8>`) and convert them to public records.
//!    Take timestamps from `clock::now()` (microsecond precision, equal on both backends).
//!    Map constraint errors with `error::insert_error` / `unique_violation`.
//! 3. Add your tests to `tests/it/<area>.rs` with `store_test!`: each runs on SQLite and on
//!    PostgreSQL.

pub mod answer_streams;
pub mod app_model_contexts;
pub mod app_resources;
pub mod approval_requests;
pub mod audit;
pub mod audit_events;
pub mod authentication;
mod backend;
pub mod bootstrap;
pub mod buds;
mod clock;
mod commit_queue;
pub mod config;
pub mod conversation_answers;
pub mod conversation_pages;
pub mod conversations;
pub mod decision_notices;
pub mod elicitation_requests;
pub mod error;
pub mod gate_inputs;
pub mod instances;
pub mod kg;
mod listeners;
pub mod llm_providers;
pub mod mcp_observations;
pub mod messages;
pub mod oauth;
pub mod oidc;
mod pending_requests;
pub mod policies;
pub mod revocations;
pub mod secrets;
pub mod servers;
mod storable;
mod store;
pub mod tokens;
pub mod tool_calls;
pub mod tool_pins;
pub mod tool_rules;
pub mod tools;
pub mod usage;
pub mod user_access;
pub mod user_credentials;
pub mod users;
mod validate;
pub mod web_sessions;
pub mod workspaces;

pub use answer_streams::{
    ANSWER_STREAMS_CHANNEL, AnswerStreamEvent, AnswerStreamListener, AnswerStreamNotice,
    StreamEventRow,
};
pub use approval_requests::{
    ApprovalRequestFilter, ApprovalRequestRecord, ApprovalResolution, ApprovalStatus,
    NewApprovalRequest,
};
pub use audit::{AuditEntry, AuditQuery, NewAuditEntry};
pub use audit_events::{AuditEventRecord, AuditSearch, NewAuditEvent};
pub use authentication::TokenCheck;
pub use backend::SQLITE_FILE_NAME;
pub use bootstrap::{Bootstrapped, DEFAULT_WORKSPACE_NAME};
pub use buds::{BudFallback, BudPatch, BudRecord, NewBud};
pub use config::{BackendKind, DatabaseConfig, DatabaseConfigError, SqliteSynchronousMode};
pub use conversation_answers::AnswerClaim;
pub use conversation_pages::ConversationCursor;
pub use conversations::{ConversationPatch, ConversationRecord, ModelChoice, NewConversation};
pub use decision_notices::{DECISIONS_CHANNEL, DecisionListener, DecisionNotice, ListenerEvent};
pub use elicitation_requests::{
    ElicitationRequestRecord, ElicitationStatus, NewElicitationRequest,
};
pub use error::{StoreError, StoreResult};
pub use gate_inputs::{GateInputs, GateInputsKey, GateRule};
pub use instances::{InstanceHeartbeat, InstanceId, OrphansRecovered};
pub use kg::StoredKnowledgeGraph;
pub use llm_providers::{LlmProviderRecord, NewLlmProvider};
pub use mcp_observations::{McpObservation, McpObservationRecord};
pub use messages::{MessageRecord, MessageStatus, MessageUpdate, NewMessage};
pub use oauth::{
    NewOAuthState, OAuthConnectionSummary, OAuthCredentials, OAuthCredentialsRecord,
    OAuthStateRecord, OAuthStateTake,
};
pub use oidc::{NewOidcPerson, OidcLoginSecrets, OidcLoginTake};
pub use policies::{NewToolPolicy, ToolPolicyRecord};
pub use revocations::REVOCATIONS_CHANNEL;
pub use secrets::{ENCRYPTION_KEY_ENV, KEY_FILE_NAME, KeySource, SecretCipher};
pub use servers::{
    AuthMode, CredentialScope, NewServer, OAuthClientConfig, ServerAuthConfig,
    ServerConnectionConfig, ServerPatch, ServerRecord, ServerSecrets, ServerSecretsSummary,
    ServerStatus, ServerSync, SyncStatus, TokenEndpointAuthMethod, UserField, is_user_field_name,
    substitute_user_fields, user_field_references, validate_auth,
};
pub use store::Store;
pub use tokens::{IssuedToken, NewToken, TOKEN_PREFIX, TokenPlaintext, TokenRecord};
pub use tool_calls::{NewToolCall, TaskStatusRecord, ToolCallOutcome, ToolCallRecord};
pub use tool_pins::{ObservedInstructions, ToolPinSnapshot};
pub use tool_rules::{NewToolRule, ToolRuleRecord, ToolRuleScope};
pub use tools::{ToolRecord, definition_hash};
pub use usage::{UsageFilter, UsageRow};
pub use user_access::{RemovedConversations, RemovedUser, UserAccessChange};
pub use users::{UserRecord, UserRole};
pub use web_sessions::{NewWebSession, SessionCheck};
pub use workspaces::WorkspaceRecord;
