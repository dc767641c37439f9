-- MCP client area, PostgreSQL flavour (twin: migrations/sqlite/0003_mcp_client.sql).
--
-- What the client side last observed about each upstream beyond its status row: the protocol
-- version it negotiated (so a restart skips the version probe), who it says it is, and the
-- stable code of its last failure (so `needs_auth` survives a restart).

CREATE TABLE mcp_server_observations (
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    protocol_version TEXT,
    server_name TEXT,
    server_version TEXT,
    error_code TEXT,
    observed_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace_id, server_id),
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE
);
