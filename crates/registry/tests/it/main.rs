//! Integration tests of the server registry: a real store (SQLite in a temp dir) and real
//! upstreams (the reference `everything` server, the Python fixtures of `switchboard-mcp-client`).

mod apps;
mod list_changes;
mod metrics;
mod own_endpoint;
mod registry;
mod support;
