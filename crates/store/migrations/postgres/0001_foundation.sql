-- Foundation schema, PostgreSQL flavour. The SQLite twin is migrations/sqlite/0001_foundation.sql:
-- both describe ONE logical schema; change them together.
--
-- Conventions: ids are TEXT (UUIDv7), timestamps are TIMESTAMPTZ (microseconds), JSON is JSONB,
-- secrets are BYTEA. Every row carries workspace_id; child tables reference their
-- parent by (workspace_id, id) so a row can never point into another workspace.

CREATE TABLE workspaces (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE users (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (workspace_id, name),
    UNIQUE (workspace_id, id)
);

CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    token_prefix TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ,
    revoked_at TIMESTAMPTZ,
    last_used_at TIMESTAMPTZ,
    FOREIGN KEY (workspace_id, user_id) REFERENCES users (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX api_tokens_by_workspace ON api_tokens (workspace_id, id);

CREATE TABLE mcp_servers (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    transport TEXT NOT NULL,
    url TEXT,
    command TEXT,
    args JSONB NOT NULL DEFAULT '[]',
    connection_config JSONB NOT NULL DEFAULT '{}',
    secrets_ciphertext BYTEA,
    secrets_summary JSONB NOT NULL DEFAULT '{}',
    status TEXT NOT NULL,
    last_error TEXT,
    tools_cache JSONB,
    resources_cache JSONB,
    prompts_cache JSONB,
    last_synced_at TIMESTAMPTZ,
    sync_status TEXT NOT NULL,
    version BIGINT NOT NULL,
    is_active BOOLEAN NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (workspace_id, name),
    UNIQUE (workspace_id, id)
);

CREATE TABLE mcp_tools (
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    name TEXT NOT NULL,
    title TEXT,
    description TEXT NOT NULL,
    input_schema JSONB NOT NULL,
    output_schema JSONB,
    annotations JSONB,
    is_enabled BOOLEAN NOT NULL,
    definition_hash TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (server_id, name),
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX mcp_tools_by_workspace ON mcp_tools (workspace_id, server_id);

CREATE TABLE buds (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    system_prompt TEXT NOT NULL,
    provider TEXT,
    model TEXT,
    mcp_config JSONB NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (workspace_id, id)
);

CREATE TABLE conversations (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    owner_user_id TEXT NOT NULL,
    bud_id TEXT REFERENCES buds (id) ON DELETE SET NULL,
    title TEXT NOT NULL,
    mcp_config_overrides JSONB,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, owner_user_id) REFERENCES users (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX conversations_by_owner ON conversations (workspace_id, owner_user_id, updated_at);

CREATE TABLE messages (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls JSONB NOT NULL DEFAULT '[]',
    tool_call_id TEXT,
    metadata JSONB NOT NULL DEFAULT '{}',
    status TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (conversation_id, seq),
    UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, conversation_id) REFERENCES conversations (workspace_id, id) ON DELETE CASCADE
);

CREATE TABLE tool_calls (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    message_id TEXT,
    llm_call_id TEXT NOT NULL,
    server_id TEXT REFERENCES mcp_servers (id) ON DELETE SET NULL,
    server_name TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    state TEXT NOT NULL,
    result JSONB,
    error TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    decided_at TIMESTAMPTZ,
    dispatched_at TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    updated_at TIMESTAMPTZ NOT NULL,
    FOREIGN KEY (workspace_id, conversation_id) REFERENCES conversations (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, message_id) REFERENCES messages (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX tool_calls_by_conversation ON tool_calls (workspace_id, conversation_id);
CREATE INDEX tool_calls_by_state ON tool_calls (state);

CREATE TABLE tool_approval_policies (
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    policy TEXT NOT NULL,
    pinned_definition_hash TEXT,
    updated_by TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace_id, server_id, tool_name),
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE
);

CREATE TABLE audit_log (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    at TIMESTAMPTZ NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT,
    details JSONB NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_by_workspace ON audit_log (workspace_id, id);
