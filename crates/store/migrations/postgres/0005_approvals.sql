-- Approvals, elicitation, pinning and audit, PostgreSQL flavour (twin: migrations/sqlite/0005_approvals.sql).
--
-- Workspace-wide policies live in `tool_approval_policies` (0001). This adds the narrower
-- rules (per bud, and a user's remembered "always" decisions), the snapshots that pins point
-- at (so a changed definition can be shown as a diff), the server instructions last observed,
-- the approval and elicitation requests of conversations (a reload shows them; a restart
-- expires the pending ones), and structured audit columns for filtering.

CREATE TABLE bud_tool_policies (
    workspace_id TEXT NOT NULL,
    bud_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    policy TEXT NOT NULL,
    pin_hash TEXT,
    updated_by TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace_id, bud_id, server_id, tool_name),
    FOREIGN KEY (workspace_id, bud_id) REFERENCES buds (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE
);

CREATE TABLE user_tool_decisions (
    workspace_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    policy TEXT NOT NULL,
    pin_hash TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace_id, user_id, server_id, tool_name),
    FOREIGN KEY (workspace_id, user_id) REFERENCES users (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE
);

CREATE TABLE tool_pin_snapshots (
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    pin_hash TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    definition JSONB NOT NULL,
    instructions TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace_id, server_id, pin_hash),
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE
);

CREATE TABLE server_instructions (
    workspace_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    instructions TEXT,
    observed_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace_id, server_id),
    FOREIGN KEY (workspace_id, server_id) REFERENCES mcp_servers (workspace_id, id) ON DELETE CASCADE
);

CREATE TABLE approval_requests (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    owner_user_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    llm_call_id TEXT NOT NULL,
    server_id TEXT,
    server_name TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    arguments JSONB NOT NULL,
    description TEXT NOT NULL,
    diff JSONB,
    status TEXT NOT NULL,
    remember TEXT,
    decided_by TEXT,
    reason TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    decided_at TIMESTAMPTZ,
    FOREIGN KEY (workspace_id, conversation_id) REFERENCES conversations (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX approval_requests_by_owner ON approval_requests (workspace_id, owner_user_id, status);
CREATE INDEX approval_requests_by_conversation ON approval_requests (workspace_id, conversation_id, created_at);
CREATE INDEX approval_requests_by_status ON approval_requests (status);

CREATE TABLE elicitation_requests (
    id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    owner_user_id TEXT NOT NULL,
    tool_call_id TEXT,
    server_name TEXT NOT NULL,
    message TEXT NOT NULL,
    requested_schema JSONB NOT NULL,
    status TEXT NOT NULL,
    responded_by TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    responded_at TIMESTAMPTZ,
    FOREIGN KEY (workspace_id, conversation_id) REFERENCES conversations (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX elicitation_requests_by_owner ON elicitation_requests (workspace_id, owner_user_id, status);
CREATE INDEX elicitation_requests_by_status ON elicitation_requests (status);

ALTER TABLE audit_log ADD COLUMN user_id TEXT;
ALTER TABLE audit_log ADD COLUMN conversation_id TEXT;
ALTER TABLE audit_log ADD COLUMN server_name TEXT;
ALTER TABLE audit_log ADD COLUMN tool_name TEXT;
ALTER TABLE audit_log ADD COLUMN status TEXT;
ALTER TABLE audit_log ADD COLUMN duration_ms BIGINT;
CREATE INDEX audit_log_by_time ON audit_log (workspace_id, at);
