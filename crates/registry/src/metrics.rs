//! The registry's metric helpers (through the `metrics` facade, like the client's own in
//! `switchboard-mcp-client`): capability-cache lookups and refreshes. Labels are server names,
//! never user data.

pub(crate) fn cache_lookup(result: &'static str) {
    metrics::counter!("mcp_capability_cache_lookups_total", "result" => result).increment(1);
}

pub(crate) fn cache_refresh(server: &str, outcome: &'static str) {
    metrics::counter!("mcp_capability_refreshes_total", "server" => server.to_owned(), "outcome" => outcome).increment(1);
}
