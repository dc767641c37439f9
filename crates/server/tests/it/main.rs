//! End-to-end tests of the HTTP surface: the real accept loop on 127.0.0.1:0, a real SQLite
//! store in a temporary directory, and reqwest (or a raw TCP socket) as the client.

mod approvals_audit;
mod approvals_elicitation;
mod approvals_flow;
mod approvals_other_users;
mod approvals_policies;
mod approvals_replicas;
mod approvals_support;
mod auth;
mod chat_api;
mod chat_buds;
mod chat_call_ids;
mod chat_in_flight;
mod chat_limits;
mod chat_nul_characters;
mod chat_offline_everything;
mod chat_offline_kg;
mod chat_openai;
mod chat_shutdown;
mod chat_sse;
mod chat_support;
mod chat_tools;
mod kg;
mod lifecycle;
mod limits;
mod mcp_revocation;
mod mcp_servers;
mod mcp_servers_failed_start;
mod mcp_servers_kg;
mod mcp_servers_locking;
mod mcp_servers_slow;
mod mcp_servers_test_count;
mod replica_safety;
mod support;
mod url_policy;
mod users;
