//! End-to-end tests of the HTTP surface: the real accept loop on 127.0.0.1:0, a real SQLite
//! store in a temporary directory, and reqwest (or a raw TCP socket) as the client.
//!
//! One test binary (one link) with a folder per area; `support/` is the one place for starting
//! servers and the helpers the areas share.

mod approvals;
mod chat;
mod contract;
mod gateway;
mod kg;
mod mcp_servers;
mod oauth;
mod operations;
mod security;
mod support;
