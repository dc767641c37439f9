-- Server authorization, PostgreSQL flavour (twin: migrations/sqlite/0008_server_auth.sql).
--
-- OAuth 2.1 connections to remote MCP servers and per-user credentials (issue 11). Every secret
-- (tokens, client secrets, the flow's PKCE verifier, a person's API key) is stored only
-- AES-256-GCM sealed, bound by associated data to its row's key. Rows go with their server or
-- user (ON DELETE CASCADE).

-- OAuth credentials of one connection: a person's (user_id set) or the workspace's shared one
-- (user_id NULL; `subject` is the user id or '' so the key has no NULL). The payload is opaque
-- to the store; expires_at, scopes and account are a plain summary for the API. The refresh
-- lease (holder, until) makes one replica at a time refresh the tokens.
CREATE TABLE mcp_oauth_credentials (
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT,
    payload_ciphertext BYTEA NOT NULL,
    expires_at TIMESTAMPTZ,
    scopes JSONB NOT NULL,
    account TEXT,
    updated_at TIMESTAMPTZ NOT NULL,
    refresh_lease_holder TEXT,
    refresh_lease_until TIMESTAMPTZ,
    PRIMARY KEY (workspace_id, server_id, subject),
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, user_id) REFERENCES users (workspace_id, id) ON DELETE CASCADE
);

-- Authorization requests in flight, keyed by the SHA-256 of their `state` (never the state
-- itself); taken once by the callback, dead after expires_at.
CREATE TABLE mcp_oauth_states (
    state_digest TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    shared BOOLEAN NOT NULL,
    payload_ciphertext BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, user_id) REFERENCES users (workspace_id, id) ON DELETE CASCADE
);

CREATE INDEX mcp_oauth_states_expiry ON mcp_oauth_states (expires_at);

-- OAuth clients registered at an authorization server (dynamic client registration), per
-- server and issuer.
CREATE TABLE mcp_oauth_clients (
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    issuer TEXT NOT NULL,
    payload_ciphertext BYTEA NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace_id, server_id, issuer),
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE
);

-- A person's values for a server's user fields (`{{user.NAME}}` in headers or env).
CREATE TABLE mcp_user_credentials (
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    value_ciphertext BYTEA NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace_id, server_id, user_id, name),
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, user_id) REFERENCES users (workspace_id, id) ON DELETE CASCADE
);
