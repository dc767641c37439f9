-- MCP Apps, PostgreSQL flavour (twin: migrations/sqlite/0010_mcp_apps.sql).
--
-- A tool's `_meta` as the host reads it (`ui.resourceUri`, `ui.visibility`, and the SHA-256 of
-- the app resource read at the sync, which is part of the definition hash), and the app
-- resources (`ui://` HTML) read at the last sync of their server, replaced by every sync.
ALTER TABLE mcp_tools ADD COLUMN meta JSONB;

CREATE TABLE mcp_app_resources (
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    uri TEXT NOT NULL,
    mime_type TEXT NOT NULL,
    html TEXT NOT NULL,
    meta JSONB,
    sha256 TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (server_id, uri),
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX mcp_app_resources_by_workspace ON mcp_app_resources (workspace_id, server_id);
