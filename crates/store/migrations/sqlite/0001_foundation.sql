-- Foundation schema, SQLite flavour. The PostgreSQL twin is migrations/postgres/0001_foundation.sql:
-- both describe ONE logical schema; change them together.
--
-- Conventions: ids are TEXT (UUIDv7), timestamps are RFC 3339 TEXT in UTC (microseconds), JSON is
-- TEXT, booleans are INTEGER 0/1. Every row carries workspace_id; child tables reference their
-- parent by (workspace_id, id) so a row can never point into another workspace.

CREATE TABLE workspaces (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE users (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (workspace_id, name),
    UNIQUE (workspace_id, id)
) STRICT;

CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    token_prefix TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    revoked_at TEXT,
    last_used_at TEXT,
    FOREIGN KEY (workspace_id, user_id) REFERENCES users (workspace_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX api_tokens_by_workspace ON api_tokens (workspace_id, id);

CREATE TABLE mcp_servers (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    transport TEXT NOT NULL,
    url TEXT,
    command TEXT,
    args TEXT NOT NULL DEFAULT '[]',
    connection_config TEXT NOT NULL DEFAULT '{}',
    secrets_ciphertext BLOB,
    secrets_summary TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL,
    last_error TEXT,
    tools_cache TEXT,
    resources_cache TEXT,
    prompts_cache TEXT,
    last_synced_at TEXT,
    sync_status TEXT NOT NULL,
    version INTEGER NOT NULL,
    is_active INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (workspace_id, name),
    UNIQUE (workspace_id, id)
) STRICT;

CREATE TABLE mcp_tools (
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    name TEXT NOT NULL,
    title TEXT,
    description TEXT NOT NULL,
    input_schema TEXT NOT NULL,
    output_schema TEXT,
    annotations TEXT,
    is_enabled INTEGER NOT NULL,
    definition_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (server_id, name),
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX mcp_tools_by_workspace ON mcp_tools (workspace_id, server_id);

CREATE TABLE buds (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    system_prompt TEXT NOT NULL,
    provider TEXT,
    model TEXT,
    mcp_config TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (workspace_id, id)
) STRICT;

CREATE TABLE conversations (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    owner_user_id TEXT NOT NULL,
    bud_id TEXT REFERENCES buds (id) ON DELETE SET NULL,
    title TEXT NOT NULL,
    mcp_config_overrides TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, owner_user_id) REFERENCES users (workspace_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX conversations_by_owner ON conversations (workspace_id, owner_user_id, updated_at);

CREATE TABLE messages (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls TEXT NOT NULL DEFAULT '[]',
    tool_call_id TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (conversation_id, seq),
    UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, conversation_id) REFERENCES conversations (workspace_id, id) ON DELETE CASCADE
) STRICT;

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
    result TEXT,
    error TEXT,
    created_at TEXT NOT NULL,
    decided_at TEXT,
    dispatched_at TEXT,
    finished_at TEXT,
    updated_at TEXT NOT NULL,
    FOREIGN KEY (workspace_id, conversation_id) REFERENCES conversations (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, message_id) REFERENCES messages (workspace_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX tool_calls_by_conversation ON tool_calls (workspace_id, conversation_id);
CREATE INDEX tool_calls_by_state ON tool_calls (state);

CREATE TABLE tool_approval_policies (
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    policy TEXT NOT NULL,
    pinned_definition_hash TEXT,
    updated_by TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (workspace_id, server_id, tool_name),
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE
) STRICT;

CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT,
    details TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX audit_log_by_workspace ON audit_log (workspace_id, id);
